#include "highlight.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <string>
#include <unordered_set>

namespace qc::gui::hl {
namespace {

using Words = std::unordered_set<std::string_view>;

// What sets one language family apart. Read-only after construction (function-local statics).
struct Rules {
  Words keywords;
  Words types;
  Words literals;                          // true, false, null, None...: drawn as numbers
  std::array<std::string_view, 2> line{};  // line comment openers
  bool hash_comment_after_space = false;   // '#' starts a comment only at a line start or after a blank
  bool block_comment = false;              // /* */
  bool nested_block = false;               // /* /* */ */ (Rust)
  bool preproc_lines = false;              // '#' first on a line: the whole line (C, C++)
  bool triple_quotes = false;              // """ and ''' strings over several lines (Python, Java """)
  bool single_quote = true;                // '...' is a string (or character) literal
  bool rust_quote = false;                 // 'a' is a char, 'a a lifetime
  bool backtick_multiline = false;         // `...` over several lines (JS templates, Go raw, shell)
  bool quotes_multiline = false;           // "..." and '...' over several lines (shell)
  bool single_quote_escapes = true;        // backslash escapes inside '...' (not in shell/SQL)
  bool doubled_quote_escape = false;       // '' inside '...' (SQL)
  bool capitalised_types = false;          // Name is a type (Rust, Java, JS/TS, Python)
  bool dollar_vars = false;                // $x ${x} $1 (shell)
  bool dollar_in_names = false;            // JS identifiers
  bool at_meta = false;                    // @decorator / @Annotation
  bool rust_meta = false;                  // #[attr], #![attr], macro!
  bool cpp_raw = false;                    // R"delim(...)delim"
  bool rust_raw = false;                   // r"..." r#"..."#
  bool keys = false;                       // JSON "key": / YAML key:
  bool yaml = false;                       // YAML: anchors, aliases, block scalars left plain
  bool case_insensitive = false;           // SQL keywords
  bool punct = true;
};

Words words(std::initializer_list<std::string_view> list) {
  return Words(list.begin(), list.end());
}

const Rules& c_like(Lang lang) {
  static const Rules c = [] {
    Rules r;
    r.keywords = words({"auto",      "break",          "case",         "const",    "continue", "default",
                        "do",        "else",           "enum",         "extern",   "for",      "goto",
                        "if",        "inline",         "register",     "restrict", "return",   "sizeof",
                        "static",    "struct",         "switch",       "typedef",  "union",    "volatile",
                        "while",     "_Alignas",       "_Alignof",     "_Atomic",  "_Bool",    "_Generic",
                        "_Noreturn", "_Static_assert", "_Thread_local"});
    r.types = words({"char",      "double",   "float",   "int",     "long",     "short",     "signed",
                     "unsigned",  "void",     "bool",    "size_t",  "ssize_t",  "ptrdiff_t", "int8_t",
                     "int16_t",   "int32_t",  "int64_t", "uint8_t", "uint16_t", "uint32_t",  "uint64_t",
                     "uintptr_t", "intptr_t", "FILE",    "wchar_t"});
    r.literals = words({"NULL", "true", "false"});
    r.line = {"//", ""};
    r.block_comment = true;
    r.preproc_lines = true;
    return r;
  }();
  static const Rules cpp = [] {
    Rules r = c;
    for (std::string_view k : {"alignas",   "alignof",       "and",
                               "asm",       "catch",         "class",
                               "co_await",  "co_return",     "co_yield",
                               "concept",   "consteval",     "constexpr",
                               "constinit", "const_cast",    "decltype",
                               "delete",    "dynamic_cast",  "explicit",
                               "export",    "friend",        "mutable",
                               "namespace", "new",           "noexcept",
                               "not",       "operator",      "or",
                               "override",  "final",         "private",
                               "protected", "public",        "reinterpret_cast",
                               "requires",  "static_assert", "static_cast",
                               "template",  "this",          "thread_local",
                               "throw",     "try",           "typeid",
                               "typename",  "using",         "virtual",
                               "import",    "module"})
      r.keywords.insert(k);
    for (std::string_view t :
         {"char8_t", "char16_t", "char32_t", "string", "string_view", "vector", "map", "unordered_map", "set",
          "unique_ptr", "shared_ptr", "optional", "array", "span"})
      r.types.insert(t);
    r.literals.insert("nullptr");
    r.cpp_raw = true;
    return r;
  }();
  static const Rules java = [] {
    Rules r;
    r.keywords =
        words({"abstract",  "assert",  "break",     "case",    "catch",      "class",        "const",
               "continue",  "default", "do",        "else",    "enum",       "extends",      "final",
               "finally",   "for",     "goto",      "if",      "implements", "import",       "instanceof",
               "interface", "native",  "new",       "package", "private",    "protected",    "public",
               "return",    "static",  "strictfp",  "super",   "switch",     "synchronized", "this",
               "throw",     "throws",  "transient", "try",     "volatile",   "while",        "var",
               "record",    "yield",   "sealed",    "permits"});
    r.types = words({"boolean", "byte", "char", "double", "float", "int", "long", "short", "void"});
    r.literals = words({"true", "false", "null"});
    r.line = {"//", ""};
    r.block_comment = true;
    r.triple_quotes = true;
    r.capitalised_types = true;
    r.at_meta = true;
    return r;
  }();
  static const Rules go = [] {
    Rules r;
    r.keywords = words({"break",  "case",        "chan", "const",   "continue", "default", "defer",
                        "else",   "fallthrough", "for",  "func",    "go",       "goto",    "if",
                        "import", "interface",   "map",  "package", "range",    "return",  "select",
                        "struct", "switch",      "type", "var"});
    r.types = words({"bool", "byte",  "complex64", "complex128", "error",  "float32", "float64",
                     "int",  "int8",  "int16",     "int32",      "int64",  "rune",    "string",
                     "uint", "uint8", "uint16",    "uint32",     "uint64", "uintptr", "any"});
    r.literals = words({"true", "false", "nil", "iota"});
    r.line = {"//", ""};
    r.block_comment = true;
    r.backtick_multiline = true;
    return r;
  }();
  static const Rules rust = [] {
    Rules r;
    r.keywords = words({"as",     "async", "await",  "break",  "const",  "continue", "crate", "dyn",
                        "else",   "enum",  "extern", "fn",     "for",    "if",       "impl",  "in",
                        "let",    "loop",  "match",  "mod",    "move",   "mut",      "pub",   "ref",
                        "return", "self",  "Self",   "static", "struct", "super",    "trait", "type",
                        "unsafe", "use",   "where",  "while",  "yield"});
    r.types =
        words({"bool", "char", "f32", "f64", "i8",   "i16",   "i32",    "i64", "i128",   "isize",  "str",
               "u8",   "u16",  "u32", "u64", "u128", "usize", "String", "Vec", "Option", "Result", "Box"});
    r.literals = words({"true", "false", "None", "Some", "Ok", "Err"});
    r.line = {"//", ""};
    r.block_comment = true;
    r.nested_block = true;
    r.rust_quote = true;
    r.capitalised_types = true;
    r.rust_meta = true;
    r.rust_raw = true;
    return r;
  }();
  static const Rules js = [] {
    Rules r;
    r.keywords = words({"async",     "await",      "break",   "case",     "catch",     "class",     "const",
                        "continue",  "debugger",   "default", "delete",   "do",        "else",      "export",
                        "extends",   "finally",    "for",     "from",     "function",  "if",        "import",
                        "in",        "instanceof", "let",     "new",      "of",        "return",    "static",
                        "super",     "switch",     "this",    "throw",    "try",       "typeof",    "var",
                        "void",      "while",      "with",    "yield",    "as",        "interface", "type",
                        "enum",      "implements", "private", "public",   "protected", "readonly",  "declare",
                        "namespace", "abstract",   "keyof",   "satisfies"});
    r.types = words({"string", "number", "boolean", "any", "unknown", "never", "object", "bigint", "symbol"});
    r.literals = words({"true", "false", "null", "undefined", "NaN", "Infinity"});
    r.line = {"//", ""};
    r.block_comment = true;
    r.backtick_multiline = true;
    r.capitalised_types = true;
    r.dollar_in_names = true;
    r.at_meta = true;
    return r;
  }();
  switch (lang) {
    case Lang::kC:
      return c;
    case Lang::kCpp:
      return cpp;
    case Lang::kJava:
      return java;
    case Lang::kGo:
      return go;
    case Lang::kRust:
      return rust;
    default:
      return js;
  }
}

const Rules& rules(Lang lang) {
  static const Rules python = [] {
    Rules r;
    r.keywords =
        words({"and",    "as",   "assert", "async",  "await",    "break", "class", "continue", "def",
               "del",    "elif", "else",   "except", "finally",  "for",   "from",  "global",   "if",
               "import", "in",   "is",     "lambda", "nonlocal", "not",   "or",    "pass",     "raise",
               "return", "try",  "while",  "with",   "yield",    "match", "case"});
    r.types = words({"int", "float", "str", "bytes", "bool", "list", "dict", "set", "tuple", "object", "type",
                     "complex", "frozenset", "bytearray"});
    r.literals = words({"True", "False", "None"});
    r.line = {"#", ""};
    r.triple_quotes = true;
    r.capitalised_types = true;
    r.at_meta = true;
    return r;
  }();
  static const Rules shell = [] {
    Rules r;
    r.keywords =
        words({"if",      "then", "else",  "elif",  "fi",       "for",    "while",  "until",  "do",
               "done",    "case", "esac",  "in",    "function", "return", "local",  "export", "readonly",
               "declare", "set",  "unset", "shift", "exit",     "source", "alias",  "break",  "continue",
               "trap",    "eval", "exec",  "sudo",  "echo",     "cd",     "printf", "read",   "test"});
    r.literals = words({"true", "false"});
    r.line = {"#", ""};
    r.hash_comment_after_space = true;
    r.backtick_multiline = true;
    r.quotes_multiline = true;
    r.single_quote_escapes = false;
    r.dollar_vars = true;
    return r;
  }();
  static const Rules json = [] {
    Rules r;
    r.literals = words({"true", "false", "null"});
    r.single_quote = false;
    r.keys = true;
    return r;
  }();
  static const Rules sql = [] {
    Rules r;
    r.keywords = words({"select",  "from",       "where",       "insert",    "into",       "values",
                        "update",  "set",        "delete",      "create",    "table",      "drop",
                        "alter",   "add",        "index",       "on",        "join",       "left",
                        "right",   "inner",      "outer",       "full",      "cross",      "group",
                        "by",      "order",      "having",      "limit",     "offset",     "as",
                        "and",     "or",         "not",         "in",        "is",         "like",
                        "between", "exists",     "distinct",    "union",     "all",        "case",
                        "when",    "then",       "else",        "end",       "primary",    "key",
                        "foreign", "references", "unique",      "default",   "constraint", "begin",
                        "commit",  "rollback",   "transaction", "with",      "asc",        "desc",
                        "view",    "trigger",    "if",          "returning", "conflict",   "do",
                        "nothing", "pragma",     "explain",     "using",     "check",      "autoincrement",
                        "replace"});
    r.types = words({"int", "integer", "bigint", "smallint", "real", "float", "double", "decimal", "numeric",
                     "text", "varchar", "char", "blob", "boolean", "date", "time", "timestamp", "serial"});
    r.literals = words({"null", "true", "false"});
    r.line = {"--", ""};
    r.block_comment = true;
    r.single_quote_escapes = false;
    r.doubled_quote_escape = true;
    r.case_insensitive = true;
    return r;
  }();
  static const Rules yaml = [] {
    Rules r;
    r.literals = words({"true", "false", "null", "yes", "no", "on", "off", "True", "False", "Null", "NULL",
                        "Yes", "No", "~"});
    r.line = {"#", ""};
    r.hash_comment_after_space = true;
    r.single_quote_escapes = false;
    r.doubled_quote_escape = true;
    r.keys = true;
    r.yaml = true;
    return r;
  }();
  static const Rules generic = [] {
    Rules r;
    r.line = {"//", "#"};
    r.hash_comment_after_space = true;
    r.block_comment = true;
    r.single_quote = false;  // prose apostrophes ("don't") would open strings
    return r;
  }();
  switch (lang) {
    case Lang::kPython:
      return python;
    case Lang::kShell:
      return shell;
    case Lang::kJson:
      return json;
    case Lang::kSql:
      return sql;
    case Lang::kYaml:
      return yaml;
    case Lang::kGeneric:
      return generic;
    default:
      return c_like(lang);
  }
}

bool is_digit(unsigned char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_start(unsigned char c, bool dollar) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80 || (dollar && c == '$');
}
bool is_ident(unsigned char c, bool dollar) {
  return is_ident_start(c, dollar) || is_digit(c);
}
bool is_blank(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\r';
}
bool is_punct(unsigned char c) {
  return std::string_view("{}[]()<>;:,.+-*/%=!&|^~?@#\\").find(static_cast<char>(c)) !=
         std::string_view::npos;
}

class Scanner {
 public:
  Scanner(std::string_view s, const Rules& r) : s_(s), r_(r), n_(s.size()) {}

  std::vector<Span> run() {
    bool line_start = true;  // only blanks since the last newline
    size_t i = 0;
    while (i < n_) {
      const unsigned char c = at(i);
      const size_t before = i;
      if (c == '\n') {
        line_start = true;
        ++i;
        continue;
      }
      if (is_blank(c)) {
        ++i;
        continue;
      }
      i = token(i, line_start);
      if (i <= before) i = before + 1;  // every step moves forward
      line_start = false;
    }
    return std::move(out_);
  }

 private:
  unsigned char at(size_t i) const { return i < n_ ? static_cast<unsigned char>(s_[i]) : 0; }
  bool starts(size_t i, std::string_view p) const { return !p.empty() && s_.substr(i, p.size()) == p; }

  void emit(size_t b, size_t e, Kind k) {
    if (e <= b) return;
    if (!out_.empty() && out_.back().kind == k && out_.back().end == b) {
      out_.back().end = static_cast<uint32_t>(e);
      return;
    }
    out_.push_back({static_cast<uint32_t>(b), static_cast<uint32_t>(e), k});
  }

  size_t line_end(size_t i) const {
    const size_t e = s_.find('\n', i);
    return e == std::string_view::npos ? n_ : e;
  }

  // Past the first `ch` from i on the same line, else the line's end. The caller consumes what this
  // scanned, so repeated calls stay linear.
  size_t scan_to(size_t i, char ch) const {
    size_t j = i;
    while (j < n_ && s_[j] != '\n') {
      if (s_[j] == ch) return j + 1;
      ++j;
    }
    return j;
  }

  // A quoted literal from the quote at i: to its closing quote, or to the end of the line (the end of the
  // block when multi-line); a backslash escapes the next byte.
  size_t quoted(size_t i, char q, bool multiline, bool escapes) {
    size_t j = i + 1;
    while (j < n_) {
      const char ch = s_[j];
      if (escapes && ch == '\\' && j + 1 < n_) {
        j += 2;
        continue;
      }
      if (ch == q) {
        if (r_.doubled_quote_escape && at(j + 1) == static_cast<unsigned char>(q)) {
          j += 2;
          continue;
        }
        ++j;
        break;
      }
      if (ch == '\n' && !multiline) break;
      ++j;
    }
    emit(i, j, Kind::kString);
    return j;
  }

  // From i to the first `close` at or after `from` (inclusive), or the end of the block.
  size_t until(size_t i, size_t from, std::string_view close, Kind k) {
    const size_t e = s_.find(close, from);
    const size_t j = e == std::string_view::npos ? n_ : e + close.size();
    emit(i, j, k);
    return j;
  }

  size_t block_comment(size_t i) {
    if (!r_.nested_block) return until(i, i + 2, "*/", Kind::kComment);
    int depth = 0;
    size_t j = i;
    while (j < n_) {
      if (s_[j] == '/' && at(j + 1) == '*') {
        ++depth;
        j += 2;
      } else if (s_[j] == '*' && at(j + 1) == '/') {
        j += 2;
        if (--depth == 0) break;
      } else {
        ++j;
      }
    }
    emit(i, j, Kind::kComment);
    return j;
  }

  size_t number(size_t i) {
    size_t j = at(i) == '-' ? i + 1 : i;
    while (j < n_) {
      const unsigned char ch = at(j);
      if (is_ident(ch, false) && ch < 0x80) {
        const unsigned char lower = static_cast<unsigned char>(std::tolower(ch));
        ++j;
        // An exponent's sign: 1e-5, 0x1p+3 (not in hex digits like 0xe+1, which is rare enough).
        if ((lower == 'e' || lower == 'p') && (at(j) == '+' || at(j) == '-') && is_digit(at(j + 1))) ++j;
      } else if (ch == '.' && is_digit(at(j + 1))) {
        ++j;
      } else if (ch == '.' && j > i && at(j + 1) != '.' && !is_ident_start(at(j + 1), false)) {
        ++j;  // "1." but not "1..2" (ranges) or "1.method"
      } else if (ch == '\'' && r_.cpp_raw && is_digit(at(j + 1))) {
        ++j;  // C++ digit separators: 1'000'000
      } else {
        break;
      }
    }
    emit(i, j, Kind::kNumber);
    return j;
  }

  bool word_is(const Words& set, std::string_view w) const {
    if (set.empty()) return false;
    if (!r_.case_insensitive) return set.count(w) > 0;
    if (w.size() > 24) return false;
    std::string lower(w);
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return set.count(lower) > 0;
  }

  size_t identifier(size_t i, bool line_start) {
    size_t j = i;
    while (j < n_ && is_ident(at(j), r_.dollar_in_names)) ++j;
    // YAML and shell names may hold '-' (a-key:, --flag).
    if (r_.yaml) {
      while (j < n_ && (is_ident(at(j), false) || at(j) == '-' || at(j) == '.')) ++j;
    }
    const std::string_view w = s_.substr(i, j - i);
    // C++ and Rust raw strings.
    if (r_.cpp_raw && at(j) == '"' && (w == "R" || w == "LR" || w == "uR" || w == "UR" || w == "u8R"))
      return cpp_raw(i, j);
    if (r_.rust_raw && (w == "r" || w == "br") && (at(j) == '"' || at(j) == '#')) {
      const size_t e = rust_raw(i, j);
      if (e != 0) return e;
    }
    if (r_.keys && line_start && key_follows(j)) {
      emit(i, j, Kind::kType);
      return j;
    }
    if (word_is(r_.literals, w)) {
      emit(i, j, Kind::kNumber);
    } else if (word_is(r_.keywords, w)) {
      emit(i, j, Kind::kKeyword);
    } else if (word_is(r_.types, w)) {
      emit(i, j, Kind::kType);
    } else if (r_.rust_meta && at(j) == '!' && at(j + 1) != '=') {
      emit(i, j + 1, Kind::kFunction);  // println!
      return j + 1;
    } else if (at(j) == '(' && !r_.keys) {
      emit(i, j, Kind::kFunction);
    } else if (r_.capitalised_types && w[0] >= 'A' && w[0] <= 'Z' && has_lower(w)) {
      emit(i, j, Kind::kType);
    }
    return j;
  }

  static bool has_lower(std::string_view w) {
    return std::any_of(w.begin(), w.end(), [](char ch) { return ch >= 'a' && ch <= 'z'; });
  }

  // JSON "key": and YAML key: (blanks allowed before the colon; YAML needs a blank or the line end after).
  bool key_follows(size_t j) const {
    while (j < n_ && is_blank(at(j))) ++j;
    if (at(j) != ':') return false;
    if (!r_.yaml) return true;
    const unsigned char next = at(j + 1);
    return next == 0 || next == ' ' || next == '\t' || next == '\n' || next == '\r';
  }

  // R"delim( ... )delim": the delimiter is at most 16 characters, no blanks or parentheses.
  size_t cpp_raw(size_t i, size_t quote) {
    size_t j = quote + 1;
    while (j < n_ && j - quote <= 17 && s_[j] != '(' && s_[j] != ')' && s_[j] != '\\' && !is_blank(at(j)) &&
           s_[j] != '\n')
      ++j;
    if (at(j) != '(') {  // not a raw string after all: an ordinary one with its prefix
      const size_t e = quoted(quote, '"', false, true);
      out_.back().begin = static_cast<uint32_t>(i);
      return e;
    }
    std::string close = ")";
    close.append(s_.substr(quote + 1, j - quote - 1));
    close += '"';
    return until(i, j + 1, close, Kind::kString);
  }

  // r"..." r#"..."# (any number of #). 0 when it is not a raw string after all (r#ident).
  size_t rust_raw(size_t i, size_t j) {
    size_t hashes = 0;
    while (at(j) == '#') {
      ++hashes;
      ++j;
    }
    if (at(j) != '"' || hashes > 16) return 0;
    std::string close = "\"";
    close.append(hashes, '#');
    return until(i, j + 1, close, Kind::kString);
  }

  size_t token(size_t i, bool line_start) {
    const unsigned char c = at(i);
    // Comments first: "//", "#", "--".
    for (std::string_view opener : r_.line) {
      if (!starts(i, opener)) continue;
      if (opener == "#") {
        if (r_.rust_meta) break;
        if (r_.hash_comment_after_space && !(line_start || i == 0 || is_blank(at(i - 1)))) break;
        if (r_.dollar_vars && i > 0 && at(i - 1) == '$') break;
      }
      const size_t e = line_end(i);
      emit(i, e, Kind::kComment);
      return e;
    }
    if (r_.block_comment && c == '/' && at(i + 1) == '*') return block_comment(i);
    if (r_.preproc_lines && c == '#' && line_start) {
      // To the end of the line, continued by a trailing backslash; a "//" comment on it stays a comment.
      size_t j = i;
      while (j < n_ && s_[j] != '\n') {
        if (s_[j] == '/' && (at(j + 1) == '/' || at(j + 1) == '*')) break;
        if (s_[j] == '\\' && at(j + 1) == '\n') ++j;
        ++j;
      }
      emit(i, j, Kind::kPreproc);
      return j;
    }
    if (r_.rust_meta && c == '#' && (at(i + 1) == '[' || (at(i + 1) == '!' && at(i + 2) == '['))) {
      const size_t e = scan_to(i, ']');
      emit(i, e, Kind::kPreproc);
      return e;
    }
    if (r_.triple_quotes && (c == '"' || (c == '\'' && r_.single_quote)) && at(i + 1) == c &&
        at(i + 2) == c) {
      // """...""": to the closing triple quote; a backslash escapes the next byte.
      size_t j = i + 3;
      while (j < n_) {
        if (s_[j] == '\\') {
          j += 2;
          continue;
        }
        if (at(j) == c && at(j + 1) == c && at(j + 2) == c) {
          j += 3;
          break;
        }
        ++j;
      }
      j = std::min(j, n_);
      emit(i, j, Kind::kString);
      return j;
    }
    if (c == '"') {
      const size_t e = quoted(i, '"', r_.quotes_multiline, true);
      if (r_.keys && key_follows(e)) out_.back().kind = Kind::kType;
      return e;
    }
    if (c == '\'' && r_.rust_quote) {
      // 'x' '\n' '\u{1F600}' are characters; 'a (no closing quote right after one character) a lifetime.
      if (at(i + 1) == '\\') return quoted(i, '\'', false, true);
      size_t k = i + 1;
      if (k < n_ && s_[k] != '\n') {
        unsigned char lead = at(k);
        k += lead < 0x80 ? 1 : (lead >> 5) == 6 ? 2 : (lead >> 4) == 14 ? 3 : (lead >> 3) == 30 ? 4 : 1;
        if (at(k) == '\'') {
          emit(i, k + 1, Kind::kString);
          return k + 1;
        }
      }
      size_t j = i + 1;
      while (j < n_ && is_ident(at(j), false)) ++j;
      emit(i, j, Kind::kPreproc);
      return j;
    }
    if (c == '\'' && r_.single_quote) return quoted(i, '\'', r_.quotes_multiline, r_.single_quote_escapes);
    if (c == '`' && (r_.backtick_multiline || r_.case_insensitive))
      return quoted(i, '`', r_.backtick_multiline, !r_.dollar_vars);
    if (r_.dollar_vars && c == '$') {
      size_t j = i + 1;
      if (at(j) == '{') {
        j = scan_to(j, '}');
      } else if (is_digit(at(j)) ||
                 std::string_view("@#?$!*-").find(static_cast<char>(at(j))) != std::string_view::npos) {
        if (at(j) != 0) ++j;
      } else {
        while (j < n_ && is_ident(at(j), false)) ++j;
      }
      if (j == i + 1) {
        emit(i, j, Kind::kPunct);
      } else {
        emit(i, j, Kind::kPreproc);
      }
      return j;
    }
    if (r_.yaml && (c == '&' || c == '*') && is_ident(at(i + 1), false)) {
      size_t j = i + 1;
      while (j < n_ && (is_ident(at(j), false) || at(j) == '-')) ++j;
      emit(i, j, Kind::kPreproc);
      return j;
    }
    if (r_.at_meta && c == '@' && is_ident_start(at(i + 1), false)) {
      size_t j = i + 1;
      while (j < n_ && (is_ident(at(j), false) || at(j) == '.')) ++j;
      emit(i, j, Kind::kPreproc);
      return j;
    }
    if (is_digit(c) || (c == '.' && is_digit(at(i + 1)))) {
      // Not inside a name (x1 was taken whole by identifier()), so a digit starts a number.
      return number(i);
    }
    if (c == '-' && r_.yaml && is_digit(at(i + 1))) return number(i);
    if (is_ident_start(c, r_.dollar_in_names) || (r_.yaml && c == '~')) {
      if (c == '~') {
        emit(i, i + 1, Kind::kNumber);
        return i + 1;
      }
      return identifier(i, line_start || (r_.yaml && after_list_dash(i)));
    }
    if (r_.punct && is_punct(c)) {
      emit(i, i + 1, Kind::kPunct);
      return i + 1;
    }
    return i + 1;  // anything else (control bytes, stray quotes) is plain
  }

  // YAML "- key: value": the key after a list dash counts as at a line start.
  bool after_list_dash(size_t i) const {
    size_t k = i;
    while (k > 0 && is_blank(at(k - 1))) --k;
    if (k == 0 || at(k - 1) != '-') return false;
    --k;
    while (k > 0 && is_blank(at(k - 1))) --k;
    return k == 0 || at(k - 1) == '\n';
  }

  std::string_view s_;
  const Rules& r_;
  size_t n_;
  std::vector<Span> out_;
};

}  // namespace

Lang lang_from_label(std::string_view label) {
  // The first word of the info string, lower-case ("Python title=a.py" -> "python"); "{.cpp}" -> "cpp".
  while (!label.empty() && (label.front() == '{' || label.front() == '.' || label.front() == ' '))
    label.remove_prefix(1);
  const size_t end = label.find_first_of(" \t,{}");
  std::string w(label.substr(0, end == std::string_view::npos ? label.size() : end));
  if (w.size() > 24) return Lang::kGeneric;
  for (char& ch : w) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static const std::pair<std::string_view, Lang> kNames[] = {
      {"c", Lang::kC},
      {"h", Lang::kC},
      {"cpp", Lang::kCpp},
      {"c++", Lang::kCpp},
      {"cxx", Lang::kCpp},
      {"cc", Lang::kCpp},
      {"hpp", Lang::kCpp},
      {"cuda", Lang::kCpp},
      {"cu", Lang::kCpp},
      {"objc", Lang::kC},
      {"python", Lang::kPython},
      {"py", Lang::kPython},
      {"python3", Lang::kPython},
      {"py3", Lang::kPython},
      {"pycon", Lang::kPython},
      {"javascript", Lang::kJavaScript},
      {"js", Lang::kJavaScript},
      {"jsx", Lang::kJavaScript},
      {"mjs", Lang::kJavaScript},
      {"typescript", Lang::kJavaScript},
      {"ts", Lang::kJavaScript},
      {"tsx", Lang::kJavaScript},
      {"node", Lang::kJavaScript},
      {"rust", Lang::kRust},
      {"rs", Lang::kRust},
      {"go", Lang::kGo},
      {"golang", Lang::kGo},
      {"java", Lang::kJava},
      {"kotlin", Lang::kJava},
      {"bash", Lang::kShell},
      {"sh", Lang::kShell},
      {"shell", Lang::kShell},
      {"zsh", Lang::kShell},
      {"console", Lang::kShell},
      {"shell-session", Lang::kShell},
      {"json", Lang::kJson},
      {"jsonc", Lang::kJson},
      {"json5", Lang::kJson},
      {"sql", Lang::kSql},
      {"sqlite", Lang::kSql},
      {"postgresql", Lang::kSql},
      {"mysql", Lang::kSql},
      {"yaml", Lang::kYaml},
      {"yml", Lang::kYaml},
  };
  for (const auto& [name, lang] : kNames)
    if (w == name) return lang;
  return Lang::kGeneric;
}

const char* lang_name(Lang lang) {
  switch (lang) {
    case Lang::kC:
      return "C";
    case Lang::kCpp:
      return "C++";
    case Lang::kPython:
      return "Python";
    case Lang::kJavaScript:
      return "JavaScript";
    case Lang::kRust:
      return "Rust";
    case Lang::kGo:
      return "Go";
    case Lang::kJava:
      return "Java";
    case Lang::kShell:
      return "shell";
    case Lang::kJson:
      return "JSON";
    case Lang::kSql:
      return "SQL";
    case Lang::kYaml:
      return "YAML";
    case Lang::kGeneric:
      break;
  }
  return "text";
}

std::vector<Span> highlight(std::string_view code, Lang lang) {
  if (code.size() >= std::numeric_limits<uint32_t>::max()) return {};
  return Scanner(code, rules(lang)).run();
}

}  // namespace qc::gui::hl
