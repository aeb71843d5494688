// libFuzzer target for the JSON import parser (outside input: any file a user hands to
// `qwenchat-cli import`). Properties: parse_export_json never crashes or throws on any bytes; a document
// it accepts exports again (whole tree) to a document it accepts, and that one is a fixed point of
// export(parse(.)) (ids, links and text survive unchanged).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "export/export.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto trees = qc::exporter::parse_export_json(text);
  if (!trees.ok()) return 0;
  const qc::exporter::ExportOptions all{qc::exporter::Format::kJson, qc::exporter::Branches::kAll};
  const std::string once = qc::exporter::export_trees(*trees, all);
  auto again = qc::exporter::parse_export_json(once);
  if (!again.ok()) std::abort();  // we wrote something we cannot read back
  if (qc::exporter::export_trees(*again, all) != once) std::abort();
  // The other renderers must cope with whatever was accepted.
  (void)qc::exporter::export_trees(*trees, {qc::exporter::Format::kMarkdown, qc::exporter::Branches::kAll});
  (void)qc::exporter::export_trees(*trees, {qc::exporter::Format::kText, qc::exporter::Branches::kCurrent});
  return 0;
}
