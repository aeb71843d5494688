// Syntax highlighting for fenced code blocks: a small tokenizer per language family (no ImGui here, so
// it is tested without a window). It marks keywords, types, strings (with escapes), numbers, comments
// (line, block, nested block), preprocessor/meta lines, function names and punctuation; everything else
// is plain. One pass over the bytes, a constant amount of work per byte (keyword look-ups hash one
// identifier; raw-string closers are at most 17 bytes): linear time. Any bytes are accepted (invalid
// UTF-8 is plain text, an unterminated string or comment runs to the end of its line or of the block),
// so a block still streaming in highlights as the finished one will, up to its last token.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace qc::gui::hl {

enum class Lang : uint8_t {
  kGeneric,  // unknown or unlabelled: strings in double quotes, numbers, // /* */ and # comments
  kC,
  kCpp,
  kPython,
  kJavaScript,  // and TypeScript
  kRust,
  kGo,
  kJava,
  kShell,  // bash, sh, zsh, console
  kJson,
  kSql,
  kYaml,
};

enum class Kind : uint8_t {
  kKeyword,
  kType,    // built-in types, capitalised names where the language uses them for types, JSON/YAML keys
  kString,  // string and character literals, escapes included
  kNumber,  // numbers and true/false/null-like literals
  kComment,
  kPreproc,   // #include lines, decorators/annotations, Rust attributes, shell $variables, YAML anchors
  kFunction,  // a name followed by "(" (Rust: "!" for macros)
  kPunct,     // operators and brackets
};

// Bytes [begin, end) of the code have `kind`. Sorted, never overlapping; bytes in no span are plain.
struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
  Kind kind = Kind::kKeyword;
  bool operator==(const Span&) const = default;
};

// The fence's info string ("cpp", "C++", "py", "ts", "console", "python title=x.py") to a language;
// anything unknown is kGeneric.
Lang lang_from_label(std::string_view label);

const char* lang_name(Lang lang);

// Blocks longer than this (4 GiB, the span offsets' range) are left plain.
std::vector<Span> highlight(std::string_view code, Lang lang);

}  // namespace qc::gui::hl
