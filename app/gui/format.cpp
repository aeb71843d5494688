#include "format.h"

#include <cstdio>

namespace qc::gui {
namespace {

double num(const nlohmann::json& j, const char* key, double fallback = -1) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string str(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void append(std::string& line, const std::string& part) {
  if (part.empty()) return;
  if (!line.empty()) line += " · ";
  line += part;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string format_stats_line(const nlohmann::json& s) {
  std::string line;
  if (!s.is_object()) return line;
  if (const double n = num(s, "generated_tokens"); n >= 0) append(line, fmt("%.0f tokens", n));
  if (const double r = num(s, "tok_per_s"); r > 0) append(line, fmt("%.1f tok/s", r));
  if (const double r = num(s, "prefill_tok_per_s"); r > 0) append(line, fmt("prefill %.0f tok/s", r));
  // Without a token there is no first-token time (a reply stopped during the prefill).
  if (const double t = num(s, "ttft_ms"); t >= 0 && num(s, "generated_tokens", 1) > 0)
    append(line, fmt("TTFT %.0f ms", t));
  if (const double a = num(s, "mtp_acceptance"); a >= 0) {
    std::string mtp = fmt("MTP %.2f", a);
    if (const auto it = s.find("mtp_acceptance_per_position");
        it != s.end() && it->is_array() && it->size() > 1) {
      mtp += " (";
      for (size_t k = 0; k < it->size(); ++k) {
        if ((*it)[k].is_number()) mtp += (k ? "/" : "") + fmt("%.2f", (*it)[k].get<double>());
      }
      mtp += ")";
    }
    append(line, mtp);
  }
  std::string variant = str(s, "backend");
  if (const std::string k = str(s, "kernel"); !k.empty()) variant += (variant.empty() ? "" : "/") + k;
  append(line, variant);
  if (const std::string r = str(s, "stop_reason"); !r.empty() && r != "stop_token")
    append(line, "stop: " + r);
  return line;
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000.0 && u < 4) {
    v /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return buf;
}

std::string file_stem_from_title(const std::string& title) {
  std::string out;
  for (unsigned char c : title) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (keep) {
      out += static_cast<char>(c);
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
    if (out.size() >= 60) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "conversation" : out;
}

}  // namespace qc::gui
