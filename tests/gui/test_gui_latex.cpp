// LaTeX math to readable Unicode (app/gui/latex_text.h): conversions as input/output pairs, where math is
// found in Markdown (prices stay text), and robustness on random bytes and long inputs.
#include <chrono>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "latex_text.h"
#include "markdown.h"

namespace qc::gui::tex {
namespace {

TEST(GuiLatex, ConversionsAsInputOutputPairs) {
  const std::pair<std::string, std::string> cases[] = {
      {"\\alpha + \\beta = \\Gamma", "α + β = Γ"},
      {"x^2 + y^{10} = z_{n+1}", "x² + y¹⁰ = zₙ₊₁"},
      {"e^{i\\pi} + 1 = 0", "e^(iπ) + 1 = 0"},  // π has no superscript form: the whole group in ^( )
      {"e^{ix}", "eⁱˣ"},
      {"x^{q}", "x^q"},  // no superscript q in Unicode
      {"a_{ij} b_{\\mu\\nu}", "aᵢⱼ b_(μν)"},
      {"A^T A^{-1}", "Aᵀ A⁻¹"},
      {"\\frac{a}{b} + \\frac12 + \\frac{a+b}{c-d}", "a/b + 1/2 + (a+b)/(c-d)"},
      {"\\frac{a}{x_n} \\frac{e_n^2}{2x} \\frac{\\alpha \\cdot b}{\\sqrt{2}}", "a/xₙ eₙ²/2x (α · b)/(√2)"},
      {"\\sqrt{x} + \\sqrt{x^2+1} + \\sqrt[3]{8}", "√x + √(x²+1) + ∛8"},
      {"\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}", "∑ᵢ₌₁ⁿ i = (n(n+1))/2"},
      {"\\int_0^\\infty e^{-x}\\,dx = 1", "∫₀^∞ e⁻ˣ dx = 1"},
      {"\\lim_{x \\to 0} \\frac{\\sin x}{x}", "lim_(x → 0) (sin x)/x"},
      {"a \\leq b \\geq c \\neq d \\approx e", "a ≤ b ≥ c ≠ d ≈ e"},
      {"a \\cdot b \\times c \\pm d", "a · b × c ± d"},
      {"f: \\mathbb{R}^n \\to \\mathbb{R}", "f: ℝⁿ → ℝ"},
      {"x \\in \\mathbb{N}, \\mathcal{L}", "x ∈ ℕ, ℒ"},
      {"\\left( \\frac{1}{2} \\right)", "( 1/2 )"},
      {"\\text{if } x > 0", "if x > 0"},
      {"\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}", "( a , b ; c , d )"},
      {"\\hat{x} \\bar{y}", "x\xCC\x82 y\xCC\x84"},
      {"90^\\circ", "90°"},
      {"f'(x)", "f′(x)"},
      {"\\not= \\not\\in", "≠ ∉"},
      {"\\binom{n}{k}", "C(n, k)"},
      {"\\foo{x^2} + \\unknown", "\\foo{x²} + \\unknown"},  // not understood: stays as source
      {"\\{ x \\}", "{ x }"},
      {"}{", "}"},  // a stray closer stays, an unclosed group just ends
      {"\\", "\\"},
  };
  for (const auto& [in, out] : cases) EXPECT_EQ(to_unicode(in), out) << in;
}

std::vector<std::string> bodies(std::string_view md) {
  std::vector<std::string> out;
  for (const MathRegion& r : find_math(md))
    out.push_back(std::string(r.display ? "D:" : "I:") +
                  std::string(md.substr(r.body_begin, r.body_end - r.body_begin)));
  return out;
}

using V = std::vector<std::string>;

TEST(GuiLatex, FindsMathAndLeavesPricesAlone) {
  EXPECT_EQ(bodies("Euler: $e^{i\\pi}+1=0$."), V{"I:e^{i\\pi}+1=0"});
  EXPECT_EQ(bodies("It costs $5 and $10 today."), V{});
  EXPECT_EQ(bodies("From $5 to $10, and $x$ too"), V{"I:x"});
  EXPECT_EQ(bodies("$ x$ and $x $ are not math"), V{});
  EXPECT_EQ(bodies("$x$5 is not, $y$ is"), V{"I:y"});  // a closer followed by a digit does not close
  EXPECT_EQ(bodies("escaped \\$x$ is not"), V{});
  EXPECT_EQ(bodies("\\(a_1\\) and \\[\\sum x\\]"), (V{"I:a_1", "D:\\sum x"}));
  EXPECT_EQ(bodies("$$\nx^2\n$$\n"), V{"D:\nx^2\n"});
  EXPECT_EQ(bodies("`$x$` and ```$y$``` stay code, $z$ not"), V{"I:z"});
  EXPECT_EQ(bodies("```\n$x$\n```\n$y$\n~~~tex\n$$z$$\n~~~"), V{"I:y"});
  EXPECT_EQ(bodies("$a\n\nb$"), V{});  // not across paragraphs
  EXPECT_EQ(bodies("\\(a\n\nb\\)"), V{});
  EXPECT_EQ(bodies("$$a\n\nb$$"), V{});
  EXPECT_EQ(bodies("x \xEE\x80\x80 $y$"), V{});  // a placeholder character in the text: none
}

// Random bytes over LaTeX's and Markdown's special characters (seeded, fixed rounds): never a crash,
// regions in order, inside the text, bodies inside their regions.
TEST(GuiLatex, RandomBytesAreSafe) {
  std::mt19937 rng(20261204);
  const std::string hot = "$\\{}^_()[]`~ \nabx1&\xCE\xB1\xFF";
  for (int round = 0; round < 3000; ++round) {
    std::string s;
    const int len = static_cast<int>(rng() % 160);
    for (int i = 0; i < len; ++i) s += (rng() % 4) ? hot[rng() % hot.size()] : static_cast<char>(rng() % 256);
    (void)to_unicode(s);
    size_t last = 0;
    for (const MathRegion& r : find_math(s)) {
      ASSERT_LE(last, r.begin) << s;
      ASSERT_LE(r.begin, r.body_begin);
      ASSERT_LE(r.body_begin, r.body_end);
      ASSERT_LE(r.body_end, r.end);
      ASSERT_LE(r.end, s.size());
      last = r.end;
    }
  }
}

// Linear time on inputs built against it (openers that never close, deep nesting): 1 MB each, well
// under a second.
TEST(GuiLatex, MegabyteInputs) {
  const std::string units[] = {"$a ", "\\(", "\\[", "$$", "`", "{", "\\frac", "x^", "\\sqrt[", "\\begin{"};
  for (const std::string& u : units) {
    std::string s;
    while (s.size() < (1u << 20)) s += u;
    const auto t0 = std::chrono::steady_clock::now();
    (void)find_math(s);
    const std::string out = to_unicode(s);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(ms, 1000.0) << u;
    EXPECT_LT(out.size(), 8 * s.size()) << u;
  }
}

}  // namespace
}  // namespace qc::gui::tex

// The Markdown parse with math: spans of kind kMath carry the Unicode text and the source; prices, code
// and escaped dollars stay as they were written.
namespace qc::gui::md {
namespace {

TEST(GuiMarkdownMath, MathBecomesSpansAndCodeKeepsItsSource) {
  const Document d = parse(
      "Area $\\pi r^2$, for $5 and $10.\n\n$$\\frac{a}{b}$$\n\n`$x$` and \\$y$\n\n"
      "```\n$z$ \\(w\\)\n```\n");
  ASSERT_EQ(d.blocks.size(), 4u);
  const std::vector<Span> first = {
      {"Area ", kPlain, ""}, {"π r²", kMath, "$\\pi r^2$"}, {", for $5 and $10.", kPlain, ""}};
  EXPECT_EQ(d.blocks[0].spans, first);
  EXPECT_EQ(d.blocks[1].spans, (std::vector<Span>{{"a/b", kMath | kMathDisplay, "$$\\frac{a}{b}$$"}}));
  EXPECT_EQ(d.blocks[2].spans,
            (std::vector<Span>{{"$x$", kCode, ""}, {" and $y$", kPlain, ""}}));  // md4c drops the escape
  EXPECT_EQ(d.blocks[3].kind, BlockKind::kCode);
  EXPECT_EQ(d.blocks[3].code, "$z$ \\(w\\)\n");
}

TEST(GuiMarkdownMath, BackslashDelimitersSurviveMarkdownEscapes) {
  // In Markdown "\(" is an escaped "(": the math is taken out before md4c could drop the backslashes.
  const Document d = parse("so \\(a_1 + a_2\\) and \\[x_i^2\\]");
  ASSERT_EQ(d.blocks.size(), 1u);
  const std::vector<Span> want = {{"so ", kPlain, ""},
                                  {"a₁ + a₂", kMath, "\\(a_1 + a_2\\)"},
                                  {" and ", kPlain, ""},
                                  {"xᵢ²", kMath | kMathDisplay, "\\[x_i^2\\]"}};
  EXPECT_EQ(d.blocks[0].spans, want);
}

TEST(GuiMarkdownMath, InEmphasisTablesAndLists) {
  const Document d = parse("| a | b |\n|---|---|\n| $x^2$ | **$y$** |\n\n- item $\\alpha$\n");
  ASSERT_EQ(d.blocks.size(), 2u);
  EXPECT_EQ(d.blocks[0].rows[1][0], (std::vector<Span>{{"x²", kMath, "$x^2$"}}));
  EXPECT_EQ(d.blocks[0].rows[1][1], (std::vector<Span>{{"y", kMath | kStrong, "$y$"}}));
  EXPECT_EQ(plain_text(d.blocks[1].children[0].children[0].spans), "item α");
}

}  // namespace
}  // namespace qc::gui::md
