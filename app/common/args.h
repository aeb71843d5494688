// A small command-line parser shared by the executables: `--name value` and `--flag` options, validated
// up front with one clear line per mistake (no exceptions, no exit inside).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "qwenchat/result.h"

namespace qc::app {

struct OptionSpec {
  std::string name;  // without dashes
  bool takes_value = true;
  std::string help;
};

class Args {
 public:
  // Parses argv[first..]; unknown options, missing values and repeated options are errors.
  static Result<Args> parse(int argc, char** argv, int first, const std::vector<OptionSpec>& specs);

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  Result<std::string> require(const std::string& name) const;
  Result<long long> get_int(const std::string& name, long long fallback, long long lo, long long hi) const;
  Result<double> get_double(const std::string& name, double fallback, double lo, double hi) const;
  // --name GIB as bytes (a GiB is 2^30 bytes), in [lo, hi] GiB; 0 when absent.
  Result<uint64_t> get_gib(const std::string& name, double lo, double hi) const;
  const std::vector<std::string>& positional() const { return positional_; }

  static std::string usage(const std::vector<OptionSpec>& specs);

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

// The main() of a one-command tool: parses the options, prints `usage` plus the option list for --help,
// runs `body` and reports its error as "NAME: message". Exit status: 0 done, 1 failed, 2 bad arguments.
int run_tool(const char* name, const char* usage, const std::vector<OptionSpec>& specs, int argc, char** argv,
             const std::function<Status(const Args&)>& body);

}  // namespace qc::app
