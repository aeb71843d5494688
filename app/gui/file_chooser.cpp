#include "file_chooser.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace qc::gui::files {
namespace fs = std::filesystem;
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// Length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are not one (overlong forms,
// surrogates and code points above U+10FFFF included).
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned cp = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  const unsigned min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string first_line(std::string_view s) {
  const size_t end = s.find('\n');
  std::string line(s.substr(0, end));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string file_name(const std::string& path) {
  return fs::path(path).filename().string();
}

}  // namespace

bool natural_less(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      // Compare the runs of digits by value: skip leading zeros, then the longer run is larger.
      size_t i0 = i, j0 = j;
      while (i0 < a.size() && a[i0] == '0') ++i0;
      while (j0 < b.size() && b[j0] == '0') ++j0;
      size_t i1 = i0, j1 = j0;
      while (i1 < a.size() && is_digit(a[i1])) ++i1;
      while (j1 < b.size() && is_digit(b[j1])) ++j1;
      if (i1 - i0 != j1 - j0) return i1 - i0 < j1 - j0;
      const int c = a.substr(i0, i1 - i0).compare(b.substr(j0, j1 - j0));
      if (c != 0) return c < 0;
      i = i1, j = j1;
      continue;
    }
    const char x = lower(a[i]), y = lower(b[j]);
    if (x != y) return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
    ++i, ++j;
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;  // equal without case and zeros: the raw bytes decide, so the order is total
}

void sort_entries(std::vector<Entry>& entries) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.is_dir != b.is_dir) return a.is_dir;
    return natural_less(a.name, b.name);
  });
}

bool has_gguf_extension(std::string_view name) {
  if (name.size() < 6) return false;  // at least one character before ".gguf"
  std::string ext(name.substr(name.size() - 5));
  for (char& c : ext) c = lower(c);
  return ext == ".gguf";
}

std::string escape_name(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    const size_t n = utf8_length(bytes, i);
    if (n == 0 || c < 0x20 || c == 0x7F) {
      static const char* hex = "0123456789ABCDEF";
      out += "\\x";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
      ++i;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string normalise_path(std::string_view typed, const std::string& cwd, const std::string& home) {
  std::string_view t = typed;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  std::string s(t);
  if (s.rfind("file://", 0) == 0) {
    s = percent_decode(s.substr(7));
    if (s.rfind("localhost/", 0) == 0) s = s.substr(9);  // file://localhost/path
  }
  if (s.empty()) return cwd.empty() ? "/" : cwd;
  if (s == "~" || s.rfind("~/", 0) == 0) s = home + s.substr(1);
  fs::path p(s);
  if (p.is_relative()) p = fs::path(cwd.empty() ? "/" : cwd) / p;
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out.empty() ? "/" : out;
}

std::string parent_dir(const std::string& dir) {
  if (dir.empty() || dir == "/") return "/";
  const std::string p = fs::path(dir).parent_path().string();
  return p.empty() ? "/" : p;
}

std::string join_path(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string home_dir() {
  if (const char* h = std::getenv("HOME"); h && *h == '/') return h;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir && *pw->pw_dir == '/') return pw->pw_dir;
  return "/";
}

std::string start_folder(const std::string& current, const std::string& home) {
  if (!current.empty()) {
    std::error_code ec;
    const std::string p = normalise_path(current, home, home);
    if (fs::is_directory(p, ec)) return p;
    const std::string up = parent_dir(p);
    if (fs::is_directory(up, ec)) return up;
  }
  return home;
}

Listing list_directory(const std::string& dir, const ListOptions& options) {
  Listing l;
  l.dir = dir;
  std::error_code ec;
  fs::directory_iterator it(dir, fs::directory_options::none, ec);
  if (ec) {
    l.error = "cannot read " + escape_name(dir) + ": " + ec.message();
    return l;
  }
  for (const fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) {  // a failure midway (an I/O error): what was read so far stays listed
      l.error = "reading " + escape_name(dir) + " stopped: " + ec.message();
      break;
    }
    Entry e;
    e.name = it->path().filename().string();
    e.label = escape_name(e.name);
    std::error_code sec;
    e.is_link = it->is_symlink(sec);
    e.is_dir = it->is_directory(sec);  // follows links: a link to a folder is a folder
    if (!e.is_dir) {
      const uintmax_t size = it->file_size(sec);
      e.size_known = !sec;
      e.size = sec ? 0 : static_cast<uint64_t>(size);
    }
    const bool hidden = !e.name.empty() && e.name[0] == '.';
    bool keep = options.show_hidden || !hidden;
    if (options.mode == ChooserMode::kFolder) {
      if (!e.is_dir) keep = false;
    } else if (!e.is_dir && !options.show_all && !has_gguf_extension(e.name)) {
      keep = false;
    }
    if (keep) {
      l.entries.push_back(std::move(e));
    } else {
      ++l.filtered_out;
    }
  }
  sort_entries(l.entries);
  return l;
}

const char* dialog_tool_name(DialogTool t) {
  switch (t) {
    case DialogTool::kZenity:
      return "zenity";
    case DialogTool::kKdialog:
      return "kdialog";
    case DialogTool::kBuiltin:
      break;
  }
  return "built-in";
}

bool program_on_path(const char* name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string_view rest(path);
  while (true) {
    const size_t colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) return false;
    rest.remove_prefix(colon + 1);
  }
}

std::vector<std::string> dialog_command(DialogTool tool, ChooserMode mode, const std::string& start_dir,
                                        const std::string& title) {
  const bool folder = mode == ChooserMode::kFolder;
  if (tool == DialogTool::kZenity) {
    std::vector<std::string> a = {"zenity", "--file-selection", "--title=" + title,
                                  "--filename=" + join_path(start_dir, "")};
    if (folder) {
      a.push_back("--directory");
    } else {
      a.push_back("--file-filter=GGUF models (*.gguf) | *.gguf *.GGUF");
      a.push_back("--file-filter=All files | *");
    }
    return a;
  }
  if (tool == DialogTool::kKdialog) {
    if (folder) return {"kdialog", "--title", title, "--getexistingdirectory", start_dir};
    return {"kdialog",           "--title", title,
            "--getopenfilename", start_dir, "*.gguf *.GGUF|GGUF models\n*|All files"};
  }
  return {};
}

DialogOutcome parse_dialog_output(DialogTool tool, int exit_status, std::string_view out,
                                  std::string_view err) {
  DialogOutcome o;
  const std::string name = dialog_tool_name(tool);
  if (exit_status == 1) {  // Cancel, Esc or the window closed (zenity and kdialog alike)
    o.kind = DialogOutcome::Kind::kCancelled;
    return o;
  }
  const std::string line = first_line(out);
  if (exit_status == 0 && !line.empty() && line[0] == '/') {
    o.kind = DialogOutcome::Kind::kPicked;
    o.path = normalise_path(line, "/", home_dir());
    return o;
  }
  o.kind = DialogOutcome::Kind::kFailed;
  std::string why = first_line(err);
  if (exit_status == 0) {
    o.error = name + " returned no path" + (line.empty() ? "" : " (\"" + escape_name(line) + "\")");
  } else if (exit_status < 0) {
    o.error = name + " could not be run" + (why.empty() ? "" : ": " + escape_name(why));
  } else {
    o.error = name + " failed (exit status " + std::to_string(exit_status) + ")" +
              (why.empty() ? "" : ": " + escape_name(why));
  }
  return o;
}

DropChoice choose_dropped(const std::vector<std::string>& paths) {
  DropChoice d;
  if (paths.empty()) {
    d.error = "nothing was dropped";
    return d;
  }
  auto note_for = [&](const std::string& chosen, const char* how) {
    if (paths.size() > 1)
      d.note = std::to_string(paths.size()) + " files dropped: loading the first " + how + ", " +
               escape_name(file_name(chosen));
  };
  for (const std::string& p : paths) {
    std::error_code ec;
    if (has_gguf_extension(file_name(p)) && !fs::is_directory(p, ec)) {
      d.path = p;
      note_for(p, ".gguf");
      return d;
    }
  }
  // No name ends in .gguf: a model file may still have been renamed; its first bytes say.
  for (const std::string& p : paths) {
    std::ifstream f(p, std::ios::binary);
    char magic[4] = {};
    if (f && f.read(magic, 4) && std::memcmp(magic, "GGUF", 4) == 0) {
      d.path = p;
      note_for(p, "GGUF file");
      return d;
    }
  }
  std::string names;
  for (size_t i = 0; i < paths.size() && i < 3; ++i)
    names += (i ? ", " : "") + escape_name(file_name(paths[i]));
  if (paths.size() > 3) names += " and " + std::to_string(paths.size() - 3) + " more";
  d.error = names + (paths.size() == 1 ? " is not" : " are not") +
            " a GGUF model file (expected a .gguf file, such as a Qwen3.5 model converted to GGUF)";
  return d;
}

}  // namespace qc::gui::files
