#include "format.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>

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

std::string format_date(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
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

ReplyPlaceholder reply_placeholder(const std::string& state, const std::string& content,
                                   const std::string& thinking, const nlohmann::json& stats) {
  ReplyPlaceholder p;
  const bool blank = content.find_first_not_of(" \t\r\n") == std::string::npos;
  if (!blank) return p;
  char buf[128];
  if (state == "streaming") {
    if (!content.empty()) {
      std::snprintf(buf, sizeof buf, "writing… (%zu character%s of white space so far)", content.size(),
                    content.size() == 1 ? "" : "s");
      p.text = buf;
    } else if (!thinking.empty()) {
      p.text = "thinking…";
    } else {
      p.text = "waiting for the first token…";
    }
    return p;
  }
  if (state == "error") return p;  // the error line says it
  if (!thinking.empty()) {
    const std::string stop = stats.is_object() ? str(stats, "stop_reason") : std::string();
    p.warning = true;
    if (stop == "max_tokens") {
      p.text = "no answer: ran out of tokens while thinking";
      p.advice = "raise Max tokens in Settings (or turn Thinking off) and regenerate";
    } else if (state == "stopped") {
      p.text = "no answer: stopped while thinking";
      p.advice = "Regenerate writes a new reply";
    } else {
      p.text = "no answer: the reply ended while thinking" + (stop.empty() ? "" : " (stop: " + stop + ")");
      p.advice = "Regenerate writes a new reply";
    }
    return p;
  }
  if (!content.empty()) {
    std::snprintf(buf, sizeof buf, "(%zu character%s of white space only)", content.size(),
                  content.size() == 1 ? "" : "s");
    p.text = buf;
  } else if (state == "complete") {
    p.text = "(empty reply)";
  }
  return p;
}

std::vector<std::pair<size_t, size_t>> match_ranges(std::string_view text, std::string_view query) {
  std::vector<std::pair<size_t, size_t>> out;
  if (query.empty() || query.size() > text.size()) return out;
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (size_t i = 0; i + query.size() <= text.size();) {
    size_t k = 0;
    while (k < query.size() && lower(text[i + k]) == lower(query[k])) ++k;
    if (k == query.size()) {
      out.emplace_back(i, query.size());
      i += query.size();
    } else {
      ++i;
    }
  }
  return out;
}

std::string export_folder_problem(const std::string& folder) {
  if (folder.empty()) return "choose a folder";
  std::error_code ec;
  const auto st = std::filesystem::status(folder, ec);
  if (!std::filesystem::exists(st)) return "no such folder";
  if (!std::filesystem::is_directory(st)) return "not a folder";
  if (::access(folder.c_str(), W_OK) != 0) return "this folder cannot be written";
  return {};
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
