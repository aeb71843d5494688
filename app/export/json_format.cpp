// The JSON export format, version 1 (see export.h), and its validating parser.
#include <set>

#include "export/export_internal.h"
#include "qwenchat/json_depth.h"

namespace qc::exporter {

namespace {

nlohmann::ordered_json message_json(const chat::Message& m, chat::MessageId selected_child) {
  nlohmann::ordered_json j;
  j["id"] = m.id;
  j["parent_id"] = m.parent_id;
  j["role"] = chat::role_name(m.role);
  j["state"] = chat::state_name(m.state);
  j["created_ms"] = m.created_ms;
  j["updated_ms"] = m.updated_ms;
  j["model"] = m.model;
  j["settings"] = m.settings.is_null() ? nlohmann::json::object() : m.settings;
  j["stats"] = m.stats.is_null() ? nlohmann::json::object() : m.stats;
  j["error"] = m.error;
  j["selected_child"] = selected_child;
  j["thinking"] = m.thinking;
  j["content"] = m.content;
  return j;
}

}  // namespace

nlohmann::ordered_json to_json(const std::vector<chat::ChatTree>& trees, Branches branches) {
  nlohmann::ordered_json doc;
  doc["format"] = kFormatName;
  doc["version"] = kFormatVersion;
  doc["branches"] = branches == Branches::kAll ? "all" : "current";
  doc["conversations"] = nlohmann::ordered_json::array();
  for (const chat::ChatTree& tree : trees) {
    const chat::Conversation& c = tree.conversation;
    const std::vector<chat::MessageId> order = detail::export_order(tree, branches);
    nlohmann::ordered_json cj;
    cj["id"] = c.id;
    cj["title"] = c.title;
    cj["created_ms"] = c.created_ms;
    cj["updated_ms"] = c.updated_ms;
    cj["model_path"] = c.model_path;
    cj["settings"] = c.settings.is_null() ? nlohmann::json::object() : c.settings;
    cj["system_prompt"] = c.system_prompt;
    // A current-branch export is a tree of one path: its selections are that path (the leaf's is 0).
    const bool current = branches == Branches::kCurrent;
    cj["selected_root"] = current ? (order.empty() ? 0 : order.front()) : c.selected_root;
    cj["messages"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < order.size(); ++i) {
      const chat::Message& m = *chat::find(tree, order[i]);
      const chat::MessageId sel = current ? (i + 1 < order.size() ? order[i + 1] : 0) : m.selected_child;
      cj["messages"].push_back(message_json(m, sel));
    }
    // Messages no root reaches (a damaged database) are kept apart: "messages" stays a tree that
    // imports. Present only when there are some (the key is ignored by import, which takes the tree).
    if (!current) {
      const std::vector<chat::MessageId> lost = detail::unreachable(tree);
      if (!lost.empty()) {
        cj["unreachable_messages"] = nlohmann::ordered_json::array();
        for (chat::MessageId id : lost) {
          const chat::Message& m = *chat::find(tree, id);
          cj["unreachable_messages"].push_back(message_json(m, m.selected_child));
        }
      }
    }
    doc["conversations"].push_back(std::move(cj));
  }
  return doc;
}

// ---- parsing ----
namespace {

// Ids up to 2^53 (exact in every JSON reader, JavaScript's included) leave room for new ids after them;
// timestamps are milliseconds since 1970 up to the end of year 9999 (what a date can print).
constexpr int64_t kMaxId = int64_t{1} << 53;
constexpr int64_t kMaxMs = 253402300799999;

// Field readers: a missing optional field keeps the default; a present field of the wrong type is an
// error naming its path.
class Reader {
 public:
  Reader(const nlohmann::json& obj, std::string path) : obj_(obj), path_(std::move(path)) {}

  Status require(const char* key) const {
    if (!obj_.contains(key)) return make_error(path_ + "." + key + ": missing");
    return {};
  }
  Status str(const char* key, std::string* out) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) return {};
    if (!it->is_string()) return type_error(key, "a string", *it);
    *out = it->get<std::string>();
    return {};
  }
  // An integer in [lo, hi]. A value above INT64_MAX is refused here, not wrapped (2^64-1 once became -1).
  Status integer(const char* key, int64_t* out, int64_t lo, int64_t hi) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) return {};
    if (!it->is_number_integer()) return type_error(key, "an integer", *it);
    const bool too_big = it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(hi);
    const int64_t v = too_big ? hi : it->get<int64_t>();
    if (too_big || v < lo || v > hi)
      return make_error(path(key) + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                        "], got " + it->dump());
    *out = v;
    return {};
  }
  Status object(const char* key, nlohmann::json* out) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) return {};
    if (!it->is_object()) return type_error(key, "an object", *it);
    *out = *it;
    return {};
  }
  std::string path(const char* key) const { return path_ + "." + key; }

 private:
  Error type_error(const char* key, const char* expected, const nlohmann::json& got) const {
    return make_error(path(key) + ": expected " + expected + ", got " + got.type_name());
  }
  const nlohmann::json& obj_;
  std::string path_;
};

Result<chat::Message> parse_message(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) return make_error(path + ": expected an object, got " + std::string(j.type_name()));
  const Reader r(j, path);
  chat::Message m;
  QC_TRY(r.require("id"));
  QC_TRY(r.require("role"));
  QC_TRY(r.integer("id", &m.id, 1, kMaxId));
  QC_TRY(r.integer("parent_id", &m.parent_id, 0, kMaxId));
  std::string role, state = "complete";
  QC_TRY(r.str("role", &role));
  auto parsed_role = chat::parse_role(role);
  if (!parsed_role.ok()) return make_error(path + "." + parsed_role.error().message);
  m.role = *parsed_role;
  QC_TRY(r.str("state", &state));
  auto parsed_state = chat::parse_state(state);
  if (!parsed_state.ok()) return make_error(path + "." + parsed_state.error().message);
  m.state = *parsed_state;
  QC_TRY(r.integer("created_ms", &m.created_ms, 0, kMaxMs));
  QC_TRY(r.integer("updated_ms", &m.updated_ms, 0, kMaxMs));
  QC_TRY(r.str("model", &m.model));
  QC_TRY(r.object("settings", &m.settings));
  QC_TRY(r.object("stats", &m.stats));
  QC_TRY(r.str("error", &m.error));
  QC_TRY(r.integer("selected_child", &m.selected_child, 0, kMaxId));
  QC_TRY(r.str("thinking", &m.thinking));
  QC_TRY(r.str("content", &m.content));
  return m;
}

Result<chat::ChatTree> parse_conversation(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) return make_error(path + ": expected an object, got " + std::string(j.type_name()));
  const Reader r(j, path);
  chat::ChatTree tree;
  chat::Conversation& c = tree.conversation;
  QC_TRY(r.require("messages"));
  QC_TRY(r.integer("id", &c.id, 0, kMaxId));
  QC_TRY(r.str("title", &c.title));
  QC_TRY(r.integer("created_ms", &c.created_ms, 0, kMaxMs));
  QC_TRY(r.integer("updated_ms", &c.updated_ms, 0, kMaxMs));
  QC_TRY(r.str("model_path", &c.model_path));
  QC_TRY(r.object("settings", &c.settings));
  QC_TRY(r.str("system_prompt", &c.system_prompt));
  QC_TRY(r.integer("selected_root", &c.selected_root, 0, kMaxId));
  const nlohmann::json& msgs = j["messages"];
  if (!msgs.is_array())
    return make_error(r.path("messages") + ": expected an array, got " + std::string(msgs.type_name()));
  std::set<chat::MessageId> ids;
  for (size_t i = 0; i < msgs.size(); ++i) {
    const std::string mpath = r.path("messages") + "[" + std::to_string(i) + "]";
    QC_ASSIGN(chat::Message m, parse_message(msgs[i], mpath));
    if (!ids.insert(m.id).second)
      return make_error(mpath + ".id: message " + std::to_string(m.id) + " appears twice");
    tree.messages.push_back(std::move(m));
  }
  for (size_t i = 0; i < tree.messages.size(); ++i) {
    const chat::Message& m = tree.messages[i];
    if (m.parent_id != 0 && ids.count(m.parent_id) == 0) {
      return make_error(r.path("messages") + "[" + std::to_string(i) + "].parent_id: message " +
                        std::to_string(m.parent_id) + " is not in the conversation");
    }
  }
  std::sort(tree.messages.begin(), tree.messages.end(),
            [](const chat::Message& a, const chat::Message& b) { return a.id < b.id; });
  tree.next_id = tree.messages.empty() ? 1 : tree.messages.back().id + 1;
  // Every parent exists, so a message unreachable from a root sits on a cycle.
  size_t reachable = 0;
  for (chat::MessageId root : chat::children(tree, 0)) reachable += chat::subtree(tree, root).size();
  if (reachable != tree.messages.size()) {
    return make_error(r.path("messages") + ": parent links form a cycle (" +
                      std::to_string(tree.messages.size() - reachable) +
                      " messages unreachable from a root)");
  }
  return tree;
}

}  // namespace

Result<std::vector<chat::ChatTree>> parse_export_json(std::string_view text) {
  nlohmann::json doc;
  try {
    if (Status deep = check_json_depth(text, "the import"); !deep.ok()) return deep.error();
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // parse_error for bad syntax, out_of_range for a number too big for a double ("1E400"): both mean
    // the file is not something we can import (found by tests/store/import_fuzz).
    return make_error(std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object())
    return make_error(std::string("expected a JSON object at the top, got ") + doc.type_name());
  const auto fmt = doc.find("format");
  if (fmt == doc.end() || !fmt->is_string() || fmt->get<std::string>() != kFormatName) {
    return make_error(std::string("format: expected \"") + kFormatName + "\", got " +
                      (fmt == doc.end() ? std::string("nothing") : fmt->dump()));
  }
  const auto ver = doc.find("version");
  if (ver == doc.end() || !ver->is_number_integer() || ver->get<int64_t>() != kFormatVersion) {
    return make_error("version: expected " + std::to_string(kFormatVersion) + ", got " +
                          (ver == doc.end() ? std::string("nothing") : ver->dump()),
                      "a newer qwenchat wrote it; import it there");
  }
  const auto convs = doc.find("conversations");
  if (convs == doc.end() || !convs->is_array()) return make_error("conversations: expected an array");
  std::vector<chat::ChatTree> out;
  for (size_t i = 0; i < convs->size(); ++i) {
    QC_ASSIGN(chat::ChatTree tree,
              parse_conversation((*convs)[i], "conversations[" + std::to_string(i) + "]"));
    out.push_back(std::move(tree));
  }
  return out;
}

}  // namespace qc::exporter
