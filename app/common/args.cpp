#include "common/args.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "common/version.h"

namespace qc::app {

Result<Args> Args::parse(int argc, char** argv, int first, const std::vector<OptionSpec>& specs) {
  Args a;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      a.positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> inline_value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (!spec) return make_error("unknown option --" + name, "see --help");
    if (a.values_.count(name)) return make_error("option --" + name + " given twice");
    if (!spec->takes_value) {
      if (inline_value) return make_error("option --" + name + " takes no value");
      a.values_[name] = "1";
      continue;
    }
    if (inline_value) {
      a.values_[name] = *inline_value;
    } else if (i + 1 < argc) {
      a.values_[name] = argv[++i];
    } else {
      return make_error("option --" + name + " needs a value");
    }
  }
  return a;
}

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Args::get_or(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

Result<std::string> Args::require(const std::string& name) const {
  if (auto v = get(name)) return *v;
  return make_error("missing required option --" + name);
}

Result<long long> Args::get_int(const std::string& name, long long fallback, long long lo,
                                long long hi) const {
  auto v = get(name);
  if (!v) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v->c_str(), &end, 10);
  if (errno != 0 || end == v->c_str() || *end != '\0') {
    return make_error("--" + name + ": expected an integer, got \"" + *v + "\"");
  }
  if (x < lo || x > hi) {
    return make_error("--" + name + ": expected " + std::to_string(lo) + ".." + std::to_string(hi) +
                      ", got " + *v);
  }
  return x;
}

Result<uint64_t> Args::get_gib(const std::string& name, double lo, double hi) const {
  if (!get(name)) return uint64_t{0};
  QC_ASSIGN(const double gib, get_double(name, lo, lo, hi));
  return static_cast<uint64_t>(gib * 1073741824.0);
}

Result<double> Args::get_double(const std::string& name, double fallback, double lo, double hi) const {
  auto v = get(name);
  if (!v) return fallback;
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(v->c_str(), &end);
  if (errno != 0 || end == v->c_str() || *end != '\0') {
    return make_error("--" + name + ": expected a number, got \"" + *v + "\"");
  }
  if (!(x >= lo && x <= hi)) {
    return make_error("--" + name + ": expected a number in [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "], got " + *v);
  }
  return x;
}

std::string Args::usage(const std::vector<OptionSpec>& specs) {
  std::string s;
  for (const OptionSpec& o : specs) {
    s += "  --" + o.name + (o.takes_value ? " VALUE" : "") + "\n      " + o.help + "\n";
  }
  return s;
}

int run_tool(const char* name, const char* usage, const std::vector<OptionSpec>& specs, int argc, char** argv,
             const std::function<Status(const Args&)>& body) {
  if (print_version_if_asked(name, argc, argv)) return 0;
  auto args = Args::parse(argc, argv, 1, specs);
  if (!args.ok()) {
    std::fprintf(stderr, "%s: %s\n", name, args.error().describe().c_str());
    return 2;
  }
  if (args->has("help")) {
    std::printf("usage: %s\n%s", usage, Args::usage(specs).c_str());
    return 0;
  }
  const Status s = body(*args);
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", name, s.error().describe().c_str());
    return 1;
  }
  return 0;
}

}  // namespace qc::app
