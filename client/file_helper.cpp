#include "file_helper.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <system_error>
#include <vector>

#include "quote_path.h"
#include "unique_fd.h"
#include "utf8.h"

namespace sandboxctl::file_helper {
namespace {

using nlohmann::json;
using sandboxd::UniqueFd;

/// What a write or edit reads from stdin at most: the JSON of the largest content, escaped.
constexpr size_t kMaxRequestBytes = 8 * kWriteBytes;

std::string Shown(const std::string& path) { return sandboxd::api::QuotePath(path); }

[[noreturn]] void Refuse(const std::string& path, int error) {
  std::string why;
  switch (error) {
    case ENOENT: why = "does not exist in the sandbox"; break;
    case EXDEV: why = "leads out of the sandbox's root (through a symlink): only paths beneath it are opened"; break;
    case ELOOP: why = "goes through too many symlinks"; break;
    case ENOTDIR: why = "has a part on its way that is not a directory"; break;
    case EACCES:
    case EPERM: why = "cannot be reached: permission denied"; break;
    case EROFS: why = "is read-only in the sandbox's jobs (a hidden path, or outside the roots)"; break;
    case ENOSPC:
    case EDQUOT: why = "cannot be written: the sandbox's quota (or its disk) is full"; break;
    case ENAMETOOLONG: why = "is too long a name"; break;
    default: why = std::string("cannot be reached: ") + strerror(error);
  }
  throw Refusal{Shown(path) + " " + why};
}

/// `path` beneath `root_fd`, symlinks followed only while they stay beneath it (EXDEV when one
/// leads out); an invalid fd with errno set on failure.
UniqueFd OpenBeneath(int root_fd, const std::string& path, uint64_t flags, mode_t mode = 0) {
  struct open_how how = {};
  how.flags = flags | O_CLOEXEC;
  how.mode = mode;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  for (int attempt = 0;; ++attempt) {
    long fd = syscall(SYS_openat2, root_fd, path.c_str(), &how, sizeof how);
    if (fd >= 0) return UniqueFd(static_cast<int>(fd));
    // EAGAIN: a rename elsewhere raced the resolution; the kernel asks for another try.
    if ((errno != EAGAIN && errno != EINTR) || attempt == 16) return UniqueFd();
  }
}

/// The directory that holds `path` (its last component in `name`), opened beneath `root_fd`;
/// with `make`, the directories missing on the way are made first.
UniqueFd OpenParent(int root_fd, const std::string& path, std::string& name, bool make) {
  const size_t slash = path.rfind('/');
  name = slash == std::string::npos ? path : path.substr(slash + 1);
  UniqueFd dir = OpenBeneath(root_fd, ".", O_PATH | O_DIRECTORY);
  if (!dir) Refuse(".", errno);
  if (slash == std::string::npos) return dir;
  const std::string parent = path.substr(0, slash);
  for (size_t start = 0; start <= parent.size();) {
    size_t end = parent.find('/', start);
    if (end == std::string::npos) end = parent.size();
    const std::string prefix = parent.substr(0, end);
    UniqueFd next = OpenBeneath(root_fd, prefix, O_PATH | O_DIRECTORY);
    if (!next && errno == ENOENT && make) {
      // Made beneath the directory already resolved beneath the root, never through a name.
      if (mkdirat(dir.get(), parent.substr(start, end - start).c_str(), 0777) != 0 && errno != EEXIST) Refuse(prefix, errno);
      next = OpenBeneath(root_fd, prefix, O_PATH | O_DIRECTORY);
    }
    if (!next) Refuse(prefix, errno);
    dir = std::move(next);
    start = end + 1;
  }
  return dir;
}

/// Refuses whatever at `name` in `dir` is not a regular file a write may replace; true when
/// there is one (its bits in `st`), false when nothing is there.
bool CheckReplaceable(int dir, const std::string& name, const std::string& path, struct stat& st) {
  if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return false;
    Refuse(path, errno);
  }
  if (S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    ssize_t length = readlinkat(dir, name.c_str(), target, sizeof target - 1);
    std::string shown = length < 0 ? "?" : Shown(std::string(target, static_cast<size_t>(length)));
    throw Refusal{Shown(path) + " is a symlink (to " + shown + "); files are written only at their own path, never through a symlink"};
  }
  if (S_ISDIR(st.st_mode)) throw Refusal{Shown(path) + " is a directory"};
  if (!S_ISREG(st.st_mode)) throw Refusal{Shown(path) + " is not a regular file"};
  return true;
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t written = write(fd, data.data(), data.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) throw std::system_error(written < 0 ? errno : EIO, std::generic_category());
    data.remove_prefix(static_cast<size_t>(written));
  }
}

/// `content` written whole as `name` in `dir`: a new file beside it, renamed over it. `mode`:
/// the bits of the file it replaces, if one.
void ReplaceWhole(int dir, const std::string& name, const std::string& path, const std::string& content, std::optional<mode_t> mode) {
  static unsigned counter = 0;
  const std::string temp = ".sandboxd-write-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  UniqueFd out(openat(dir, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode ? 0600 : 0666));
  if (!out) Refuse(path, errno);
  try {
    if (mode && fchmod(out.get(), *mode & 07777) != 0) throw std::system_error(errno, std::generic_category());
    WriteAll(out.get(), content);
    if (close(out.release()) != 0) throw std::system_error(errno, std::generic_category());
    if (renameat(dir, temp.c_str(), dir, name.c_str()) != 0) throw std::system_error(errno, std::generic_category());
  } catch (const std::system_error& e) {
    unlinkat(dir, temp.c_str(), 0);
    Refuse(path, e.code().value());
  }
}

/// Up to `limit` bytes of `fd`, and whether there was more.
std::string ReadUpTo(int fd, size_t limit, const std::string& path, bool& more) {
  std::string data;
  more = false;
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) Refuse(path, errno);
    if (n == 0) return data;
    if (data.size() + static_cast<size_t>(n) > limit) {
      data.append(buffer, limit - data.size());
      more = true;
      return data;
    }
    data.append(buffer, static_cast<size_t>(n));
  }
}

void CheckText(const std::string& text, const std::string& path, uint64_t size) {
  if (text.find('\0') != std::string::npos || !sandboxd::api::IsValidUtf8(text))
    throw Refusal{Shown(path) + " is not text (" + std::to_string(size) + " bytes, not UTF-8): only text files are read and edited here; run a command to look at it"};
}

uint64_t CountLines(std::string_view text) {
  if (text.empty()) return 0;
  return static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n')) + (text.back() == '\n' ? 0 : 1);
}

}  // namespace

ReadAnswer ReadText(int root_fd, const std::string& path, uint64_t first_line, std::optional<uint64_t> max_lines) {
  // O_NONBLOCK: a fifo at the path must not hold the job until a writer comes.
  UniqueFd fd = OpenBeneath(root_fd, path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
  if (!fd) Refuse(path, errno);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) Refuse(path, errno);
  if (S_ISDIR(st.st_mode)) throw Refusal{Shown(path) + " is a directory: list_dir lists it"};
  if (!S_ISREG(st.st_mode)) throw Refusal{Shown(path) + " is not a regular file"};

  ReadAnswer answer;
  answer.size = static_cast<uint64_t>(st.st_size);
  answer.first_line = first_line;
  uint64_t line = 1;      // the number of the line being read
  size_t line_start = 0;  // where it begins in answer.text
  char last = '\n';
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) Refuse(path, errno);
    if (n == 0) break;
    std::string_view chunk(buffer, static_cast<size_t>(n));
    if (chunk.find('\0') != std::string_view::npos) CheckText(std::string(1, '\0'), path, answer.size);
    last = chunk.back();
    while (!chunk.empty()) {
      size_t end = chunk.find('\n');
      const size_t take = end == std::string_view::npos ? chunk.size() : end + 1;
      const bool wanted = line >= first_line && (!max_lines || line - first_line < *max_lines);
      if (wanted && !answer.cut) {
        if (answer.text.size() + take <= kReadBytes) {
          answer.text.append(chunk.substr(0, take));
        } else if (line == first_line) {
          // Whole lines only, but for a first line that alone is longer than an answer may
          // be: that one is cut at a character's end.
          answer.text.append(chunk.substr(0, kReadBytes - answer.text.size()));
          size_t keep = answer.text.size();
          while (keep > 0 && (static_cast<unsigned char>(answer.text[keep - 1]) & 0xC0) == 0x80) --keep;
          if (keep > 0 && static_cast<unsigned char>(answer.text[keep - 1]) >= 0xC0) --keep;
          answer.text.resize(keep);
          answer.cut = true;
        } else {
          answer.text.resize(line_start);  // the part of this line that came in an earlier read
          answer.cut = true;
        }
      }
      if (end != std::string_view::npos) {
        ++line;
        if (!answer.cut) line_start = answer.text.size();
      }
      chunk.remove_prefix(take);
    }
  }
  // Lines counted by their ends, and a last line without one.
  answer.total_lines = line - 1 + (last != '\n' ? 1 : 0);
  if (first_line > 1 && first_line > answer.total_lines)
    throw Refusal{Shown(path) + " has " + std::to_string(answer.total_lines) + " lines; line " + std::to_string(first_line) + " is past its end"};
  CheckText(answer.text, path, answer.size);
  answer.lines = CountLines(answer.text);
  return answer;
}

WriteAnswer WriteWhole(int root_fd, const std::string& path, const std::string& content) {
  if (content.size() > kWriteBytes)
    throw Refusal{"content for " + Shown(path) + " is " + std::to_string(content.size()) + " bytes; at most " + std::to_string(kWriteBytes >> 20) +
                  " MiB is written at once"};
  std::string name;
  UniqueFd dir = OpenParent(root_fd, path, name, true);
  struct stat st;
  const bool exists = CheckReplaceable(dir.get(), name, path, st);
  ReplaceWhole(dir.get(), name, path, content, exists ? std::optional<mode_t>(st.st_mode) : std::nullopt);
  return {content.size(), !exists};
}

EditAnswer EditOnce(int root_fd, const std::string& path, const std::string& old_text, const std::string& new_text) {
  if (old_text.empty()) throw Refusal{"old_text is empty: give the exact text to replace in " + Shown(path)};
  if (old_text == new_text) throw Refusal{"old_text and new_text are the same: nothing would change in " + Shown(path)};
  std::string name;
  UniqueFd dir = OpenParent(root_fd, path, name, false);
  struct stat st;
  if (!CheckReplaceable(dir.get(), name, path, st)) Refuse(path, ENOENT);
  UniqueFd in(openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!in) Refuse(path, errno);
  bool more = false;
  std::string text = ReadUpTo(in.get(), kWriteBytes, path, more);
  if (more) throw Refusal{Shown(path) + " is larger than " + std::to_string(kWriteBytes >> 20) + " MiB, the most edit_file edits"};
  CheckText(text, path, text.size());
  // Occurrences counted overlapping too: "aa" occurs twice in "aaa", and either could be meant.
  size_t found = text.find(old_text);
  if (found == std::string::npos)
    throw Refusal{"old_text does not occur in " + Shown(path) + " (it must match exactly, whitespace and line ends included; read_file shows the text as it is)"};
  size_t count = 0;
  for (size_t at = found; at != std::string::npos; at = text.find(old_text, at + 1)) ++count;
  if (count > 1)
    throw Refusal{"old_text occurs " + std::to_string(count) + " times in " + Shown(path) + "; include more of the text around it so that it occurs once"};
  std::string edited = text.substr(0, found) + new_text + text.substr(found + old_text.size());
  if (edited.size() > kWriteBytes)
    throw Refusal{"the edit would make " + Shown(path) + " larger than " + std::to_string(kWriteBytes >> 20) + " MiB, the most edit_file writes"};
  ReplaceWhole(dir.get(), name, path, edited, st.st_mode);
  return {1 + static_cast<uint64_t>(std::count(text.begin(), text.begin() + static_cast<long>(found), '\n')), edited.size()};
}

json ListDirectory(int root_fd, const std::string& path) {
  UniqueFd fd = OpenBeneath(root_fd, path, O_RDONLY | O_DIRECTORY);
  if (!fd) {
    if (errno == ENOTDIR) throw Refusal{Shown(path) + " is not a directory: read_file reads a file"};
    Refuse(path, errno);
  }
  DIR* listing = fdopendir(fd.get());
  if (!listing) Refuse(path, errno);
  fd.release();  // the DIR owns it now
  struct Entry {
    std::string name;
    json shown;
  };
  std::vector<Entry> entries;
  errno = 0;
  while (struct dirent* entry = readdir(listing)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    // Names are bytes a job chose: they travel as wire names (quoted when not UTF-8).
    json shown = {{"name", sandboxd::api::WireName(name)}};
    struct stat st;
    if (fstatat(dirfd(listing), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      shown["type"] = "other";
    } else if (S_ISDIR(st.st_mode)) {
      shown["type"] = "directory";
    } else if (S_ISREG(st.st_mode)) {
      shown["type"] = "file";
      shown["size"] = static_cast<uint64_t>(st.st_size);
    } else if (S_ISLNK(st.st_mode)) {
      shown["type"] = "symlink";
      char target[PATH_MAX];
      ssize_t length = readlinkat(dirfd(listing), name.c_str(), target, sizeof target - 1);
      if (length >= 0) shown["target"] = sandboxd::api::WireName(std::string_view(target, static_cast<size_t>(length)));
    } else {
      shown["type"] = "other";
    }
    entries.push_back({std::move(name), std::move(shown)});
  }
  const int error = errno;
  closedir(listing);
  if (error != 0) Refuse(path, error);
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  json listed = json::array();
  for (size_t i = 0; i < entries.size() && i < kListedEntries; ++i) listed.push_back(std::move(entries[i].shown));
  return {{"entries", std::move(listed)}, {"total", entries.size()}};
}

int Main(int argc, char** argv) {
  // argv: sandboxctl --mcp-file-helper OP ROOT PATH; stdin: the operation's parameters, JSON.
  json answer;
  std::string text;
  try {
    if (argc != 5) throw Refusal{"the file helper takes OP ROOT PATH"};
    const std::string op = argv[2], root = argv[3], path = argv[4];
    bool more = false;
    const std::string input = ReadUpTo(STDIN_FILENO, kMaxRequestBytes, "the request", more);
    if (more) throw Refusal{"the request for " + Shown(path) + " is too large"};
    const json request = input.empty() ? json::object() : json::parse(input);
    UniqueFd root_fd(open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root_fd) Refuse(root, errno);
    if (op == "read") {
      std::optional<uint64_t> max_lines;
      if (request.contains("limit")) max_lines = request["limit"].get<uint64_t>();
      ReadAnswer read = ReadText(root_fd.get(), path, request.value("offset", uint64_t{1}), max_lines);
      answer = {{"size", read.size}, {"total_lines", read.total_lines}, {"first_line", read.first_line}, {"lines", read.lines}, {"cut", read.cut},
                {"bytes", read.text.size()}};
      text = std::move(read.text);
    } else if (op == "write") {
      WriteAnswer written = WriteWhole(root_fd.get(), path, request.at("content").get<std::string>());
      answer = {{"bytes", written.bytes}, {"created", written.created}};
    } else if (op == "edit") {
      EditAnswer edited = EditOnce(root_fd.get(), path, request.at("old_text").get<std::string>(), request.at("new_text").get<std::string>());
      answer = {{"line", edited.line}, {"bytes", edited.bytes}};
    } else if (op == "list") {
      answer = ListDirectory(root_fd.get(), path);
    } else {
      throw Refusal{"the file helper has no operation '" + op + "'"};
    }
  } catch (const Refusal& refusal) {
    answer = {{"error", refusal.message}};
    text.clear();
  } catch (const json::exception& e) {
    answer = {{"error", std::string("the file helper did not understand its request: ") + e.what()}};
    text.clear();
  }
  try {
    WriteAll(STDOUT_FILENO, answer.dump(-1, ' ', false, json::error_handler_t::replace) + "\n" + text);
  } catch (const std::system_error&) {
    return 1;
  }
  return 0;
}

}  // namespace sandboxctl::file_helper
