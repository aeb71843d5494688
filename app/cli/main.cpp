// qwenchat-cli: the engine from a terminal. Bad input exits non-zero with one clear line on stderr.
#include <cstdio>
#include <cstring>

#include "commands.h"
#include "common/version.h"

namespace {

void usage(FILE* to) {
  std::fprintf(to,
               "usage: qwenchat-cli COMMAND [options]   (COMMAND --help for its options)\n"
               "  info       what a model file holds\n"
               "  generate   generate text from a prompt\n"
               "  chat       interactive chat in the terminal\n"
               "  tokenize   token ids of a text as JSON\n"
               "  logits     float32 logits and hidden states of a token sequence\n"
               "  export     conversations from the app's database to Markdown, JSON or text\n"
               "  import     conversations from a JSON export into the app's database\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (qc::app::print_version_if_asked("qwenchat-cli", argc, argv)) return 0;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);  // asked for: stdout (help2man reads it); missing command: stderr
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  qc::Status s;
  if (cmd == "info") {
    s = qc::cli::cmd_info(argc, argv);
  } else if (cmd == "generate") {
    s = qc::cli::cmd_generate(argc, argv);
  } else if (cmd == "chat") {
    s = qc::cli::cmd_chat(argc, argv);
  } else if (cmd == "tokenize") {
    s = qc::cli::cmd_tokenize(argc, argv);
  } else if (cmd == "logits") {
    s = qc::cli::cmd_logits(argc, argv);
  } else if (cmd == "export") {
    s = qc::cli::cmd_export(argc, argv);
  } else if (cmd == "import") {
    s = qc::cli::cmd_import(argc, argv);
  } else {
    std::fprintf(stderr, "qwenchat-cli: unknown command \"%s\" (qwenchat-cli --help lists them)\n", cmd.c_str());
    return 2;
  }
  if (!s.ok()) {
    std::fprintf(stderr, "qwenchat-cli %s: %s\n", cmd.c_str(), s.error().describe().c_str());
    return 1;
  }
  return 0;
}
