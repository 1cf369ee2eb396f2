#include "diff_writer.h"
#include "stalled_writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "beneath.h"
#include "errors.h"
#include "quote_path.h"
#include "fd.h"
#include "text_patch.h"

namespace sandboxd {
namespace {

/// One side of a file diff as read from disk.
struct Side {
  bool exists = false;
  mode_t mode = 0;            ///< full st_mode
  bool binary = false;
  std::string content;        ///< text content (files), link target (symlinks)
  std::string note;           ///< why it could not be read, if so
};

std::string OctalMode(mode_t mode) {
  if (S_ISLNK(mode)) return "120000";  // as git: a symlink's permission bits mean nothing
  char text[16];
  snprintf(text, sizeof text, "%06o", static_cast<unsigned>(mode & (S_IFMT | 07777)));
  return text;
}

Side ReadSide(int dirfd, const std::string& path, const DiffOptions& options) {
  Side side;
  auto [parent_path, name] = SplitParent(path);
  UniqueFd parent = OpenBeneath(dirfd, parent_path, O_PATH | O_DIRECTORY);
  struct stat st;
  if (!parent || fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return side;
  side.exists = true;
  side.mode = st.st_mode;
  if (S_ISLNK(st.st_mode)) {
    std::vector<char> target(static_cast<size_t>(st.st_size) + 1 > 4096 ? static_cast<size_t>(st.st_size) + 1 : 4096);
    ssize_t size = readlinkat(parent.get(), name.c_str(), target.data(), target.size());
    if (size >= 0) side.content.assign(target.data(), static_cast<size_t>(size));
    return side;
  }
  if (!S_ISREG(st.st_mode)) return side;
  if (static_cast<size_t>(st.st_size) > options.max_text_bytes) {
    side.binary = true;
    return side;
  }
  UniqueFd file(openat(parent.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
  if (!file) {
    side.binary = true;
    side.note = strerror(errno);
    return side;
  }
  char buffer[65536];
  for (;;) {
    ssize_t got = read(file.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    side.content.append(buffer, static_cast<size_t>(got));
    if (side.content.size() > options.max_text_bytes) {
      side.binary = true;
      side.content.clear();
      return side;
    }
  }
  if (LooksBinary(side.content)) side.binary = true;
  return side;
}

std::optional<mode_t> ModeAt(int dirfd, const std::string& path) {
  auto [parent_path, name] = SplitParent(path);
  UniqueFd parent = OpenBeneath(dirfd, parent_path, O_PATH | O_DIRECTORY);
  struct stat st;
  if (!parent || fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return st.st_mode;
}

bool HasContent(const Side& side) { return side.exists && (S_ISREG(side.mode) || S_ISLNK(side.mode)); }

/// Unified hunks of old → new text, numbered as libgit2 produces them (text_patch.h).
std::vector<Hunk> LineDiff(const std::string& old_text, const std::string& new_text, const DiffOptions& options) {
  GitPatch patch = MakeTextPatch(old_text, new_text, options.context_lines);
  std::vector<Hunk> hunks;
  for (size_t h = 0; h < git_patch_num_hunks(patch.get()); ++h) {
    const git_diff_hunk* hunk = nullptr;
    size_t lines = 0;
    if (git_patch_get_hunk(&hunk, &lines, patch.get(), h) != 0) break;
    Hunk out;
    out.header.assign(hunk->header, hunk->header_len);
    while (!out.header.empty() && out.header.back() == '\n') out.header.pop_back();
    for (size_t l = 0; l < lines; ++l) {
      const git_diff_line* line = nullptr;
      if (git_patch_get_line_in_hunk(&line, patch.get(), h, l) != 0) break;
      switch (line->origin) {
        case GIT_DIFF_LINE_CONTEXT:
        case GIT_DIFF_LINE_ADDITION:
        case GIT_DIFF_LINE_DELETION:
          out.body += line->origin;
          out.body.append(line->content, line->content_len);
          if (line->content_len == 0 || line->content[line->content_len - 1] != '\n') out.body += '\n';
          break;
        case GIT_DIFF_LINE_CONTEXT_EOFNL:
        case GIT_DIFF_LINE_ADD_EOFNL:
        case GIT_DIFF_LINE_DEL_EOFNL:
          out.body += "\\ No newline at end of file\n";
          break;
        default:
          break;
      }
    }
    hunks.push_back(std::move(out));
  }
  return hunks;
}

/// The diff of one path whose old and new sides are given (either may be missing).
FileDiff DiffFile(const std::string& shown, const Side& old_side, const Side& new_side, const DiffOptions& options) {
  FileDiff diff;
  // Names as git writes them (quote_path.h): a name cannot end a header line or hide one.
  diff.header = "diff --git " + api::QuotePath("a/" + shown) + " " + api::QuotePath("b/" + shown) + "\n";
  if (!old_side.exists) {
    diff.header += "new file mode " + OctalMode(new_side.mode) + "\n";
  } else if (!new_side.exists) {
    diff.header += "deleted file mode " + OctalMode(old_side.mode) + "\n";
  } else if ((old_side.mode & (S_IFMT | 07777)) != (new_side.mode & (S_IFMT | 07777))) {
    diff.header += "old mode " + OctalMode(old_side.mode) + "\nnew mode " + OctalMode(new_side.mode) + "\n";
  }
  bool old_text = HasContent(old_side), new_text = HasContent(new_side);
  if (!old_text && !new_text) return diff;  // directories, fifos, devices: header only
  std::string old_label = old_side.exists ? api::QuotePath("a/" + shown) : "/dev/null";
  std::string new_label = new_side.exists ? api::QuotePath("b/" + shown) : "/dev/null";
  if (old_side.binary || new_side.binary) {
    diff.header += "Binary files " + old_label + " and " + new_label + " differ\n";
    return diff;
  }
  std::string old_content = old_text ? old_side.content : std::string();
  std::string new_content = new_text ? new_side.content : std::string();
  if (old_content == new_content) return diff;
  diff.header += "--- " + old_label + "\n+++ " + new_label + "\n";
  diff.hunks = LineDiff(old_content, new_content, options);
  return diff;
}

/// Deletions of every file below a directory of the live tree (sorted, no symlink followed).
void DeletedTree(int lower_dirfd, const std::string& path, const DiffOptions& options, std::vector<FileDiff>& out) {
  UniqueFd dir = OpenBeneath(lower_dirfd, path, O_RDONLY | O_DIRECTORY);
  if (!dir) return;
  int list_fd = dup(dir.get());
  DIR* listing = list_fd >= 0 ? fdopendir(list_fd) : nullptr;
  if (!listing) {
    if (list_fd >= 0) close(list_fd);
    return;
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(listing))
    if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) names.emplace_back(entry->d_name);
  closedir(listing);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    std::string child = path + "/" + name;
    Side old_side = ReadSide(lower_dirfd, child, options);
    if (!old_side.exists) continue;
    if (S_ISDIR(old_side.mode)) {
      DeletedTree(lower_dirfd, child, options, out);
    } else {
      out.push_back(DiffFile(options.path_prefix + child, old_side, Side{}, options));
    }
  }
}

}  // namespace

std::string FileDiff::Text() const {
  std::string text = header;
  for (const auto& hunk : hunks) text += hunk.header + "\n" + hunk.body;
  return text;
}

std::vector<FileDiff> DiffChange(const Change& change, int lower_dirfd, int upper_dirfd, const DiffOptions& options) {
  std::vector<FileDiff> out;
  std::string shown = change.path == "." ? (options.path_prefix.empty() ? "." : options.path_prefix.substr(0, options.path_prefix.size() - 1))
                                         : options.path_prefix + change.path;
  Side old_side = change.kind == ChangeKind::kAdded ? Side{} : ReadSide(lower_dirfd, change.path, options);
  Side new_side = change.kind == ChangeKind::kDeleted ? Side{} : ReadSide(upper_dirfd, change.path, options);
  bool old_dir = old_side.exists && S_ISDIR(old_side.mode);
  bool new_dir = new_side.exists && S_ISDIR(new_side.mode);
  if (change.kind == ChangeKind::kTypeChanged || (old_dir && !new_side.exists)) {
    // A type change reads as git shows it: the old entry deleted, the new one added.
    if (old_dir) DeletedTree(lower_dirfd, change.path, options, out);
    else if (old_side.exists) out.push_back(DiffFile(shown, old_side, Side{}, options));
    if (new_side.exists && !new_dir) out.push_back(DiffFile(shown, Side{}, new_side, options));
    return out;
  }
  if (new_dir && !old_side.exists) return out;  // a new directory: its entries speak for it
  if (old_dir || new_dir) {
    if (old_dir && new_dir && (old_side.mode & 07777) != (new_side.mode & 07777))
      out.push_back(DiffFile(shown, old_side, new_side, options));
    return out;
  }
  out.push_back(DiffFile(shown, old_side, new_side, options));
  return out;
}

FileDiff DiffRename(const Rename& rename, int lower_dirfd, int upper_dirfd, const DiffOptions& options) {
  FileDiff diff;
  std::string from = options.path_prefix + rename.from, to = options.path_prefix + rename.to;
  diff.header = "diff --git " + api::QuotePath("a/" + from) + " " + api::QuotePath("b/" + to) + "\n";
  auto old_mode = ModeAt(lower_dirfd, rename.from), new_mode = ModeAt(upper_dirfd, rename.to);
  if (old_mode && new_mode && (*old_mode & (S_IFMT | 07777)) != (*new_mode & (S_IFMT | 07777)))
    diff.header += "old mode " + OctalMode(*old_mode) + "\nnew mode " + OctalMode(*new_mode) + "\n";
  diff.header += "similarity index 100%\nrename from " + api::QuotePath(from) + "\nrename to " + api::QuotePath(to) + "\n";
  return diff;
}

bool WriteDiff(const std::vector<Change>& changes, int lower_dirfd, int upper_dirfd, const DiffOptions& options,
               int out_fd, const std::vector<Rename>& renames) {
  // Only renames with both halves here: a deletion whose new name is not shown stays a deletion.
  std::set<std::string> here;
  for (const auto& change : changes) here.insert(change.path);
  std::map<std::string, const Rename*> by_added;
  std::set<std::string> renamed_away;
  for (const auto& rename : renames) {
    if (!here.count(rename.from) || !here.count(rename.to)) continue;
    by_added[rename.to] = &rename;
    renamed_away.insert(rename.from);
  }
  // The changes shown hunk by hunk are diffed first: a hunk that does not exist is refused
  // before any of the diff is written.
  std::map<std::string, std::vector<FileDiff>> partial;
  for (const auto& change : changes) {
    auto asked = options.only_hunks.find(change.path);
    if (asked == options.only_hunks.end() || renamed_away.count(change.path) || by_added.count(change.path)) continue;
    auto files = DiffChange(change, lower_dirfd, upper_dirfd, options);
    size_t count = files.size() == 1 ? files.front().hunks.size() : 0;
    for (int hunk : asked->second)
      if (hunk < 1 || static_cast<size_t>(hunk) > count)
        throw Error(Code::kNotFound, "no hunk " + options.path_prefix + change.path + ":" + std::to_string(hunk) + " (" +
                                         options.path_prefix + change.path + " has " +
                                         (count == 0 ? "no hunks" : count == 1 ? "1 hunk" : std::to_string(count) + " hunks") + ")");
    FileDiff& file = files.front();
    std::vector<Hunk> kept;
    for (int hunk : asked->second) kept.push_back(file.hunks[static_cast<size_t>(hunk - 1)]);
    file.hunks = std::move(kept);
    partial[change.path] = std::move(files);
  }
  for (const auto& change : changes) {
    if (renamed_away.count(change.path)) continue;  // shown with its added half
    auto rename = by_added.find(change.path);
    if (rename != by_added.end()) {
      if (!WriteWithin(out_fd, DiffRename(*rename->second, lower_dirfd, upper_dirfd, options).Text(), options.output_stall_ms, "the diff")) return false;
      continue;
    }
    auto shown = partial.find(change.path);
    for (const auto& file : shown != partial.end() ? shown->second : DiffChange(change, lower_dirfd, upper_dirfd, options))
      if (!WriteWithin(out_fd, file.Text(), options.output_stall_ms, "the diff")) return false;
  }
  return true;
}

}  // namespace sandboxd
