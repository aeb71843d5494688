// Import into a store, export from a store, atomic file writes (see export.h).
#include "export/export.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "export/export_internal.h"

namespace qc::exporter {

Result<std::vector<chat::ConversationId>> import_json(store::Store& store, std::string_view text) {
  QC_ASSIGN(const std::vector<chat::ChatTree> trees, parse_export_json(text));
  std::vector<chat::ConversationId> ids;
  for (const chat::ChatTree& tree : trees) {
    auto id = store.insert_tree(tree);
    if (!id.ok()) {
      return make_error(id.error().message + " (after importing " + std::to_string(ids.size()) + " of " +
                        std::to_string(trees.size()) + " conversations)");
    }
    ids.push_back(*id);
  }
  return ids;
}

Result<std::vector<chat::ConversationId>> import_json_into(const std::string& db_path,
                                                           std::string_view text) {
  if (auto parsed = parse_export_json(text); !parsed.ok()) return parsed.error();  // before creating the file
  QC_ASSIGN(store::Store st, store::Store::open(db_path));
  return import_json(st, text);
}

Result<std::string> export_from_store(const store::Store& store, const std::vector<chat::ConversationId>& ids,
                                      const ExportOptions& options) {
  std::vector<chat::ConversationId> which = ids;
  if (which.empty()) {
    QC_ASSIGN(which, store.conversation_ids());
  }
  std::vector<chat::ChatTree> trees;
  for (chat::ConversationId id : which) {
    QC_ASSIGN(chat::ChatTree tree, store.load_conversation(id));
    trees.push_back(std::move(tree));
  }
  return export_trees(trees, options);
}

namespace {

// "the folder /a/b" for messages: where the temporary file was to be made.
std::string folder_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return "the current folder";
  return "the folder " + (slash == 0 ? std::string("/") : path.substr(0, slash));
}

}  // namespace

Status write_file_atomic(const std::string& path, std::string_view data) {
  // The temporary file sits in the destination's folder (a rename never crosses file systems), under a
  // name no other export uses at the same time; nothing is written anywhere else.
  static std::atomic<unsigned> counter{0};
  const std::string partial =
      path + ".partial-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    return make_error("export to " + path + " failed: cannot create a file in " + folder_of(path) + ": " +
                          std::strerror(err),
                      err == EROFS    ? "the folder is on a read-only file system: choose another place"
                      : err == EACCES ? "the folder is not writable: choose another place"
                                      : "choose another place");
  }
  int err = 0;
  for (size_t done = 0; done < data.size() && err == 0;) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
  }
  // fsync before rename: otherwise a crash right after could leave an empty file under the final name.
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(partial.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(partial.c_str());
    return make_error("export to " + path + " failed: " + std::strerror(err) + "; " + path +
                          " was left as it was (nothing was written to it)",
                      err == ENOSPC || err == EFBIG || err == EDQUOT
                          ? "free some disk space, or choose another place"
                          : "choose another place");
  }
  return {};
}

}  // namespace qc::exporter
