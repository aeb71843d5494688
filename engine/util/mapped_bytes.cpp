#include "util/mapped_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace qc {

Result<MappedBytes> MappedBytes::map(const std::string& path, const std::string& expected) {
  // O_NONBLOCK: opening a FIFO by mistake must not hang; it has no effect on regular files.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    return make_error(path + ": cannot open: " + std::system_category().message(e),
                      e == ENOENT ? "check the path" : "check the file's permissions");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return make_error(path + ": cannot stat: " + std::system_category().message(e));
  }
  if (S_ISDIR(st.st_mode) || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(path + (S_ISDIR(st.st_mode) ? ": is a directory" : ": is not a regular file") +
                      ", expected " + expected);
  }
  MappedBytes b;
  b.size_ = static_cast<uint64_t>(st.st_size);
  if (b.size_ > 0) {
    // MAP_PRIVATE + PROT_READ: the engine never writes a model; pages stay shared with the page cache.
    // If another process truncates the file while it is mapped, touching the lost pages raises SIGBUS:
    // that cannot be validated away and is the one failure mode left to the OS.
    void* m = ::mmap(nullptr, static_cast<size_t>(b.size_), PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      return make_error(path + ": cannot map " + std::to_string(b.size_) +
                        " bytes: " + std::system_category().message(e));
    }
    b.map_ = m;
    b.data_ = static_cast<const uint8_t*>(m);
  }
  ::close(fd);  // the mapping keeps its own reference
  return b;
}

MappedBytes MappedBytes::copy(std::span<const uint8_t> bytes) {
  MappedBytes b;
  b.owned_.assign(bytes.begin(), bytes.end());
  b.data_ = b.owned_.data();
  b.size_ = b.owned_.size();
  return b;
}

MappedBytes::MappedBytes(MappedBytes&& o) noexcept { *this = std::move(o); }

MappedBytes& MappedBytes::operator=(MappedBytes&& o) noexcept {
  if (this != &o) {
    release();
    // A vector's move keeps its buffer, so data_ stays valid for an owned copy too.
    owned_ = std::move(o.owned_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    map_ = std::exchange(o.map_, nullptr);
  }
  return *this;
}

MappedBytes::~MappedBytes() { release(); }

void MappedBytes::release() {
  if (map_) ::munmap(map_, static_cast<size_t>(size_));
  map_ = nullptr;
  data_ = nullptr;
  size_ = 0;
  owned_.clear();
}

}  // namespace qc
