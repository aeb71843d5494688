#include "common/default_model.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace qc::app {

Result<std::string> default_model_path() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("QWENCHAT_DEFAULT_MODEL"); env && *env) return std::string(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) {
    const fs::path dir = exe.parent_path();
    candidates = {dir / "../assets" / kDefaultModelFile, dir / "../../assets" / kDefaultModelFile,
                  dir / "../share/qwenchat" / kDefaultModelFile};
  }
  for (const fs::path& p : candidates) {
    if (fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
  }
  return make_error("the default model (" + std::string(kDefaultModelFile) + ") was not found next to the program",
                    "choose a .gguf file, or build the assets target");
}

}  // namespace qc::app
