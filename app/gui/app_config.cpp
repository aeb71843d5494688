#include "app_config.h"
#include "qwenchat/json_depth.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace qc::gui {

Result<std::string> config_dir() {
  namespace fs = std::filesystem;
  fs::path dir;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x == '/') {
    dir = fs::path(x) / "qwenchat";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = fs::path(h) / ".config" / "qwenchat";
  } else {
    return make_error("no configuration folder: neither XDG_CONFIG_HOME nor HOME is set");
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error("cannot create the configuration folder " + dir.string() + ": " + ec.message());
  return dir.string();
}

namespace {

// The settings' backend name ("cpu", "cpu-f64", "cuda") of a backend the worker reports ("cpu-f32"...).
std::string backend_setting(const std::string& reported) {
  if (reported.rfind("cuda", 0) == 0) return "cuda";
  return reported == "cpu-f64" ? "cpu-f64" : "cpu";
}

}  // namespace

bool AppConfig::on_model_loaded(const ModelFacts& facts) {
  if (facts.remote) return false;
  add_recent(facts.path);
  backend = backend_setting(facts.backend.name);
  return true;
}

bool AppConfig::forget_if_missing(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) || ec) return false;
  const size_t before = recent_models.size();
  std::erase(recent_models, path);
  return recent_models.size() != before;
}

bool AppConfig::on_model_failure(const ModelFacts* loaded) {
  if (loaded != nullptr && loaded->remote) return false;
  const std::string b = loaded ? backend_setting(loaded->backend.name) : "cpu";
  if (b == backend) return false;
  backend = b;
  return true;
}

void AppConfig::add_recent(const std::string& path) {
  if (path.empty()) return;
  recent_models.erase(std::remove(recent_models.begin(), recent_models.end(), path), recent_models.end());
  recent_models.insert(recent_models.begin(), path);
  if (recent_models.size() > kMaxRecent) recent_models.resize(kMaxRecent);
}

AppConfig AppConfig::load(const std::string& path, std::vector<std::string>* warnings) {
  AppConfig c;
  std::ifstream in(path);
  if (!in) return c;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (Status deep = check_json_depth(text, path); !deep.ok()) {
    if (warnings) warnings->push_back(deep.error().message + "; using the default configuration");
    return c;
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    if (warnings) warnings->push_back(path + ": not a JSON object; using the default configuration");
    return c;
  }
  if (auto it = j.find("settings"); it != j.end()) c.settings = Settings::from_json(*it, warnings);
  if (auto it = j.find("recent_models"); it != j.end() && it->is_array()) {
    for (const auto& p : *it) {
      if (p.is_string() && c.recent_models.size() < kMaxRecent)
        c.recent_models.push_back(p.get<std::string>());
    }
  }
  if (auto it = j.find("backend"); it != j.end() && it->is_string()) c.backend = it->get<std::string>();
  if (auto it = j.find("use_remote"); it != j.end() && it->is_boolean()) c.use_remote = it->get<bool>();
  if (auto it = j.find("remote_url"); it != j.end() && it->is_string()) c.remote_url = it->get<std::string>();
  if (auto it = j.find("remote_model"); it != j.end() && it->is_string()) c.remote_model = it->get<std::string>();
  if (auto it = j.find("sidebar_em"); it != j.end() && it->is_number())
    c.sidebar_em = std::clamp(it->get<float>(), kMinSidebarEm, kMaxSidebarEm);
  if (auto it = j.find("inspector_em"); it != j.end() && it->is_number())
    c.inspector_em = std::clamp(it->get<float>(), kMinInspectorEm, kMaxInspectorEm);
  if (auto it = j.find("show_sidebar"); it != j.end() && it->is_boolean()) c.show_sidebar = it->get<bool>();
  if (auto it = j.find("show_inspector"); it != j.end() && it->is_boolean()) c.show_inspector = it->get<bool>();
  if (auto it = j.find("window"); it != j.end() && it->is_object()) {
    auto num = [&](const char* key, int lo, int hi, int fallback) {
      auto v = it->find(key);
      if (v == it->end() || !v->is_number()) return fallback;
      const double d = v->get<double>();
      return d < lo || d > hi ? fallback : static_cast<int>(d);
    };
    c.window_w = num("w", kMinWindowW, 32768, c.window_w);
    c.window_h = num("h", kMinWindowH, 32768, c.window_h);
    c.window_x = num("x", -32768, 32768, -1);
    c.window_y = num("y", -32768, 32768, -1);
    if (c.window_x == -1 || c.window_y == -1) c.window_x = c.window_y = -1;
  }
  return c;
}

Status AppConfig::save(const std::string& path) const {
  const nlohmann::json j = {{"settings", settings.to_json()},
                            {"recent_models", recent_models},
                            {"backend", backend},
                            {"use_remote", use_remote},
                            {"remote_url", remote_url},
                            {"remote_model", remote_model},
                            {"sidebar_em", sidebar_em},
                            {"inspector_em", inspector_em},
                            {"show_sidebar", show_sidebar},
                            {"show_inspector", show_inspector},
                            {"window", {{"x", window_x}, {"y", window_y}, {"w", window_w}, {"h", window_h}}}};
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return make_error("cannot write the configuration " + tmp);
    out << j.dump(2) << "\n";
    if (!out.flush()) return make_error("cannot write the configuration " + tmp + " (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return make_error("cannot replace the configuration " + path + ": " + ec.message());
  return {};
}

}  // namespace qc::gui
