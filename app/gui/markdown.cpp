#include "markdown.h"

#include <md4c.h>

#include <cstdlib>

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
        if (!stack_.empty()) {
          Block* b = stack_.back();
          if (b->kind == BlockKind::kCode) b->code_spans = hl::highlight(b->code, hl::lang_from_label(b->lang));
          stack_.pop_back();
        }
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

}  // namespace

Document parse(std::string_view markdown) {
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
  if (md_parse(markdown.data(), static_cast<MD_SIZE>(markdown.size()), &p, &b) != 0) {
    // md4c fails only on allocation failure; show the text as it is.
    Document d;
    d.blocks.push_back(Block{BlockKind::kParagraph, {{std::string(markdown), kPlain, {}}}});
    return d;
  }
  return std::move(b.doc);
}

std::string plain_text(const std::vector<Span>& spans) {
  std::string out;
  for (const Span& s : spans) out += s.text;
  return out;
}

}  // namespace qc::gui::md
