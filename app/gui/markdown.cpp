#include "markdown.h"

#include <md4c.h>

#include <cstdlib>

#include "latex_text.h"

namespace qc::gui::md {
namespace {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// md4c hands entities over undecoded ("&amp;"). Numeric ones and the few named ones chat text uses are
// decoded; any other stays as written.
std::string decode_entity(std::string_view e) {
  if (e.size() >= 4 && e[1] == '#') {
    const bool hex = e[2] == 'x' || e[2] == 'X';
    const std::string digits(e.substr(hex ? 3 : 2, e.size() - (hex ? 4 : 3)));
    std::string out;
    append_utf8(out, static_cast<uint32_t>(std::strtoul(digits.c_str(), nullptr, hex ? 16 : 10)));
    return out;
  }
  static constexpr std::pair<std::string_view, std::string_view> kNamed[] = {
      {"&amp;", "&"},  {"&lt;", "<"},   {"&gt;", ">"},    {"&quot;", "\""}, {"&apos;", "'"},
      {"&nbsp;", " "}, {"&copy;", "©"}, {"&mdash;", "—"}, {"&ndash;", "–"}, {"&hellip;", "…"},
      {"&rarr;", "→"}, {"&larr;", "←"}, {"&times;", "×"}, {"&deg;", "°"},
  };
  for (const auto& [name, text] : kNamed) {
    if (e == name) return std::string(text);
  }
  return std::string(e);
}

std::string attribute_text(const MD_ATTRIBUTE& a) {
  return a.text ? std::string(a.text, a.size) : std::string();
}

Align to_align(MD_ALIGN a) {
  switch (a) {
    case MD_ALIGN_LEFT:
      return Align::kLeft;
    case MD_ALIGN_CENTER:
      return Align::kCenter;
    case MD_ALIGN_RIGHT:
      return Align::kRight;
    default:
      return Align::kDefault;
  }
}

// Builds the block tree from md4c's callbacks. Pointers on the stack stay valid: only the innermost
// open block's children (or the table's rows) grow while it is open.
class Builder {
 public:
  Document doc;

  void enter_block(MD_BLOCKTYPE type, void* detail) {
    implicit_ = nullptr;
    switch (type) {
      case MD_BLOCK_DOC:
        return;
      case MD_BLOCK_QUOTE:
        push(BlockKind::kQuote);
        return;
      case MD_BLOCK_UL:
        push(BlockKind::kList);
        return;
      case MD_BLOCK_OL: {
        Block& b = push(BlockKind::kList);
        b.ordered = true;
        b.start = static_cast<int>(static_cast<MD_BLOCK_OL_DETAIL*>(detail)->start);
        return;
      }
      case MD_BLOCK_LI: {
        Block& b = push(BlockKind::kListItem);
        const auto* d = static_cast<MD_BLOCK_LI_DETAIL*>(detail);
        if (d->is_task) b.task = (d->task_mark == 'x' || d->task_mark == 'X') ? 2 : 1;
        return;
      }
      case MD_BLOCK_HR:
        push(BlockKind::kRule);
        return;
      case MD_BLOCK_H:
        push(BlockKind::kHeading).level = static_cast<int>(static_cast<MD_BLOCK_H_DETAIL*>(detail)->level);
        return;
      case MD_BLOCK_CODE:
        push(BlockKind::kCode).lang = attribute_text(static_cast<MD_BLOCK_CODE_DETAIL*>(detail)->lang);
        return;
      case MD_BLOCK_HTML:
        push(BlockKind::kHtml);
        return;
      case MD_BLOCK_P:
        push(BlockKind::kParagraph);
        return;
      case MD_BLOCK_TABLE:
        push(BlockKind::kTable);
        return;
      case MD_BLOCK_THEAD:
        in_head_ = true;
        return;
      case MD_BLOCK_TBODY:
        in_head_ = false;
        return;
      case MD_BLOCK_TR:
        if (Block* t = top(); t && t->kind == BlockKind::kTable) {
          t->rows.emplace_back();
          if (in_head_) ++t->header_rows;
        }
        return;
      case MD_BLOCK_TH:
      case MD_BLOCK_TD:
        if (Block* t = top(); t && t->kind == BlockKind::kTable && !t->rows.empty()) {
          auto& row = t->rows.back();
          row.emplace_back();
          if (t->rows.size() == 1)
            t->align.push_back(to_align(static_cast<MD_BLOCK_TD_DETAIL*>(detail)->align));
          cell_ = &row.back();
        }
        return;
    }
  }

  void leave_block(MD_BLOCKTYPE type) {
    implicit_ = nullptr;
    switch (type) {
      case MD_BLOCK_DOC:
      case MD_BLOCK_THEAD:
      case MD_BLOCK_TBODY:
      case MD_BLOCK_TR:
        return;
      case MD_BLOCK_TH:
      case MD_BLOCK_TD:
        cell_ = nullptr;
        return;
      default:
        if (!stack_.empty()) stack_.pop_back();
        return;
    }
  }

  void enter_span(MD_SPANTYPE type, void* detail) {
    styles_.push_back(style_);
    urls_.push_back(url_);
    switch (type) {
      case MD_SPAN_EM:
        style_ |= kEmphasis;
        break;
      case MD_SPAN_STRONG:
        style_ |= kStrong;
        break;
      case MD_SPAN_CODE:
        style_ |= kCode;
        break;
      case MD_SPAN_DEL:
        style_ |= kStrike;
        break;
      case MD_SPAN_A:
        style_ |= kLink;
        url_ = attribute_text(static_cast<MD_SPAN_A_DETAIL*>(detail)->href);
        break;
      default:
        break;  // images show their alt text; underline/latex/wikilinks are not enabled
    }
  }

  void leave_span() {
    if (styles_.empty()) return;
    style_ = styles_.back();
    url_ = urls_.back();
    styles_.pop_back();
    urls_.pop_back();
  }

  void text(MD_TEXTTYPE type, std::string_view t) {
    Block* b = top();
    if (b && (b->kind == BlockKind::kCode || b->kind == BlockKind::kHtml) && cell_ == nullptr) {
      b->code.append(t);
      return;
    }
    switch (type) {
      case MD_TEXT_BR:
        add("\n");
        return;
      case MD_TEXT_SOFTBR:
        add(" ");
        return;
      case MD_TEXT_NULLCHAR:
        add("\xEF\xBF\xBD");
        return;
      case MD_TEXT_ENTITY:
        add(decode_entity(t));
        return;
      default:
        add(t);
        return;
    }
  }

 private:
  Block* top() { return stack_.empty() ? nullptr : stack_.back(); }

  Block& push(BlockKind kind) {
    std::vector<Block>& list = stack_.empty() ? doc.blocks : stack_.back()->children;
    list.emplace_back();
    list.back().kind = kind;
    stack_.push_back(&list.back());
    return list.back();
  }

  // Where inline text goes: the table cell, the open paragraph/heading, or (tight lists and quotes give
  // text without a paragraph) an implicit paragraph in the open container.
  std::vector<Span>* target() {
    if (cell_) return cell_;
    Block* b = top();
    if (b == nullptr) {
      if (implicit_ == nullptr) {
        doc.blocks.emplace_back();
        implicit_ = &doc.blocks.back();
      }
      return &implicit_->spans;
    }
    if (b->kind == BlockKind::kParagraph || b->kind == BlockKind::kHeading) return &b->spans;
    if (implicit_ == nullptr) {
      b->children.emplace_back();
      implicit_ = &b->children.back();
    }
    return &implicit_->spans;
  }

  void add(std::string_view t) {
    if (t.empty()) return;
    std::vector<Span>* spans = target();
    if (!spans->empty() && spans->back().style == style_ && spans->back().url == url_ && t != "\n" &&
        spans->back().text != "\n") {
      spans->back().text.append(t);
      return;
    }
    spans->push_back({std::string(t), style_, url_});
  }

  std::vector<Block*> stack_;
  std::vector<Span>* cell_ = nullptr;
  Block* implicit_ = nullptr;
  bool in_head_ = false;
  uint8_t style_ = kPlain;
  std::string url_;
  std::vector<uint8_t> styles_;
  std::vector<std::string> urls_;
};

constexpr std::string_view kOpen = "\xEE\x80\x80";   // U+E000
constexpr std::string_view kClose = "\xEE\x80\x81";  // U+E001

// The math of one parse: the original text and where its math is.
struct Math {
  std::string_view source;
  std::vector<tex::MathRegion> regions;

  // A placeholder at s[i]: its region and length, else nullptr.
  const tex::MathRegion* at(std::string_view s, size_t i, size_t* len) const {
    if (s.substr(i, kOpen.size()) != kOpen) return nullptr;
    size_t j = i + kOpen.size();
    size_t v = 0;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9' && j - i < 12)
      v = v * 10 + static_cast<size_t>(s[j++] - '0');
    if (j == i + kOpen.size() || s.substr(j, kClose.size()) != kClose || v >= regions.size()) return nullptr;
    *len = j + kClose.size() - i;
    return &regions[v];
  }

  std::string_view source_of(const tex::MathRegion& r) const {
    return source.substr(r.begin, r.end - r.begin);
  }

  // Placeholders back to their source text.
  std::string restore(std::string_view s) const {
    std::string out;
    size_t i = 0;
    for (size_t p = s.find(kOpen); p != std::string_view::npos; p = s.find(kOpen, i)) {
      out.append(s.substr(i, p - i));
      size_t len = 0;
      if (const tex::MathRegion* r = at(s, p, &len)) {
        out.append(source_of(*r));
        i = p + len;
      } else {
        out.append(kOpen);
        i = p + kOpen.size();
      }
    }
    out.append(s.substr(i));
    return out;
  }

  // Spans with placeholders split into text and kMath spans (inline code gets its source back).
  void split(std::vector<Span>& spans) const {
    bool any = false;
    for (const Span& s : spans)
      any = any || s.text.find(kOpen) != std::string::npos || s.url.find(kOpen) != std::string::npos;
    if (!any) return;
    std::vector<Span> out;
    for (Span& s : spans) {
      if (s.url.find(kOpen) != std::string::npos) s.url = restore(s.url);
      if ((s.style & kCode) || s.text.find(kOpen) == std::string::npos) {
        if (s.style & kCode) s.text = restore(s.text);
        out.push_back(std::move(s));
        continue;
      }
      const std::string_view t = s.text;
      size_t i = 0;
      for (size_t p = t.find(kOpen); p != std::string_view::npos; p = t.find(kOpen, p + 1)) {
        size_t len = 0;
        const tex::MathRegion* r = at(t, p, &len);
        if (r == nullptr) continue;
        if (p > i) out.push_back({std::string(t.substr(i, p - i)), s.style, s.url});
        const std::string_view body = source.substr(r->body_begin, r->body_end - r->body_begin);
        std::string text = tex::to_unicode(body);
        if (text.empty()) text = std::string(source_of(*r));
        const uint8_t style =
            static_cast<uint8_t>((s.style & ~(kCode | kLink)) | kMath | (r->display ? kMathDisplay : 0));
        out.push_back({std::move(text), style, std::string(source_of(*r))});
        i = p + len;
        p = i - 1;
      }
      if (i < t.size()) out.push_back({std::string(t.substr(i)), s.style, s.url});
    }
    spans = std::move(out);
  }

  void finish(Block& b) const {
    split(b.spans);
    for (auto& row : b.rows)
      for (auto& cell : row) split(cell);
    if (b.code.find(kOpen) != std::string::npos) b.code = restore(b.code);
    for (Block& c : b.children) finish(c);
  }
};

// Syntax highlight of every code block, once per parse (highlight.h).
void highlight_code(std::vector<Block>& blocks) {
  for (Block& b : blocks) {
    if (b.kind == BlockKind::kCode) b.code_spans = hl::highlight(b.code, hl::lang_from_label(b.lang));
    highlight_code(b.children);
  }
}

}  // namespace

Document parse(std::string_view markdown) {
  Math math{markdown, tex::find_math(markdown)};
  std::string replaced;
  if (!math.regions.empty()) {
    size_t at = 0;
    for (size_t k = 0; k < math.regions.size(); ++k) {
      replaced.append(markdown.substr(at, math.regions[k].begin - at));
      replaced.append(kOpen);
      replaced.append(std::to_string(k));
      replaced.append(kClose);
      at = math.regions[k].end;
    }
    replaced.append(markdown.substr(at));
  }
  const std::string_view text = math.regions.empty() ? markdown : std::string_view(replaced);
  Builder b;
  MD_PARSER p{};
  p.abi_version = 0;
  p.flags = MD_DIALECT_GITHUB;  // tables, strikethrough, task lists, permissive autolinks
  p.enter_block = [](MD_BLOCKTYPE t, void* d, void* u) {
    static_cast<Builder*>(u)->enter_block(t, d);
    return 0;
  };
  p.leave_block = [](MD_BLOCKTYPE t, void*, void* u) {
    static_cast<Builder*>(u)->leave_block(t);
    return 0;
  };
  p.enter_span = [](MD_SPANTYPE t, void* d, void* u) {
    static_cast<Builder*>(u)->enter_span(t, d);
    return 0;
  };
  p.leave_span = [](MD_SPANTYPE, void*, void* u) {
    static_cast<Builder*>(u)->leave_span();
    return 0;
  };
  p.text = [](MD_TEXTTYPE t, const MD_CHAR* s, MD_SIZE n, void* u) {
    static_cast<Builder*>(u)->text(t, std::string_view(s, n));
    return 0;
  };
  if (md_parse(text.data(), static_cast<MD_SIZE>(text.size()), &p, &b) != 0) {
    // md4c fails only on allocation failure; show the text as it is.
    Document d;
    d.blocks.push_back(Block{BlockKind::kParagraph, {{std::string(markdown), kPlain, {}}}});
    return d;
  }
  if (!math.regions.empty())
    for (Block& blk : b.doc.blocks) math.finish(blk);
  highlight_code(b.doc.blocks);
  return std::move(b.doc);
}

std::string plain_text(const std::vector<Span>& spans) {
  std::string out;
  for (const Span& s : spans) out += s.text;
  return out;
}

}  // namespace qc::gui::md
