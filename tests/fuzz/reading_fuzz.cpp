// libFuzzer target for the chat view's text scanners, which read whatever a model writes: the syntax
// highlighter (app/gui/highlight.h, every language) and the LaTeX finder and converter
// (app/gui/latex_text.h). Properties: no crash, hang or sanitizer report on any bytes; highlight spans
// are sorted, non-empty, non-overlapping and inside the code; math regions are ordered, inside the text,
// bodies inside their delimiters; the converted text stays within a constant factor of its source.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "highlight.h"
#include "latex_text.h"

namespace {

void check_spans(std::string_view code, qc::gui::hl::Lang lang) {
  uint32_t last = 0;
  for (const qc::gui::hl::Span& s : qc::gui::hl::highlight(code, lang)) {
    if (s.begin >= s.end || s.begin < last || s.end > code.size()) std::abort();
    last = s.end;
  }
}

void check_math(std::string_view text) {
  size_t last = 0;
  for (const qc::gui::tex::MathRegion& r : qc::gui::tex::find_math(text)) {
    if (r.begin < last || r.begin > r.body_begin || r.body_begin > r.body_end || r.body_end > r.end ||
        r.end > text.size())
      std::abort();
    last = r.end;
    const std::string_view body = text.substr(r.body_begin, r.body_end - r.body_begin);
    if (qc::gui::tex::to_unicode(body).size() > 8 * body.size() + 64) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using qc::gui::hl::Lang;
  for (Lang lang : {Lang::kGeneric, Lang::kC, Lang::kCpp, Lang::kPython, Lang::kJavaScript, Lang::kRust,
                    Lang::kGo, Lang::kJava, Lang::kShell, Lang::kJson, Lang::kSql, Lang::kYaml})
    check_spans(text, lang);
  check_math(text);
  if (qc::gui::tex::to_unicode(text).size() > 8 * text.size() + 64) std::abort();
  (void)qc::gui::hl::lang_from_label(text.substr(0, 64));
  return 0;
}
