// Syntax highlighting of fenced code (app/gui/highlight.h): input/output pairs per language, written as
// the code with every span bracketed and tagged by its kind (K keyword, T type, S string, N number,
// C comment, P preprocessor/meta, F function, O punctuation); unmarked text is plain.
#include <chrono>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "highlight.h"
#include "markdown.h"

namespace qc::gui::hl {
namespace {

char tag(Kind k) {
  switch (k) {
    case Kind::kKeyword:
      return 'K';
    case Kind::kType:
      return 'T';
    case Kind::kString:
      return 'S';
    case Kind::kNumber:
      return 'N';
    case Kind::kComment:
      return 'C';
    case Kind::kPreproc:
      return 'P';
    case Kind::kFunction:
      return 'F';
    case Kind::kPunct:
      return 'O';
  }
  return '?';
}

// Punctuation is left unmarked (it would bury the other kinds) unless `punct`.
std::string show(std::string_view code, Lang lang, bool punct = false) {
  std::string out;
  size_t at = 0;
  for (const Span& s : highlight(code, lang)) {
    if (s.kind == Kind::kPunct && !punct) continue;
    out.append(code.substr(at, s.begin - at));
    out += '[';
    out += tag(s.kind);
    out += ' ';
    out.append(code.substr(s.begin, s.end - s.begin));
    out += ']';
    at = s.end;
  }
  out.append(code.substr(at));
  return out;
}

// The invariants every output keeps: sorted, non-empty, non-overlapping spans inside the code.
void expect_well_formed(std::string_view code, const std::vector<Span>& spans) {
  uint32_t last = 0;
  for (const Span& s : spans) {
    ASSERT_LT(s.begin, s.end);
    ASSERT_LE(last, s.begin);
    ASSERT_LE(s.end, code.size());
    last = s.end;
  }
}

struct Case {
  Lang lang;
  std::string in;
  std::string out;
};

TEST(GuiHighlight, LanguagesAsInputOutputPairs) {
  const Case cases[] = {
      {Lang::kC, "#include <stdio.h>\nint main(void) { return 0x1F; } // done\n",
       "[P #include <stdio.h>]\n[T int] [F main]([T void]) { [K return] [N 0x1F]; } [C // done]\n"},
      {Lang::kC, "char *s = \"a\\\"b\"; char c = '\\n'; /* x\ny */ float f = 1.5e-3f;",
       "[T char] *s = [S \"a\\\"b\"]; [T char] c = [S '\\n']; [C /* x\ny */] [T float] f = [N 1.5e-3f];"},
      {Lang::kCpp, "template <typename T> constexpr auto x = R\"d(a \"q\" )\" b)d\"; int n = 1'000;",
       "[K template] <[K typename] T> [K constexpr] [K auto] x = [S R\"d(a \"q\" )\" b)d\"]; [T int] n = "
       "[N 1'000];"},
      {Lang::kCpp, "std::vector<int> v{nullptr};\n#define SQ(x) \\\n  ((x) * (x))\nv.push_back(2);",
       "std::[T vector]<[T int]> v{[N nullptr]};\n[P #define SQ(x) \\\n  ((x) * (x))]\nv.[F push_back]([N "
       "2]);"},
      {Lang::kPython, "@cache\ndef f(x: int) -> None:\n    \"\"\"Doc\n    more\"\"\"\n    return f'{x}' # c",
       "[P @cache]\n[K def] [F f](x: [T int]) -> [N None]:\n    [S \"\"\"Doc\n    more\"\"\"]\n    [K "
       "return] "
       "f[S '{x}'] [C # c]"},
      {Lang::kPython, "class A(Base):\n    x = [1, 2.5, 'it\\'s']",
       "[K class] [F A]([T Base]):\n    x = [[N 1], "
       "[N 2.5], [S 'it\\'s']]"},
      {Lang::kJavaScript, "const s = `a ${b}\nc`; let n = null; // end\nfunction f($x) {}",
       "[K const] s = [S `a ${b}\nc`]; [K let] n = [N null]; [C // end]\n[K function] [F f]($x) {}"},
      // Capitalised names are types; ALL_CAPS ones (constants) are not.
      {Lang::kJavaScript, "interface Props { name: string }\nnew Map<string, Foo>(MAX)",
       "[K interface] [T Props] { name: [T string] }\n[K new] [T Map]<[T string], [T Foo]>(MAX)"},
      {Lang::kRust,
       "#[derive(Debug)]\nfn main() { let s: &'static str = r#\"a\"b\"#; println!(\"{}\", 'x'); }\n/* a /* b "
       "*/ c */",
       "[P #[derive(Debug)]]\n[K fn] [F main]() { [K let] s: &[P 'static] [T str] = [S r#\"a\"b\"#]; [F "
       "println!]([S "
       "\"{}\"], [S 'x']); }\n[C /* a /* b */ c */]"},
      {Lang::kRust, "impl<'a> Foo<'a> { fn x(&self) -> Option<u8> { None } }",
       "[K impl]<[P 'a]> [T Foo]<[P 'a]> { [K fn] [F x](&[K self]) -> [T Option]<[T u8]> { [N None] } }"},
      {Lang::kGo, "package main\nfunc f() error { s := `raw\n\\n`; return nil }",
       "[K package] main\n[K func] [F f]() [T error] { s := [S `raw\n\\n`]; [K return] [N nil] }"},
      {Lang::kJava, "@Override\npublic String toString() { return \"x\" + 1L; }",
       "[P @Override]\n[K public] [T String] [F toString]() { [K return] [S \"x\"] + [N 1L]; }"},
      {Lang::kShell, "#!/bin/bash\nfor f in *.txt; do echo \"$f ${HOME}\" 'a\\' $1; done # c\nx=a#b",
       "[C #!/bin/bash]\n[K for] f [K in] *.txt; [K do] [K echo] [S \"$f ${HOME}\"] [S 'a\\'] [P $1]; [K "
       "done] "
       "[C # c]\nx=a#b"},
      {Lang::kShell, "export PATH=$HOME/bin:$PATH", "[K export] PATH=[P $HOME]/bin:[P $PATH]"},
      {Lang::kJson, "{\"a\": [1, -2.5e3, true, null], \"b\" : \"x\\\"y\"}",
       "{[T \"a\"]: [[N 1], -[N 2.5e3], [N true], [N null]], [T \"b\"] : [S \"x\\\"y\"]}"},
      {Lang::kSql, "SELECT id, 'it''s' FROM t -- c\nwhere x = 1 /* b */;",
       "[K SELECT] id, [S 'it''s'] [K FROM] t [C -- c]\n[K where] x = [N 1] [C /* b */];"},
      {Lang::kYaml, "name: app # c\nlist:\n  - key: \"v\"\n  - 3\nref: *base\nurl: a#b\nempty: ~",
       "[T name]: app [C # c]\n[T list]:\n  - [T key]: [S \"v\"]\n  - [N 3]\n[T ref]: [P *base]\n[T url]: "
       "a#b\n"
       "[T empty]: [N ~]"},
      {Lang::kGeneric, "Don't panic: \"quoted\" 42 # note\n// also",
       "Don't panic: [S \"quoted\"] [N 42] [C # note]\n[C // also]"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(show(c.in, c.lang), c.out) << lang_name(c.lang) << ": " << c.in;
    expect_well_formed(c.in, highlight(c.in, c.lang));
  }
}

TEST(GuiHighlight, PunctuationIsMarked) {
  EXPECT_EQ(show("a+=b[0];", Lang::kC, true), "a[O +=]b[O [][N 0][O ];]");
}

TEST(GuiHighlight, UnterminatedStringsAndCommentsStopAtTheLineOrTheBlockEnd) {
  // A C string never spans lines; a block comment and a Python triple quote run to the block's end.
  EXPECT_EQ(show("x = \"abc\ny = 1", Lang::kC), "x = [S \"abc]\ny = [N 1]");
  EXPECT_EQ(show("a /* b\nc", Lang::kC), "a [C /* b\nc]");
  EXPECT_EQ(show("s = '''abc\ndef", Lang::kPython), "s = [S '''abc\ndef]");
  EXPECT_EQ(show("/* /* */ still", Lang::kRust), "[C /* /* */ still]");
  EXPECT_EQ(show("R\"x(abc", Lang::kCpp), "[S R\"x(abc]");
  EXPECT_EQ(show("\"\\", Lang::kC), "[S \"\\]");
}

TEST(GuiHighlight, LabelsToLanguages) {
  EXPECT_EQ(lang_from_label("cpp"), Lang::kCpp);
  EXPECT_EQ(lang_from_label("C++"), Lang::kCpp);
  EXPECT_EQ(lang_from_label("Python title=a.py"), Lang::kPython);
  EXPECT_EQ(lang_from_label("{.rust}"), Lang::kRust);
  EXPECT_EQ(lang_from_label("ts"), Lang::kJavaScript);
  EXPECT_EQ(lang_from_label("console"), Lang::kShell);
  EXPECT_EQ(lang_from_label("yml"), Lang::kYaml);
  EXPECT_EQ(lang_from_label(""), Lang::kGeneric);
  EXPECT_EQ(lang_from_label("brainfuck"), Lang::kGeneric);
}

// A block still streaming in: at every line boundary, the highlight of the prefix is the highlight of
// the whole block cut at that point (nothing already drawn changes colour when more lines arrive).
TEST(GuiHighlight, AStreamedPrefixHighlightsAsTheWholeBlockCut) {
  const Case blocks[] = {
      {Lang::kCpp, "#include <x>\n/* multi\nline */\nauto s = R\"(raw\ntext)\";\nint f() { return 1; }\n",
       ""},
      {Lang::kPython, "def f():\n    '''doc\n    string'''\n    return \"x\"  # c\n", ""},
      {Lang::kRust, "/* a /*\n b */\n c */\nfn x() -> r#\"raw\n\"# {}\n", ""},
      {Lang::kShell, "echo \"multi\nline\" $x\n# c\n", ""},
      {Lang::kYaml, "a: 1\nb:\n  - c: \"d\"\n", ""},
  };
  for (const Case& b : blocks) {
    const std::vector<Span> whole = highlight(b.in, b.lang);
    for (size_t n = 0; n <= b.in.size(); ++n) {
      if (n != b.in.size() && (n == 0 || b.in[n - 1] != '\n')) continue;
      std::vector<Span> cut;
      for (Span s : whole) {
        if (s.begin >= n) break;
        s.end = std::min<uint32_t>(s.end, static_cast<uint32_t>(n));
        cut.push_back(s);
      }
      EXPECT_EQ(highlight(std::string_view(b.in).substr(0, n), b.lang), cut)
          << lang_name(b.lang) << " prefix " << n;
    }
  }
}

// Through the Markdown parse: a fence still open (the reply is streaming) is highlighted by its label, up
// to where the text has arrived, exactly as the finished block's first lines.
TEST(GuiHighlight, ParseHighlightsAnOpenFence) {
  const md::Document open = md::parse("Here:\n\n```python\ndef f(x):\n    return x  # done\n");
  ASSERT_EQ(open.blocks.size(), 2u);
  const md::Block& b = open.blocks[1];
  ASSERT_EQ(b.kind, md::BlockKind::kCode);
  EXPECT_EQ(b.code_spans, highlight(b.code, Lang::kPython));
  EXPECT_EQ(show(b.code, Lang::kPython), "[K def] [F f](x):\n    [K return] x  [C # done]\n");
  const md::Document closed =
      md::parse("Here:\n\n```python\ndef f(x):\n    return x  # done\n    pass\n```\n");
  const std::vector<Span>& all = closed.blocks[1].code_spans;
  EXPECT_EQ(std::vector<Span>(all.begin(), all.begin() + static_cast<long>(b.code_spans.size())),
            b.code_spans);
}

// Random bytes (seeded, a fixed number of rounds): never a crash, always well-formed spans, for every
// language; the bytes lean towards the characters that open tokens.
TEST(GuiHighlight, RandomBytesGiveWellFormedSpans) {
  std::mt19937 rng(20261204);
  const std::string hot = "\"'`/*#\\\n $[]{}()R r-:&@!0x.e";
  const Lang langs[] = {Lang::kGeneric,    Lang::kC,    Lang::kCpp, Lang::kPython,
                        Lang::kJavaScript, Lang::kRust, Lang::kGo,  Lang::kJava,
                        Lang::kShell,      Lang::kJson, Lang::kSql, Lang::kYaml};
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    const int len = static_cast<int>(rng() % 200);
    for (int i = 0; i < len; ++i) s += (rng() % 2) ? hot[rng() % hot.size()] : static_cast<char>(rng() % 256);
    for (Lang lang : langs) expect_well_formed(s, highlight(s, lang));
  }
}

// Linear time: 1 MB blocks built to defeat a scanner that searches ahead from every token (openers that
// never close), in every language, each well under a second (measured: a few ms each).
TEST(GuiHighlight, MegabyteBlocksOfUnclosedOpeners) {
  const std::string units[] = {"${", "#[", "R\"", "r#\"", "/*", "'", "\"", "`", "\"\"\"", "a:", "- ", "\\"};
  const Lang langs[] = {Lang::kGeneric, Lang::kCpp,  Lang::kPython, Lang::kJavaScript, Lang::kRust,
                        Lang::kShell,   Lang::kJson, Lang::kSql,    Lang::kYaml};
  for (const std::string& u : units) {
    std::string s;
    while (s.size() < (1u << 20)) s += u;
    for (Lang lang : langs) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<Span> spans = highlight(s, lang);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      expect_well_formed(s, spans);
      EXPECT_LT(ms, 1000.0) << lang_name(lang) << " on repeated " << u;
    }
  }
}

}  // namespace
}  // namespace qc::gui::hl
