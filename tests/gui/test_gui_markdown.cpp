// Markdown parse (md4c -> block tree) as the chat view draws it.
#include <random>

#include <gtest/gtest.h>

#include "markdown.h"

namespace qc::gui::md {
namespace {

TEST(GuiMarkdown, HeadingsParagraphsAndEmphasis) {
  const Document d = parse("# Title\n\nSome *soft* and **strong** `code`, ~~gone~~.\nNext line\n");
  ASSERT_EQ(d.blocks.size(), 2u);
  EXPECT_EQ(d.blocks[0].kind, BlockKind::kHeading);
  EXPECT_EQ(d.blocks[0].level, 1);
  EXPECT_EQ(plain_text(d.blocks[0].spans), "Title");
  const Block& p = d.blocks[1];
  EXPECT_EQ(p.kind, BlockKind::kParagraph);
  const std::vector<Span> expect = {
      {"Some ", kPlain, ""},   {"soft", kEmphasis, ""}, {" and ", kPlain, ""},
      {"strong", kStrong, ""}, {" ", kPlain, ""},       {"code", kCode, ""},
      {", ", kPlain, ""},      {"gone", kStrike, ""},   {". Next line", kPlain, ""}};
  EXPECT_EQ(p.spans, expect);  // the soft line break became a space and merged into the plain run
}

TEST(GuiMarkdown, FencedCodeKeepsTextAndLanguage) {
  const Document d = parse("```cpp\nint main() {\n  return 0;  // *not emphasis*\n}\n```\n");
  ASSERT_EQ(d.blocks.size(), 1u);
  EXPECT_EQ(d.blocks[0].kind, BlockKind::kCode);
  EXPECT_EQ(d.blocks[0].lang, "cpp");
  EXPECT_EQ(d.blocks[0].code, "int main() {\n  return 0;  // *not emphasis*\n}\n");
}

TEST(GuiMarkdown, NestedTightListsGetImplicitParagraphs) {
  const Document d = parse("3. three\n4. four\n   - a\n   - [x] done\n   - [ ] open\n");
  ASSERT_EQ(d.blocks.size(), 1u);
  const Block& ol = d.blocks[0];
  EXPECT_EQ(ol.kind, BlockKind::kList);
  EXPECT_TRUE(ol.ordered);
  EXPECT_EQ(ol.start, 3);
  ASSERT_EQ(ol.children.size(), 2u);
  const Block& four = ol.children[1];
  ASSERT_EQ(four.children.size(), 2u);
  EXPECT_EQ(four.children[0].kind, BlockKind::kParagraph);
  EXPECT_EQ(plain_text(four.children[0].spans), "four");
  const Block& ul = four.children[1];
  EXPECT_EQ(ul.kind, BlockKind::kList);
  EXPECT_FALSE(ul.ordered);
  ASSERT_EQ(ul.children.size(), 3u);
  EXPECT_EQ(ul.children[0].task, 0);
  EXPECT_EQ(ul.children[1].task, 2);
  EXPECT_EQ(ul.children[2].task, 1);
  EXPECT_EQ(plain_text(ul.children[2].children[0].spans), "open");
}

TEST(GuiMarkdown, TablesWithAlignmentAndInlineStyles) {
  const Document d = parse("| a | **b** | c |\n|:--|:-:|--:|\n| 1 | `x` | 3 |\n| 4 | 5 | 6 |\n");
  ASSERT_EQ(d.blocks.size(), 1u);
  const Block& t = d.blocks[0];
  EXPECT_EQ(t.kind, BlockKind::kTable);
  EXPECT_EQ(t.header_rows, 1);
  ASSERT_EQ(t.rows.size(), 3u);
  ASSERT_EQ(t.align.size(), 3u);
  EXPECT_EQ(t.align[0], Align::kLeft);
  EXPECT_EQ(t.align[1], Align::kCenter);
  EXPECT_EQ(t.align[2], Align::kRight);
  EXPECT_EQ(t.rows[0][1], (std::vector<Span>{{"b", kStrong, ""}}));
  EXPECT_EQ(t.rows[1][1], (std::vector<Span>{{"x", kCode, ""}}));
  EXPECT_EQ(plain_text(t.rows[2][2]), "6");
}

TEST(GuiMarkdown, LinksQuotesRulesEntitiesAndHtml) {
  const Document d =
      parse("> quoted [site](https://a.example/x) &amp; &#x263A; &bogus;\n\n---\n\n<div>raw</div>\n");
  ASSERT_EQ(d.blocks.size(), 3u);
  const Block& q = d.blocks[0];
  EXPECT_EQ(q.kind, BlockKind::kQuote);
  ASSERT_EQ(q.children.size(), 1u);
  const auto& spans = q.children[0].spans;
  ASSERT_GE(spans.size(), 3u);
  EXPECT_EQ(spans[1], (Span{"site", kLink, "https://a.example/x"}));
  EXPECT_EQ(plain_text(spans), "quoted site & \xE2\x98\xBA &bogus;");
  EXPECT_EQ(d.blocks[1].kind, BlockKind::kRule);
  EXPECT_EQ(d.blocks[2].kind, BlockKind::kHtml);
  EXPECT_EQ(d.blocks[2].code, "<div>raw</div>\n");  // shown as text, never rendered
}

TEST(GuiMarkdown, HardBreakIsItsOwnSpan) {
  const Document d = parse("one  \ntwo\n");
  ASSERT_EQ(d.blocks.size(), 1u);
  EXPECT_EQ(d.blocks[0].spans,
            (std::vector<Span>{{"one", kPlain, ""}, {"\n", kPlain, ""}, {"two", kPlain, ""}}));
}

// A model streams half-finished Markdown (an open fence, a table without its rule, stray stars): every
// prefix of a document must parse, and the text of the unfinished part must not be lost.
TEST(GuiMarkdown, EveryPrefixOfAStreamParses) {
  const std::string doc = "## T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```py\nprint(1)\n```\n\n- *x* **y\n";
  for (size_t n = 0; n <= doc.size(); ++n) {
    const Document d = parse(std::string_view(doc).substr(0, n));
    if (n > 0) {
      EXPECT_FALSE(d.blocks.empty()) << "prefix " << n;
    }
  }
}

// Random strings over Markdown's special characters (seeded): the parser never fails and keeps every
// letter of the input somewhere (a span, a code block or HTML text).
TEST(GuiMarkdown, RandomInputNeverLosesLetters) {
  std::mt19937 rng(20261202);
  const std::string alphabet = "ab*_`~[]()<>|-#>!\n \\&;:1.x";
  for (int round = 0; round < 300; ++round) {
    std::string s;
    const int len = static_cast<int>(rng() % 120);
    for (int i = 0; i < len; ++i) s += alphabet[rng() % alphabet.size()];
    const Document d = parse(s);
    std::string all;
    std::vector<const Block*> stack;
    for (const Block& b : d.blocks) stack.push_back(&b);
    while (!stack.empty()) {
      const Block* b = stack.back();
      stack.pop_back();
      all += plain_text(b->spans) + b->code + b->lang;
      for (const auto& row : b->rows)
        for (const auto& cell : row) all += plain_text(cell);
      for (const Block& c : b->children) stack.push_back(&c);
    }
    const size_t want_a = std::count(s.begin(), s.end(), 'a');
    // Link destinations are not text: skip inputs with a link-looking "](".
    if (s.find("](") == std::string::npos && s.find('<') == std::string::npos) {
      EXPECT_EQ(static_cast<size_t>(std::count(all.begin(), all.end(), 'a')), want_a) << s;
    }
  }
}

}  // namespace
}  // namespace qc::gui::md
