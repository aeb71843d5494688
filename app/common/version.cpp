#include "common/version.h"

#include <cstdio>
#include <cstring>

namespace qc::app {

const char* version() { return QWENCHAT_VERSION; }

bool print_version_if_asked(const char* name, int argc, char** argv) {
  if (argc != 2 || std::strcmp(argv[1], "--version") != 0) return false;
  std::printf("%s %s\n", name, version());
  return true;
}

}  // namespace qc::app
