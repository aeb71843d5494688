// Import into a store, export from a store, atomic file writes (see export.h).
#include "export/export.h"

#include <unistd.h>

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

Status write_file_atomic(const std::string& path, std::string_view data) {
  const std::string partial = path + ".partial";
  std::FILE* f = std::fopen(partial.c_str(), "wb");
  if (f == nullptr) return make_error(partial + ": cannot create: " + std::strerror(errno));
  bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  int err = ok ? 0 : errno;
  // fsync before rename: otherwise a crash right after could leave an empty file under the final name.
  if (ok && (std::fflush(f) != 0 || ::fsync(fileno(f)) != 0)) {
    ok = false;
    err = errno;
  }
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && std::rename(partial.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    std::remove(partial.c_str());
    return make_error(path + ": cannot write: " + std::strerror(err));
  }
  return {};
}

}  // namespace qc::exporter
