// `export` and `import`: conversations out of / into the app's SQLite store.
//   qwenchat-cli export [--db PATH] (--conversation ID | --all) --format md|json|txt [--branch current|all]
//   [--out PATH] qwenchat-cli import [--db PATH] --in FILE
// Export opens the database read-only (safe while the app runs: WAL lets readers in) and writes to
// stdout, or to --out atomically (PATH.partial, then rename). Import adds each conversation with a new id;
// beside a running app it leaves that app's reply in progress alone (exporter::import_json_into).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "commands.h"
#include "export/export.h"
#include "store/store.h"

namespace qc::cli {
namespace {

Result<std::string> db_path(const app::Args& args) {
  if (auto db = args.get("db")) return *db;
  return store::default_db_path();
}

Result<chat::ConversationId> parse_id(const std::string& s) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v <= 0) {
    return make_error("--conversation: expected a positive conversation id, got \"" + s + "\"");
  }
  return static_cast<chat::ConversationId>(v);
}

}  // namespace

Status cmd_export(int argc, char** argv) {
  bool help = false;
  QC_ASSIGN(app::Args args,
            parse_or_help(argc, argv,
                          "qwenchat-cli export [--db PATH] (--conversation ID | --all) --format md|json|txt "
                          "[--branch current|all] [--out PATH]",
                          {{"db", true, "the database (default: $XDG_DATA_HOME/qwenchat/qwenchat.db)"},
                           {"conversation", true, "the id of the conversation to export"},
                           {"all", false, "export every conversation, most recent first"},
                           {"format", true, "md (Markdown), json (everything, re-importable) or txt"},
                           {"branch", true, "current (default: the selected branch) or all (the whole tree)"},
                           {"out", true, "output file, written atomically (default: stdout)"}},
                          &help));
  if (help) return {};
  if (args.has("conversation") == args.has("all")) {
    return make_error("give exactly one of --conversation ID or --all");
  }
  exporter::ExportOptions options;
  QC_ASSIGN(const std::string format, args.require("format"));
  QC_ASSIGN(options.format, exporter::parse_format(format));
  QC_ASSIGN(options.branches, exporter::parse_branches(args.get_or("branch", "current")));
  std::vector<chat::ConversationId> ids;
  if (auto c = args.get("conversation")) {
    QC_ASSIGN(const chat::ConversationId id, parse_id(*c));
    ids.push_back(id);
  }
  QC_ASSIGN(const std::string path, db_path(args));
  QC_ASSIGN(store::Store st, store::Store::open(path, {.read_only = true}));
  QC_ASSIGN(const std::string text, exporter::export_from_store(st, ids, options));
  if (auto out = args.get("out")) return exporter::write_file_atomic(*out, text);
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    return make_error("stdout: write failed");
  }
  return {};
}

Status cmd_import(int argc, char** argv) {
  bool help = false;
  QC_ASSIGN(app::Args args,
            parse_or_help(argc, argv, "qwenchat-cli import [--db PATH] --in FILE",
                          {{"db", true,
                            "the database (created when missing; default: "
                            "$XDG_DATA_HOME/qwenchat/qwenchat.db)"},
                           {"in", true, "a JSON file written by qwenchat-cli export --format json"}},
                          &help));
  if (help) return {};
  QC_ASSIGN(const std::string in, args.require("in"));
  std::ifstream f(in, std::ios::binary);
  if (!f) return make_error(in + ": cannot open the input file");
  std::stringstream ss;
  ss << f.rdbuf();
  // Parse before opening the store, so a bad file never creates an empty database.
  auto parsed = exporter::parse_export_json(ss.str());
  if (!parsed.ok()) return make_error(in + ": " + parsed.error().message, parsed.error().hint);
  QC_ASSIGN(const std::string path, db_path(args));
  QC_ASSIGN(const std::vector<chat::ConversationId> ids, exporter::import_json_into(path, ss.str()));
  std::printf("imported %zu conversation%s into %s:", ids.size(), ids.size() == 1 ? "" : "s", path.c_str());
  for (chat::ConversationId id : ids) std::printf(" %lld", static_cast<long long>(id));
  std::printf("\n");
  return {};
}

}  // namespace qc::cli
