#include "latex_text.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_map>
#include <utility>

namespace qc::gui::tex {
namespace {

using Table = std::unordered_map<std::string_view, std::string_view>;

// \name -> text. Read-only after construction.
const Table& symbols() {
  static const Table t = {
      // Greek
      {"alpha", "α"},
      {"beta", "β"},
      {"gamma", "γ"},
      {"delta", "δ"},
      {"epsilon", "ϵ"},
      {"varepsilon", "ε"},
      {"zeta", "ζ"},
      {"eta", "η"},
      {"theta", "θ"},
      {"vartheta", "ϑ"},
      {"iota", "ι"},
      {"kappa", "κ"},
      {"lambda", "λ"},
      {"mu", "μ"},
      {"nu", "ν"},
      {"xi", "ξ"},
      {"omicron", "ο"},
      {"pi", "π"},
      {"varpi", "ϖ"},
      {"rho", "ρ"},
      {"varrho", "ϱ"},
      {"sigma", "σ"},
      {"varsigma", "ς"},
      {"tau", "τ"},
      {"upsilon", "υ"},
      {"phi", "ϕ"},
      {"varphi", "φ"},
      {"chi", "χ"},
      {"psi", "ψ"},
      {"omega", "ω"},
      {"Gamma", "Γ"},
      {"Delta", "Δ"},
      {"Theta", "Θ"},
      {"Lambda", "Λ"},
      {"Xi", "Ξ"},
      {"Pi", "Π"},
      {"Sigma", "Σ"},
      {"Upsilon", "Υ"},
      {"Phi", "Φ"},
      {"Psi", "Ψ"},
      {"Omega", "Ω"},
      // relations
      {"leq", "≤"},
      {"le", "≤"},
      {"geq", "≥"},
      {"ge", "≥"},
      {"neq", "≠"},
      {"ne", "≠"},
      {"approx", "≈"},
      {"equiv", "≡"},
      {"sim", "∼"},
      {"simeq", "≃"},
      {"cong", "≅"},
      {"propto", "∝"},
      {"ll", "≪"},
      {"gg", "≫"},
      {"leqslant", "⩽"},
      {"geqslant", "⩾"},
      {"prec", "≺"},
      {"succ", "≻"},
      {"doteq", "≐"},
      {"models", "⊨"},
      {"vdash", "⊢"},
      {"perp", "⊥"},
      {"parallel", "∥"},
      {"mid", "∣"},
      {"in", "∈"},
      {"notin", "∉"},
      {"ni", "∋"},
      {"subset", "⊂"},
      {"subseteq", "⊆"},
      {"supset", "⊃"},
      {"supseteq", "⊇"},
      {"subsetneq", "⊊"},
      // operators
      {"cdot", "·"},
      {"times", "×"},
      {"div", "÷"},
      {"pm", "±"},
      {"mp", "∓"},
      {"ast", "∗"},
      {"star", "⋆"},
      {"circ", "∘"},
      {"bullet", "•"},
      {"oplus", "⊕"},
      {"ominus", "⊖"},
      {"otimes", "⊗"},
      {"odot", "⊙"},
      {"cup", "∪"},
      {"cap", "∩"},
      {"setminus", "∖"},
      {"land", "∧"},
      {"wedge", "∧"},
      {"lor", "∨"},
      {"vee", "∨"},
      {"neg", "¬"},
      {"lnot", "¬"},
      {"dagger", "†"},
      // big operators
      {"sum", "∑"},
      {"prod", "∏"},
      {"coprod", "∐"},
      {"int", "∫"},
      {"iint", "∬"},
      {"iiint", "∭"},
      {"oint", "∮"},
      {"bigcup", "⋃"},
      {"bigcap", "⋂"},
      {"bigoplus", "⊕"},
      {"bigotimes", "⊗"},
      {"bigvee", "⋁"},
      {"bigwedge", "⋀"},
      // arrows
      {"to", "→"},
      {"rightarrow", "→"},
      {"leftarrow", "←"},
      {"gets", "←"},
      {"leftrightarrow", "↔"},
      {"Rightarrow", "⇒"},
      {"Leftarrow", "⇐"},
      {"Leftrightarrow", "⇔"},
      {"implies", "⟹"},
      {"impliedby", "⟸"},
      {"iff", "⟺"},
      {"mapsto", "↦"},
      {"longrightarrow", "⟶"},
      {"longleftarrow", "⟵"},
      {"uparrow", "↑"},
      {"downarrow", "↓"},
      {"rightleftharpoons", "⇌"},
      {"hookrightarrow", "↪"},
      // misc
      {"infty", "∞"},
      {"partial", "∂"},
      {"nabla", "∇"},
      {"forall", "∀"},
      {"exists", "∃"},
      {"nexists", "∄"},
      {"emptyset", "∅"},
      {"varnothing", "∅"},
      {"ldots", "…"},
      {"dots", "…"},
      {"dotsc", "…"},
      {"dotsb", "⋯"},
      {"cdots", "⋯"},
      {"vdots", "⋮"},
      {"ddots", "⋱"},
      {"prime", "′"},
      {"angle", "∠"},
      {"triangle", "△"},
      {"hbar", "ℏ"},
      {"ell", "ℓ"},
      {"Re", "ℜ"},
      {"Im", "ℑ"},
      {"aleph", "ℵ"},
      {"wp", "℘"},
      {"degree", "°"},
      {"checkmark", "✓"},
      {"therefore", "∴"},
      {"because", "∵"},
      {"top", "⊤"},
      {"bot", "⊥"},
      {"langle", "⟨"},
      {"rangle", "⟩"},
      {"lfloor", "⌊"},
      {"rfloor", "⌋"},
      {"lceil", "⌈"},
      {"rceil", "⌉"},
      {"vert", "|"},
      {"lvert", "|"},
      {"rvert", "|"},
      {"Vert", "‖"},
      {"lVert", "‖"},
      {"rVert", "‖"},
      {"|", "‖"},
      {"lbrace", "{"},
      {"rbrace", "}"},
      {"backslash", "\\"},
      {"square", "□"},
      {"Box", "□"},
      {"qed", "∎"},
      {"sharp", "♯"},
      {"flat", "♭"},
      {"natural", "♮"},
      // escapes and spaces
      {"{", "{"},
      {"}", "}"},
      {"$", "$"},
      {"%", "%"},
      {"#", "#"},
      {"&", "&"},
      {"_", "_"},
      {",", " "},
      {":", " "},
      {";", " "},
      {">", " "},
      {" ", " "},
      {"quad", "  "},
      {"qquad", "   "},
      {"enspace", " "},
      {"thinspace", " "},
      {"!", ""},
      {"displaystyle", ""},
      {"textstyle", ""},
      {"scriptstyle", ""},
      {"limits", ""},
      {"nolimits", ""},
      {"left", ""},
      {"right", ""},
      {"middle", ""},
      {"big", ""},
      {"Big", ""},
      {"bigg", ""},
      {"Bigg", ""},
      {"bigl", ""},
      {"bigr", ""},
      {"Bigl", ""},
      {"Bigr", ""},
      {"biggl", ""},
      {"biggr", ""},
      {"Biggl", ""},
      {"Biggr", ""},
      {"nonumber", ""},
      {"notag", ""},
      {"mod", " mod "},
      {"bmod", " mod "},
  };
  return t;
}

bool is_function_name(std::string_view n) {
  static const std::unordered_map<std::string_view, bool> t = {
      {"sin", true},    {"cos", true},    {"tan", true},    {"cot", true},    {"sec", true},
      {"csc", true},    {"sinh", true},   {"cosh", true},   {"tanh", true},   {"coth", true},
      {"arcsin", true}, {"arccos", true}, {"arctan", true}, {"log", true},    {"ln", true},
      {"lg", true},     {"exp", true},    {"lim", true},    {"liminf", true}, {"limsup", true},
      {"max", true},    {"min", true},    {"sup", true},    {"inf", true},    {"det", true},
      {"dim", true},    {"ker", true},    {"arg", true},    {"deg", true},    {"gcd", true},
      {"lcm", true},    {"Pr", true},     {"hom", true},    {"argmax", true}, {"argmin", true},
      {"sgn", true},    {"tr", true},     {"rank", true},   {"diag", true},   {"span", true},
  };
  return t.count(n) > 0;
}

// Characters with a superscript / subscript form in Unicode (and the few that read fine unchanged).
const Table& superscripts() {
  static const Table t = {
      {"0", "⁰"}, {"1", "¹"}, {"2", "²"}, {"3", "³"}, {"4", "⁴"}, {"5", "⁵"}, {"6", "⁶"}, {"7", "⁷"},
      {"8", "⁸"}, {"9", "⁹"}, {"+", "⁺"}, {"-", "⁻"}, {"−", "⁻"}, {"=", "⁼"}, {"(", "⁽"}, {")", "⁾"},
      {"a", "ᵃ"}, {"b", "ᵇ"}, {"c", "ᶜ"}, {"d", "ᵈ"}, {"e", "ᵉ"}, {"f", "ᶠ"}, {"g", "ᵍ"}, {"h", "ʰ"},
      {"i", "ⁱ"}, {"j", "ʲ"}, {"k", "ᵏ"}, {"l", "ˡ"}, {"m", "ᵐ"}, {"n", "ⁿ"}, {"o", "ᵒ"}, {"p", "ᵖ"},
      {"r", "ʳ"}, {"s", "ˢ"}, {"t", "ᵗ"}, {"u", "ᵘ"}, {"v", "ᵛ"}, {"w", "ʷ"}, {"x", "ˣ"}, {"y", "ʸ"},
      {"z", "ᶻ"}, {"A", "ᴬ"}, {"B", "ᴮ"}, {"D", "ᴰ"}, {"E", "ᴱ"}, {"G", "ᴳ"}, {"H", "ᴴ"}, {"I", "ᴵ"},
      {"J", "ᴶ"}, {"K", "ᴷ"}, {"L", "ᴸ"}, {"M", "ᴹ"}, {"N", "ᴺ"}, {"O", "ᴼ"}, {"P", "ᴾ"}, {"R", "ᴿ"},
      {"T", "ᵀ"}, {"U", "ᵁ"}, {"V", "ⱽ"}, {"W", "ᵂ"}, {"β", "ᵝ"}, {"γ", "ᵞ"}, {"δ", "ᵟ"}, {"θ", "ᶿ"},
      {"φ", "ᵠ"}, {"ϕ", "ᵠ"}, {"χ", "ᵡ"}, {"′", "′"}, {"″", "″"}, {"*", "*"}, {"∗", "*"}, {"∘", "°"},
      {"°", "°"}, {"†", "†"}, {",", ","}, {" ", ""},  {"'", "′"},
  };
  return t;
}

const Table& subscripts() {
  static const Table t = {
      {"0", "₀"}, {"1", "₁"}, {"2", "₂"}, {"3", "₃"}, {"4", "₄"}, {"5", "₅"}, {"6", "₆"},
      {"7", "₇"}, {"8", "₈"}, {"9", "₉"}, {"+", "₊"}, {"-", "₋"}, {"−", "₋"}, {"=", "₌"},
      {"(", "₍"}, {")", "₎"}, {"a", "ₐ"}, {"e", "ₑ"}, {"h", "ₕ"}, {"i", "ᵢ"}, {"j", "ⱼ"},
      {"k", "ₖ"}, {"l", "ₗ"}, {"m", "ₘ"}, {"n", "ₙ"}, {"o", "ₒ"}, {"p", "ₚ"}, {"r", "ᵣ"},
      {"s", "ₛ"}, {"t", "ₜ"}, {"u", "ᵤ"}, {"v", "ᵥ"}, {"x", "ₓ"}, {"β", "ᵦ"}, {"γ", "ᵧ"},
      {"ρ", "ᵨ"}, {"φ", "ᵩ"}, {"ϕ", "ᵩ"}, {"χ", "ᵪ"}, {",", ","}, {" ", ""},
  };
  return t;
}

// \mathbb, \mathcal, \mathfrak letters that are in the Basic Multilingual Plane (the app's font atlas
// holds only that plane): the rest keep their plain letter.
std::string_view styled_letter(std::string_view font, char c) {
  static const Table bb = {{"C", "ℂ"}, {"H", "ℍ"}, {"N", "ℕ"}, {"P", "ℙ"},
                           {"Q", "ℚ"}, {"R", "ℝ"}, {"Z", "ℤ"}};
  static const Table cal = {{"B", "ℬ"}, {"E", "ℰ"}, {"F", "ℱ"}, {"H", "ℋ"}, {"I", "ℐ"}, {"L", "ℒ"},
                            {"M", "ℳ"}, {"R", "ℛ"}, {"e", "ℯ"}, {"g", "ℊ"}, {"o", "ℴ"}};
  static const Table frak = {{"C", "ℭ"}, {"H", "ℌ"}, {"I", "ℑ"}, {"R", "ℜ"}, {"Z", "ℨ"}};
  const Table* t = font == "mathbb" ? &bb : (font == "mathcal" || font == "mathscr") ? &cal : &frak;
  const auto it = t->find(std::string_view(&c, 1));
  return it == t->end() ? std::string_view() : it->second;
}

size_t utf8_len(unsigned char c) {
  return c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
}

// One character (a UTF-8 sequence, or a single invalid byte) of s at i.
std::string_view char_at(std::string_view s, size_t i) {
  size_t n = utf8_len(static_cast<unsigned char>(s[i]));
  if (i + n > s.size()) n = 1;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return s.substr(i, 1);
  return s.substr(i, n);
}

bool one_char(std::string_view s) {
  return !s.empty() && char_at(s, 0).size() == s.size();
}

// A fraction's part that needs no parentheses: one character, or a number or a name, with sub- and
// superscripts (xₙ, e², α₁): ASCII letters, digits and '.', and any non-ASCII character that is not an
// operator (U+00B1 ±, U+00B7 ·, U+00D7 ×, U+00F7 ÷, arrows and math operators U+2190..U+22FF).
bool simple(std::string_view s) {
  if (one_char(s)) return true;
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size();) {
    const std::string_view ch = char_at(s, i);
    i += ch.size();
    if (ch.size() == 1) {
      if (!std::isalnum(static_cast<unsigned char>(ch[0])) && ch[0] != '.') return false;
      continue;
    }
    if (ch == "±" || ch == "·" || ch == "×" || ch == "÷") return false;
    if (ch.size() == 3) {
      const unsigned cp = ((static_cast<unsigned char>(ch[0]) & 0x0Fu) << 12) |
                          ((static_cast<unsigned char>(ch[1]) & 0x3Fu) << 6) |
                          (static_cast<unsigned char>(ch[2]) & 0x3Fu);
      if (cp >= 0x2190 && cp <= 0x22FF) return false;
    }
  }
  return true;
}

bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

constexpr int kMaxDepth = 32;  // nesting deeper than this (never seen in real math) is copied as source

enum class Env { kPlain, kMatrix, kCases };

class Converter {
 public:
  explicit Converter(std::string_view s) : s_(s) {}

  std::string run() {
    std::string out;
    seq(out, 0, false);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    size_t lead = 0;
    while (lead < out.size() && out[lead] == ' ') ++lead;
    return out.substr(lead);
  }

 private:
  bool more() const { return i_ < s_.size(); }
  char peek() const { return more() ? s_[i_] : '\0'; }

  void skip_blanks() {
    while (more() && is_blank(s_[i_])) ++i_;
  }

  // Converts up to the closing brace of the group (consumed) when in_group, else to the end.
  void seq(std::string& out, int depth, bool in_group) {
    while (more()) {
      const char c = s_[i_];
      if (c == '}') {
        ++i_;
        if (in_group) return;
        out += '}';  // a stray closer
      } else if (c == '{') {
        ++i_;
        group(out, depth + 1);
      } else if (c == '^' || c == '_') {
        ++i_;
        script(out, atom(depth + 1), c == '^');
      } else if (c == '\\') {
        command(out, depth);
      } else if (c == '&') {
        ++i_;
        out += env_.empty() || env_.back() == Env::kPlain ? "" : ", ";
      } else if (c == '~') {
        ++i_;
        out += ' ';
      } else if (is_blank(c)) {
        ++i_;
        if (!out.empty() && out.back() != ' ') out += ' ';
      } else if (c == '\'') {
        ++i_;
        out += "′";  // f'(x)
      } else {
        const std::string_view ch = char_at(s_, i_);
        out.append(ch);
        i_ += ch.size();
      }
    }
  }

  // After an opening brace: its content, then the closing brace. Too deep: the source as it is.
  void group(std::string& out, int depth) {
    if (depth > kMaxDepth) {
      int open = 1;
      const size_t from = i_;
      while (more() && open > 0) {
        if (s_[i_] == '{') ++open;
        if (s_[i_] == '}') --open;
        ++i_;
      }
      out += '{';
      out.append(s_.substr(from, i_ - from));
      return;
    }
    seq(out, depth, true);
  }

  // An argument: a group, a command, or one character (blanks before it skipped).
  std::string atom(int depth) {
    std::string a;
    skip_blanks();
    if (!more()) return a;
    if (s_[i_] == '{') {
      ++i_;
      group(a, depth);
    } else if (s_[i_] == '\\') {
      command(a, depth);
    } else if (s_[i_] != '}' && s_[i_] != '^' && s_[i_] != '_') {
      const std::string_view ch = char_at(s_, i_);
      a.append(ch);
      i_ += ch.size();
    }
    while (!a.empty() && a.back() == ' ') a.pop_back();
    return a;
  }

  // x^{...} and x_{...}: the Unicode super/subscript characters when every character has one, else
  // ^c for one character and ^(...) for more.
  void script(std::string& out, const std::string& a, bool sup) {
    const Table& t = sup ? superscripts() : subscripts();
    std::string mapped;
    bool all = !a.empty();
    for (size_t k = 0; k < a.size() && all;) {
      const std::string_view ch = char_at(a, k);
      const auto it = t.find(ch);
      if (it == t.end()) {
        all = false;
      } else {
        mapped.append(it->second);
      }
      k += ch.size();
    }
    if (all) {
      out += mapped;
    } else if (one_char(a)) {
      out += sup ? '^' : '_';
      out += a;
    } else {
      out += sup ? "^(" : "_(";
      out += a;
      out += ')';
    }
  }

  // {name} after \begin / \end (at most 32 characters), or empty.
  std::string_view env_name() {
    skip_blanks();
    if (peek() != '{') return {};
    const size_t from = i_ + 1;
    size_t j = from;
    while (j < s_.size() && j - from <= 32 && s_[j] != '}') ++j;
    if (j >= s_.size() || s_[j] != '}') return {};
    i_ = j + 1;
    return s_.substr(from, j - from);
  }

  static std::string_view env_delim(std::string_view name, bool open) {
    if (name == "pmatrix") return open ? "(" : ")";
    if (name == "bmatrix") return open ? "[" : "]";
    if (name == "Bmatrix") return open ? "{" : "}";
    if (name == "vmatrix") return "|";
    if (name == "Vmatrix") return "‖";
    if (name == "cases") return open ? "{ " : "";
    return "";
  }

  void command(std::string& out, int depth) {
    ++i_;  // the backslash
    if (!more()) {
      out += '\\';
      return;
    }
    std::string_view name;
    const size_t from = i_;
    if (is_letter(s_[i_])) {
      while (more() && is_letter(s_[i_])) ++i_;
      name = s_.substr(from, i_ - from);
    } else {
      name = char_at(s_, i_);
      i_ += name.size();
    }
    if (depth > kMaxDepth) {
      out += '\\';
      out.append(name);
      return;
    }
    if (name == "\\") {  // a line break (aligned equations, matrix rows)
      out += "; ";
      return;
    }
    if (const auto it = symbols().find(name); it != symbols().end()) {
      out.append(it->second);
      if ((name == "left" || name == "right") && peek() == '.') ++i_;  // \left. shows nothing
      return;
    }
    if (is_function_name(name)) {
      out.append(name);
      return;
    }
    if (name == "frac" || name == "dfrac" || name == "tfrac" || name == "cfrac") {
      const std::string a = atom(depth + 1);
      const std::string b = atom(depth + 1);
      out += simple(a) ? a : "(" + a + ")";
      out += '/';
      out += simple(b) ? b : "(" + b + ")";
      return;
    }
    if (name == "binom" || name == "dbinom" || name == "tbinom") {
      const std::string a = atom(depth + 1);
      const std::string b = atom(depth + 1);
      out += "C(" + a + ", " + b + ")";
      return;
    }
    if (name == "sqrt") {
      std::string index;
      skip_blanks();
      if (peek() == '[') {
        const size_t close = s_.substr(i_, 18).find(']');
        if (close != std::string_view::npos) {
          index = Converter(s_.substr(i_ + 1, close - 1)).run();
          i_ += close + 1;
        }
      }
      const std::string a = atom(depth + 1);
      if (index.empty() || index == "2") {
        out += "√";
      } else if (index == "3") {
        out += "∛";
      } else if (index == "4") {
        out += "∜";
      } else {
        script(out, index, true);
        out += "√";
      }
      out += simple(a) ? a : "(" + a + ")";
      return;
    }
    if (name == "mathbb" || name == "mathcal" || name == "mathscr" || name == "mathfrak") {
      const std::string a = atom(depth + 1);
      for (char c : a) {
        const std::string_view styled = styled_letter(name, c);
        if (styled.empty()) {
          out += c;
        } else {
          out.append(styled);
        }
      }
      return;
    }
    if (name == "mathrm" || name == "mathbf" || name == "mathit" || name == "mathsf" || name == "mathtt" ||
        name == "boldsymbol" || name == "bm" || name == "text" || name == "textrm" || name == "textbf" ||
        name == "textit" || name == "texttt" || name == "textsf" || name == "mbox" ||
        name == "operatorname" || name == "emph" || name == "mathop") {
      out += atom(depth + 1);
      return;
    }
    if (name == "hat" || name == "bar" || name == "overline" || name == "vec" || name == "dot" ||
        name == "ddot" || name == "tilde" || name == "widehat" || name == "widetilde" ||
        name == "overrightarrow") {
      const std::string a = atom(depth + 1);
      // A combining mark after one character; the name and parentheses around more.
      const char* mark = name == "hat" || name == "widehat"       ? "\xCC\x82"
                         : name == "bar" || name == "overline"    ? "\xCC\x84"
                         : name == "dot"                          ? "\xCC\x87"
                         : name == "ddot"                         ? "\xCC\x88"
                         : name == "tilde" || name == "widetilde" ? "\xCC\x83"
                                                                  : "\xE2\x83\x97";
      if (one_char(a)) {
        out += a + mark;
      } else {
        out.append(name);
        out += "(" + a + ")";
      }
      return;
    }
    if (name == "not") {
      const std::string a = atom(depth + 1);
      out += a == "=" ? "≠" : a == "∈" ? "∉" : a == "≡" ? "≢" : a == "⊂" ? "⊄" : a == "∃" ? "∄" : "¬" + a;
      return;
    }
    if (name == "pmod") {
      out += " (mod " + atom(depth + 1) + ")";
      return;
    }
    if (name == "label" || name == "tag") {
      (void)atom(depth + 1);
      return;
    }
    if (name == "begin" || name == "end") {
      const size_t at = i_;
      const std::string_view env = env_name();
      if (!env.empty()) {
        const bool open = name == "begin";
        if (open) {
          env_.push_back(env == "cases"                                 ? Env::kCases
                         : env.find("matrix") != std::string_view::npos ? Env::kMatrix
                                                                        : Env::kPlain);
          if (env == "array") (void)atom(depth + 1);  // the column spec {cc}
        } else if (!env_.empty()) {
          env_.pop_back();
        }
        out.append(env_delim(env, open));
        return;
      }
      i_ = at;
    }
    // Unknown: the source, its brace arguments kept with their braces (converted inside).
    out += '\\';
    out.append(name);
    while (peek() == '{') {
      ++i_;
      out += '{';
      group(out, depth + 1);
      out += '}';
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  std::vector<Env> env_;
};

}  // namespace

std::string to_unicode(std::string_view latex) {
  return Converter(latex).run();
}

}  // namespace qc::gui::tex
