#include "util/read_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace qc {

Result<std::string> read_whole_file(const std::string& path, const std::string& hint) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return make_error(path + ": cannot open the file" + (err ? std::string(": ") + std::strerror(err) : ""),
                      hint);
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return make_error(path + ": read error");
  return buf.str();
}

}  // namespace qc
