// Format names and the export dispatch (see export.h); no store here, so the import fuzzer links it alone.
#include "export/export_internal.h"

namespace qc::exporter {

Result<Format> parse_format(std::string_view s) {
  if (s == "md" || s == "markdown") return Format::kMarkdown;
  if (s == "json") return Format::kJson;
  if (s == "txt" || s == "text") return Format::kText;
  return make_error("format: expected md, json or txt, got \"" + std::string(s) + "\"");
}

const char* format_extension(Format f) {
  switch (f) {
    case Format::kMarkdown:
      return "md";
    case Format::kJson:
      return "json";
    case Format::kText:
      return "txt";
  }
  return "txt";
}

Result<Branches> parse_branches(std::string_view s) {
  if (s == "current") return Branches::kCurrent;
  if (s == "all") return Branches::kAll;
  return make_error("branch: expected current or all, got \"" + std::string(s) + "\"");
}

std::string export_trees(const std::vector<chat::ChatTree>& trees, const ExportOptions& options) {
  switch (options.format) {
    case Format::kMarkdown:
      return detail::render_markdown(trees, options.branches);
    case Format::kText:
      return detail::render_text(trees, options.branches);
    case Format::kJson:
      return to_json(trees, options.branches).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
             "\n";
  }
  return {};
}

}  // namespace qc::exporter
