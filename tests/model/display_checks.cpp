#include "display_checks.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "harness.h"
#include "visible_bytes.h"

namespace sandboxd::display {
namespace {

/// The code point of the UTF-8 sequence at `at` and its length; length 0 when none starts
/// there. Written apart from visible_bytes.cpp's, so that it checks that rather than repeats it.
std::pair<char32_t, size_t> Utf8At(const std::string& text, size_t at) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  if (lead < 0x80) return {lead, 1};
  size_t length = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? (lead <= 0xef ? 3 : 0) : lead >= 0xc2 ? 2 : 0;
  if (length == 0 || at + length > text.size()) return {0, 0};
  char32_t code = lead & (0x7f >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return {0, 0};
    code = (code << 6) | (byte(at + i) & 0x3f);
  }
  static constexpr char32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kShortest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return {0, 0};
  return {code, length};
}

/// What in `rendered` could still steer a terminal, or "".
std::string Steering(const std::string& rendered) {
  for (size_t at = 0; at < rendered.size();) {
    auto c = static_cast<unsigned char>(rendered[at]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return "a raw control byte \\" + std::to_string(c / 64) + std::to_string(c / 8 % 8) + std::to_string(c % 8);
    auto [code, length] = Utf8At(rendered, at);
    if (length == 0) return "a byte that is not UTF-8";
    bool c1 = code >= 0x80 && code <= 0x9f;
    bool bidi = code == 0x061c || code == 0x200e || code == 0x200f || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
    if (c1 || bidi) return c1 ? "a raw C1 control" : "a raw bidirectional control";
    at += length;
  }
  return "";
}

}  // namespace

namespace {

/// Adds what git keeps of each entry beneath the open directory `dir` (at `path`, "" for the
/// top) to `view`. Opened a level at a time, never by a whole path: a tree deeper than PATH_MAX
/// is read whole.
void ViewBeneath(int dir, const std::string& path, GitView& view) {
  int listing = dup(dir);
  DIR* entries = listing >= 0 ? fdopendir(listing) : nullptr;
  if (!entries) throw std::runtime_error("cannot list " + path + "/: " + std::strerror(errno));
  std::unique_ptr<DIR, int (*)(DIR*)> closing(entries, closedir);
  while (struct dirent* entry = readdir(entries)) {
    std::string name = entry->d_name;
    if (name == "." || name == ".." || (path.empty() && name == ".git")) continue;
    const std::string at = path + "/" + name;
    struct stat st;
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) throw std::runtime_error("cannot stat " + at + ": " + std::strerror(errno));
    const std::string owner = " uid=" + std::to_string(st.st_uid);
    if (S_ISDIR(st.st_mode)) {
      int child = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0) throw std::runtime_error("cannot open " + at + ": " + std::strerror(errno));
      ViewBeneath(child, at, view);
      close(child);
    } else if (S_ISREG(st.st_mode)) {
      int file = openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (file < 0) throw std::runtime_error("cannot open " + at + ": " + std::strerror(errno));
      std::string content;
      char buffer[65536];
      for (ssize_t got; (got = read(file, buffer, sizeof buffer)) > 0;) content.append(buffer, static_cast<size_t>(got));
      close(file);
      view[at] = std::string((st.st_mode & S_IXUSR) ? "100755" : "100644") + owner + " " + content;
    } else if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
      ssize_t got = readlinkat(dir, name.c_str(), target.data(), target.size());
      target.resize(got < 0 ? 0 : static_cast<size_t>(got));
      view[at] = "120000" + owner + " -> " + target;
    } else {
      char mode[16];
      std::snprintf(mode, sizeof mode, "%o", st.st_mode);
      view[at] = std::string("other ") + mode + owner;
    }
  }
}

}  // namespace

GitView ViewAsGit(const std::string& dir) {
  GitView view;
  int top = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (top < 0) throw std::runtime_error("cannot open " + dir + ": " + std::strerror(errno));
  try {
    ViewBeneath(top, "", view);
  } catch (...) {
    close(top);
    throw;
  }
  close(top);
  return view;
}

std::optional<struct stat> StatBeneath(const std::string& dir, const std::string& path) {
  int at = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  std::string rest = path;
  while (at >= 0 && rest.find('/') != std::string::npos) {
    std::string name = rest.substr(0, rest.find('/'));
    rest = rest.substr(name.size() + 1);
    int next = openat(at, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(at);
    at = next;
  }
  if (at < 0) return std::nullopt;
  struct stat st;
  bool found = fstatat(at, rest.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  close(at);
  if (!found) return std::nullopt;
  return st;
}

std::vector<DeepFile> TakeDeepSections(std::string& patch, size_t longer_than) {
  std::vector<DeepFile> taken;
  std::string kept;
  for (size_t at = 0; at < patch.size();) {
    size_t next = patch.find("\ndiff --git ", at);
    next = next == std::string::npos ? patch.size() : next + 1;
    const std::string section = patch.substr(at, next - at);
    at = next;
    size_t name_end = section.find('\n');
    std::string header = section.substr(0, name_end);
    if (header.size() < 2 * longer_than) {
      kept += section;
      continue;
    }
    // "diff --git a/P b/P": P never quoted here (the deep names are plain ASCII).
    DeepFile file;
    file.path = header.substr(std::string("diff --git a/").size(), (header.size() - std::string("diff --git a/ b/").size()) / 2);
    std::vector<std::string> lines;
    for (size_t from = name_end + 1; from < section.size();) {
      size_t end = section.find('\n', from);
      end = end == std::string::npos ? section.size() : end;
      lines.push_back(section.substr(from, end - from));
      from = end + 1;
    }
    if (lines.size() < 5 || !lines[0].starts_with("new file mode ") || lines[2] != "--- /dev/null" || !lines[4].starts_with("@@ -0,0 "))
      throw std::runtime_error("a section of a deep path is not a new text file's:\n" + section.substr(0, 300));
    file.mode = static_cast<mode_t>(std::strtoul(lines[0].c_str() + std::string("new file mode ").size(), nullptr, 8)) & 07777;
    for (size_t i = 5; i < lines.size(); ++i) {
      if (lines[i].starts_with("+")) file.content += lines[i].substr(1) + "\n";
      else if (lines[i].starts_with("\\ ") && !file.content.empty()) file.content.pop_back();  // no newline at its end
      else throw std::runtime_error("a section of a deep path has a line that is no added line: " + lines[i].substr(0, 100));
    }
    taken.push_back(std::move(file));
  }
  patch = kept;
  return taken;
}

void WriteBeneath(const std::string& dir, const DeepFile& file, uid_t owner) {
  int at = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  std::string rest = file.path;
  while (at >= 0 && rest.find('/') != std::string::npos) {
    std::string name = rest.substr(0, rest.find('/'));
    rest = rest.substr(name.size() + 1);
    if (mkdirat(at, name.c_str(), 0755) == 0 && fchownat(at, name.c_str(), owner, static_cast<gid_t>(-1), AT_SYMLINK_NOFOLLOW) != 0)
      throw std::runtime_error("cannot chown a directory of " + file.path.substr(0, 100));
    int next = openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(at);
    at = next;
  }
  int out = at < 0 ? -1 : openat(at, rest.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, file.mode);
  if (at >= 0) close(at);
  if (out < 0) throw std::runtime_error("cannot create " + file.path.substr(0, 100) + "...: " + std::strerror(errno));
  bool written = write(out, file.content.data(), file.content.size()) == static_cast<ssize_t>(file.content.size()) && fchown(out, owner, static_cast<gid_t>(-1)) == 0 &&
                 fchmod(out, file.mode) == 0;
  close(out);
  if (!written) throw std::runtime_error("cannot write " + file.path.substr(0, 100) + "...");
}

std::string DescribeDifferences(const GitView& committed, const GitView& patched) {
  std::set<std::string> paths;
  for (const auto* view : {&committed, &patched})
    for (const auto& [path, value] : *view) paths.insert(path);
  std::string text;
  size_t differing = 0;
  for (const auto& path : paths) {
    auto in_committed = committed.find(path), in_patched = patched.find(path);
    bool both = in_committed != committed.end() && in_patched != patched.end();
    if (both && in_committed->second == in_patched->second) continue;
    if (++differing > 12) continue;
    auto side = [&](const GitView& view, const GitView::const_iterator& found, size_t from) {
      if (found == view.end()) return std::string("(none)");
      return "\"" + Shown(found->second.substr(from, 100), 100) + "\"" + (found->second.size() > from + 100 ? "..." : "");
    };
    size_t from = 0;
    if (both) {
      const std::string &a = in_committed->second, &b = in_patched->second;
      size_t part = std::mismatch(a.begin(), a.begin() + static_cast<long>(std::min(a.size(), b.size())), b.begin()).first - a.begin();
      from = part > 40 ? part - 40 : 0;
    }
    text += Shown(path, 200) + (from > 0 ? " (from byte " + std::to_string(from) + ")" : std::string()) + ": committed " +
            side(committed, in_committed, from) + "; patched " + side(patched, in_patched, from) + "\n";
  }
  if (differing > 12) text += "... " + std::to_string(differing - 12) + " more paths differ\n";
  return text;
}

std::vector<std::string> HunksOf(const std::string& diff) {
  std::vector<std::string> hunks;
  bool in_hunk = false;
  for (size_t at = 0; at < diff.size();) {
    size_t end = diff.find('\n', at);
    end = end == std::string::npos ? diff.size() : end + 1;
    std::string_view line(diff.data() + at, end - at);
    if (line.starts_with("@@ ")) {
      hunks.emplace_back(line);
      in_hunk = true;
    } else if (line.starts_with("diff --git ")) {
      in_hunk = false;
    } else if (in_hunk) {
      hunks.back().append(line);
    }
    at = end;
  }
  return hunks;
}

std::string TerminalLeaks(const std::string& diff) {
  std::string leaks;
  for (const std::string& hunk : HunksOf(diff)) {
    size_t at = hunk.find('\n') + 1;  // past the "@@" line
    while (at > 0 && at < hunk.size()) {
      size_t end = hunk.find('\n', at);
      std::string line = hunk.substr(at, (end == std::string::npos ? hunk.size() : end) - at);
      at = end == std::string::npos ? 0 : end + 1;
      if (line.empty() || (line[0] != ' ' && line[0] != '+' && line[0] != '-')) continue;
      std::string rendered = sandboxctl::VisibleBytes(line, {.on = "", .off = ""});
      std::string why = Steering(rendered);
      if (why.empty() && rendered.size() < line.size()) why = "fewer bytes than the line has";
      if (!why.empty()) leaks += why + " in " + Shown(rendered, 200) + " (the line: " + Shown(line, 200) + ")\n";
    }
  }
  return leaks;
}

std::string Shown(const std::string& bytes, size_t limit) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == limit) return out + "... (" + std::to_string(bytes.size()) + " bytes in all)";
    auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '\n' || (c >= 0x20 && c < 0x7f && c != '\\')) {
      out += static_cast<char>(c);
    } else {
      char octal[8];
      std::snprintf(octal, sizeof octal, "\\%03o", c);
      out += octal;
    }
  }
  return out;
}

}  // namespace sandboxd::display
