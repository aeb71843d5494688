#include "markdown_view.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cfloat>
#include <string_view>

#include "code_view.h"
#include "widgets.h"

namespace qc::gui {
namespace {

size_t utf8_len(unsigned char c) {
  return c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
}

// Width from the cursor to the right edge: the window's content edge, or the text wrap position when one
// is pushed (the message view pushes one to keep text inside its padded box).
float avail_width() {
  const ImGuiWindow* w = ImGui::GetCurrentWindowRead();
  float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
  if (w->DC.TextWrapPos > 0.0f) right = std::min(right, w->Pos.x - w->Scroll.x + w->DC.TextWrapPos);
  return std::max(right - ImGui::GetCursorScreenPos().x, 1.0f);
}

float text_width(ImFont* f, std::string_view s) {
  return f->CalcTextSizeA(f->FontSize, FLT_MAX, 0.0f, s.data(), s.data() + s.size()).x;
}

ImFont* span_font(const Fonts& fonts, ImFont* base, uint8_t style) {
  if (style & md::kMath) return base;  // DejaVu Sans: more math symbols than the mono face
  if (style & md::kCode) return fonts.mono;
  if (base != fonts.regular) return base;  // headings keep their face
  if (style & md::kStrong) return fonts.bold;
  if (style & md::kEmphasis) return fonts.italic;
  return fonts.regular;
}

// Lays out and draws spans as wrapped text starting at the cursor; reserves the space with a Dummy.
class Flow {
 public:
  Flow(const MarkdownStyle& st, ImFont* base) : st_(st), base_(base) {
    origin_ = ImGui::GetCursorScreenPos();
    right_ = origin_.x + std::max(avail_width(), base->FontSize * 4);
    x_ = origin_.x;
    y_ = origin_.y;
    line_h_ = base->FontSize * 1.25f;
    dl_ = ImGui::GetWindowDrawList();
  }

  void spans(const std::vector<md::Span>& list) {
    for (size_t i = 0; i < list.size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      span(list[i]);
      ImGui::PopID();
    }
  }

  void finish() {
    ImGui::SetCursorScreenPos(origin_);
    // After a display formula the line below it is empty: not reserved.
    const float h = (broke_after_display_ && x_ == origin_.x) ? y_ - origin_.y : y_ + line_h_ - origin_.y;
    ImGui::Dummy(ImVec2(right_ - origin_.x, std::max(h, line_h_)));
  }

 private:
  void newline() {
    x_ = origin_.x;
    y_ += line_h_;
  }

  void span(const md::Span& s) {
    if (s.text == "\n") {
      newline();
      return;
    }
    ImFont* f = span_font(*st_.fonts, base_, s.style);
    ImVec4 col = st_.text_color;
    if (s.style & md::kLink) col = st_.theme->link;
    if (s.style & md::kCode) col = st_.theme->code_text;
    if (s.style & md::kMath) col = math_color(*st_.theme);
    const ImU32 c = ImGui::GetColorU32(col);
    broke_after_display_ = false;
    if (s.style & md::kMathDisplay) {  // centred on a line of its own
      if (x_ > origin_.x) newline();
      const float w = text_width(f, s.text);
      if (w < right_ - origin_.x) x_ = origin_.x + (right_ - origin_.x - w) * 0.5f;
    }
    std::string_view t = s.text;
    size_t i = 0;
    while (i < t.size()) {
      // A word and the spaces after it.
      size_t j = i;
      while (j < t.size() && t[j] != ' ') ++j;
      while (j < t.size() && t[j] == ' ') ++j;
      std::string_view word = t.substr(i, j - i);
      i = j;
      piece(f, word, c, s);
    }
    if (s.style & md::kMathDisplay) {
      newline();
      broke_after_display_ = true;
    }
  }

  void piece(ImFont* f, std::string_view word, ImU32 c, const md::Span& s) {
    const float w = text_width(f, word);
    const float width = right_ - origin_.x;
    if (x_ + w > right_ && x_ > origin_.x) {
      newline();
      while (!word.empty() && word.front() == ' ') word.remove_prefix(1);
      if (word.empty()) return;
    }
    if (w > width) {  // longer than a line (URLs, CJK runs): break between characters
      size_t k = 0;
      while (k < word.size()) {
        const size_t n = utf8_len(static_cast<unsigned char>(word[k]));
        const std::string_view ch = word.substr(k, n);
        const float cw = text_width(f, ch);
        if (x_ + cw > right_ && x_ > origin_.x) newline();
        draw(f, ch, cw, c, s);
        k += n;
      }
      return;
    }
    draw(f, word, w, c, s);
  }

  void draw(ImFont* f, std::string_view t, float w, ImU32 c, const md::Span& s) {
    const float dy = (line_h_ - f->FontSize) * 0.5f;
    const ImVec2 p(x_, y_ + dy);
    if (s.style & md::kCode) {
      dl_->AddRectFilled(ImVec2(p.x - 1, p.y - 1), ImVec2(p.x + w + 1, p.y + f->FontSize + 1),
                         ImGui::GetColorU32(st_.theme->code_bg), 3.0f);
    }
    dl_->AddText(f, f->FontSize, p, c, t.data(), t.data() + t.size());
    if (s.style & md::kStrike) {
      dl_->AddLine(ImVec2(p.x, p.y + f->FontSize * 0.55f), ImVec2(p.x + w, p.y + f->FontSize * 0.55f), c);
    }
    if ((s.style & md::kMath) && ImGui::IsMouseHoveringRect(p, ImVec2(p.x + w, p.y + f->FontSize)))
      tooltip("%s", s.url.c_str());  // the LaTeX source
    if (s.style & md::kLink) {
      dl_->AddLine(ImVec2(p.x, p.y + f->FontSize), ImVec2(p.x + w, p.y + f->FontSize), c);
      if (ImGui::IsMouseHoveringRect(p, ImVec2(p.x + w, p.y + f->FontSize))) {
        tooltip("%s\n(click to copy the link)", s.url.c_str());
        if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) ImGui::SetClipboardText(s.url.c_str());
      }
    }
    x_ += w;
  }

  const MarkdownStyle& st_;
  ImFont* base_;
  ImDrawList* dl_;
  ImVec2 origin_;
  float right_, x_, y_, line_h_;
  bool broke_after_display_ = false;
};

void draw_spans(const std::vector<md::Span>& spans, const MarkdownStyle& st, ImFont* base) {
  Flow flow(st, base);
  flow.spans(spans);
  flow.finish();
}

void draw_blocks(const std::vector<md::Block>& blocks, const MarkdownStyle& st);

void draw_code(const md::Block& b, const MarkdownStyle& st) {
  const Fonts& fonts = *st.fonts;
  std::string_view code = b.code;
  if (!code.empty() && code.back() == '\n') code.remove_suffix(1);
  const int lines = 1 + static_cast<int>(std::count(code.begin(), code.end(), '\n'));
  ImFont* mono = fonts.mono;
  const ImVec2 size =
      mono->CalcTextSizeA(mono->FontSize, FLT_MAX, 0.0f, code.data(), code.data() + code.size());
  const ImGuiStyle& style = ImGui::GetStyle();
  const float header = ImGui::GetFrameHeight();
  const float avail = avail_width();
  float height = header + style.ItemSpacing.y + lines * mono->FontSize + style.WindowPadding.y * 2 + 4;
  if (size.x + style.WindowPadding.x * 2 > avail) height += style.ScrollbarSize;
  ImGui::PushStyleColor(ImGuiCol_ChildBg, st.theme->code_bg);
  ImGui::BeginChild("code", ImVec2(avail, height), true, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::TextColored(st.theme->text_muted, "%s", b.lang.empty() ? "code" : b.lang.c_str());
  ImGui::SameLine(std::max(ImGui::GetWindowContentRegionMax().x - ImGui::CalcTextSize("Copy").x -
                               style.FramePadding.x * 2 + ImGui::GetScrollX(),
                           0.0f));
  if (ImGui::SmallButton("Copy")) ImGui::SetClipboardText(std::string(code).c_str());
  draw_code_text(mono, code, b.code_spans, *st.theme, size);
  ImGui::EndChild();
  ImGui::PopStyleColor();
}

void draw_list(const md::Block& b, const MarkdownStyle& st) {
  const float indent = st.fonts->size * 1.4f;
  ImGui::Indent(indent);
  int n = b.start;
  for (size_t i = 0; i < b.children.size(); ++i) {
    const md::Block& item = b.children[i];
    ImGui::PushID(static_cast<int>(i));
    std::string marker;
    if (item.task == 1) {
      marker = "☐";
    } else if (item.task == 2) {
      marker = "☑";
    } else if (b.ordered) {
      marker = std::to_string(n) + ".";
    } else {
      marker = "•";
    }
    ++n;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImFont* f = st.fonts->regular;
    const float w = text_width(f, marker);
    const float dy = (f->FontSize * 1.25f - f->FontSize) * 0.5f;
    ImGui::GetWindowDrawList()->AddText(f, f->FontSize, ImVec2(p.x - w - st.fonts->size * 0.4f, p.y + dy),
                                        ImGui::GetColorU32(st.text_color), marker.c_str());
    draw_blocks(item.children, st);
    ImGui::PopID();
  }
  ImGui::Unindent(indent);
}

void draw_table(const md::Block& b, const MarkdownStyle& st) {
  size_t cols = b.align.size();
  for (const auto& r : b.rows) cols = std::max(cols, r.size());
  if (cols == 0) return;
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("table", static_cast<int>(std::min<size_t>(cols, 64)), flags,
                         ImVec2(avail_width(), 0)))
    return;
  for (size_t r = 0; r < b.rows.size(); ++r) {
    const bool header = static_cast<int>(r) < b.header_rows;
    ImGui::TableNextRow(header ? ImGuiTableRowFlags_Headers : 0);
    for (size_t c = 0; c < b.rows[r].size() && c < 64; ++c) {
      ImGui::TableSetColumnIndex(static_cast<int>(c));
      ImGui::PushID(static_cast<int>(r * 64 + c));
      draw_spans(b.rows[r][c], st, header ? st.fonts->bold : st.fonts->regular);
      ImGui::PopID();
    }
  }
  ImGui::EndTable();
}

void draw_block(const md::Block& b, const MarkdownStyle& st) {
  const Fonts& f = *st.fonts;
  switch (b.kind) {
    case md::BlockKind::kParagraph:
      draw_spans(b.spans, st, f.regular);
      break;
    case md::BlockKind::kHeading: {
      ImFont* font = b.level <= 1 ? f.h1 : b.level == 2 ? f.h2 : f.h3;
      draw_spans(b.spans, st, font);
      if (b.level <= 2) ImGui::Separator();
      break;
    }
    case md::BlockKind::kCode:
      draw_code(b, st);
      break;
    case md::BlockKind::kList:
      draw_list(b, st);
      break;
    case md::BlockKind::kListItem:
      draw_blocks(b.children, st);
      break;
    case md::BlockKind::kQuote: {
      const float indent = f.size * 1.0f;
      const ImVec2 top = ImGui::GetCursorScreenPos();
      ImGui::Indent(indent);
      draw_blocks(b.children, st);
      ImGui::Unindent(indent);
      const float bottom = ImGui::GetCursorScreenPos().y - ImGui::GetStyle().ItemSpacing.y;
      ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(top.x + 2, top.y), ImVec2(top.x + 5, bottom),
                                                ImGui::GetColorU32(st.theme->quote_bar));
      break;
    }
    case md::BlockKind::kRule:
      ImGui::Separator();
      break;
    case md::BlockKind::kTable:
      draw_table(b, st);
      break;
    case md::BlockKind::kHtml:
      ImGui::PushStyleColor(ImGuiCol_Text, st.theme->text_muted);
      ImGui::TextWrapped("%s", b.code.c_str());
      ImGui::PopStyleColor();
      break;
  }
}

void draw_blocks(const std::vector<md::Block>& blocks, const MarkdownStyle& st) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    ImGui::PushID(static_cast<int>(i));
    draw_block(blocks[i], st);
    ImGui::PopID();
  }
}

}  // namespace

void draw_markdown(const md::Document& doc, const MarkdownStyle& style) {
  draw_blocks(doc.blocks, style);
}

const md::Document& MarkdownCache::get(int64_t key, const std::string& text) {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    it = entries_.emplace(key, Entry{text, md::parse(text)}).first;
  } else if (it->second.text != text) {
    it->second.text = text;
    it->second.doc = md::parse(text);
  }
  return it->second.doc;
}

}  // namespace qc::gui
