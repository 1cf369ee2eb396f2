#include "base/directory_listing.h"
#include "base/stalled_writer.h"
#include "text/diff_writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "base/beneath.h"
#include "base/errors.h"
#include "unique_fd.h"
#include "hunk_split.h"
#include "quote_path.h"
#include "text/binary_patch.h"
#include "text/blob_id.h"
#include "text/common_lines.h"
#include "text/text_source.h"

namespace sandboxd {
namespace {

/// One side of a file diff as found on disk.
struct Side {
  bool exists = false;
  mode_t mode = 0;                    ///< full st_mode
  bool binary = false;                ///< as git counts it (text_file.h), or unreadable
  /// A regular file's content (read as needed; a binary one's too, for its blob id and patch),
  /// a symlink's target; null when it could not be opened.
  std::unique_ptr<TextSource> content;
  std::string note;                   ///< why it could not be read, if so
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
    side.content = std::make_unique<StringText>(size >= 0 ? std::string(target.data(), static_cast<size_t>(size)) : std::string());
    return side;
  }
  if (!S_ISREG(st.st_mode)) return side;
  // Opened whatever its size: a binary file is read too, for its blob id (and with --binary
  // its patch), never whole into memory.
  std::unique_ptr<FileText> file = OpenRegularFile(parent.get(), name, path);
  if (!file) {
    side.binary = true;
    side.note = strerror(errno);
    return side;
  }
  // The rule `hunks` and `merge` apply too (text_file.h): too large (as it is open, whatever the
  // stat said), or a NUL early on, it is binary.
  side.binary = !NotTextBecause(*file, options.max_text_bytes).empty();
  side.content = std::move(file);
  return side;
}

/// A side's blob id as an index line gives it: git's id of its bytes, zeros when it is not
/// there, nullopt when it could not be read.
std::optional<std::string> IdOf(const Side& side) {
  if (!side.exists) return std::string(kAbsentBlobId);
  if (!side.content) return std::nullopt;
  return BlobId(*side.content);
}

/// git's "index OLD..NEW[ MODE]" line, the ids cut to `digits` as git abbreviates them (7, or
/// 40 for --binary's binary files). An id that could not be read is written as as many '?':
/// git still takes the header for a patch, and refuses to apply it ("without full index line")
/// rather than take the unknown side for an absent one, as zeros would say.
std::string IndexLine(const std::optional<std::string>& old_id, const std::optional<std::string>& new_id, const Side& old_side,
                      const Side& new_side, size_t digits) {
  auto shown = [&](const std::optional<std::string>& id) { return id ? id->substr(0, digits) : std::string(digits, '?'); };
  std::string line = "index " + shown(old_id) + ".." + shown(new_id);
  // As git writes it: the mode here when it stays, in lines of their own when it changes.
  if (old_side.exists && new_side.exists && (old_side.mode & (S_IFMT | 07777)) == (new_side.mode & (S_IFMT | 07777)))
    line += " " + OctalMode(new_side.mode);
  return line + "\n";
}

std::optional<mode_t> ModeAt(int dirfd, const std::string& path) {
  auto [parent_path, name] = SplitParent(path);
  UniqueFd parent = OpenBeneath(dirfd, parent_path, O_PATH | O_DIRECTORY);
  struct stat st;
  if (!parent || fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return st.st_mode;
}

bool HasContent(const Side& side) { return side.exists && (S_ISREG(side.mode) || S_ISLNK(side.mode)); }

/// How many hex digits of a blob id git shows where it abbreviates them (outside a repository,
/// and in any repository small enough for 7 to name an object alone).
constexpr size_t kShortIdDigits = 7;

/// Receives the diff of one change as it is made: each file diff's header, then its hunks.
class DiffReceiver : public HunkSink {
 public:
  virtual void File(const std::string& header) = 0;
  /// Whether it takes what a binary file's diff holds past its header lines (the index line,
  /// the binary patch of Data); if not, neither is made (each reads the files whole).
  virtual bool WantsData() const { return true; }
  /// A piece of the binary patch that follows the last file diff's header.
  virtual void Data(std::string_view piece) = 0;
};

/// Keeps every file diff whole in memory (DiffChange).
class DiffCollector final : public DiffReceiver {
 public:
  void File(const std::string& header) override { files.push_back(FileDiff{header, {}}); }
  void Data(std::string_view piece) override { files.back().header.append(piece); }
  void Hunk(int, std::string_view header, const HunkPlace&) override {
    files.back().hunks.push_back(sandboxd::Hunk{std::string(header), std::string()});
  }
  bool WantsBody(int) override { return true; }
  void Body(std::string_view piece) override { files.back().hunks.back().body.append(piece); }
  std::vector<FileDiff> files;
};

/// Whether `refs` asks for parts of hunk `number`.
bool AsksForPartsOf(const std::set<api::HunkRef>& refs, int number) {
  auto it = refs.lower_bound({number, 1});
  return it != refs.end() && it->hunk == number;
}

/// Counts file diffs and hunks, and the parts of hunks whose parts are asked for, for the
/// check that what is asked for exists.
class HunkCounter final : public DiffReceiver {
 public:
  explicit HunkCounter(const std::set<api::HunkRef>& asked) : asked_(asked) {}
  void File(const std::string&) override {
    End();
    ++files;
  }
  bool WantsData() const override { return false; }
  void Data(std::string_view) override {}
  void Hunk(int number, std::string_view header, const HunkPlace&) override {
    End();
    ++hunks;
    number_ = number;
    text_ = std::string(header) + "\n";
  }
  bool WantsBody(int number) override { return AsksForPartsOf(asked_, number); }
  void Body(std::string_view piece) override { text_.append(piece); }
  /// Counts the parts of the last hunk, if they were asked for, as review's `s` cuts them.
  void End() {
    if (number_ > 0 && AsksForPartsOf(asked_, number_)) parts[number_] = api::SplitHunk(text_).size();
    number_ = 0;
    text_.clear();
  }
  size_t files = 0, hunks = 0;
  std::map<int, size_t> parts;

 private:
  const std::set<api::HunkRef>& asked_;
  int number_ = 0;
  std::string text_;
};

/// Whether `asked` names every hunk of a change that has `hunks` of them, each whole or by all
/// of its parts (`parts`: the part counts of the hunks asked for in parts). A decision of each
/// of them is one of the whole change (approval.h), its mode change included.
bool AsksForAll(const std::set<api::HunkRef>& asked, size_t hunks, const std::map<int, size_t>& parts) {
  for (int hunk = 1; hunk <= static_cast<int>(hunks); ++hunk) {
    if (asked.count({hunk, 0})) continue;
    auto counted = parts.find(hunk);
    if (counted == parts.end()) return false;
    for (int part = 1; part <= static_cast<int>(counted->second); ++part)
      if (!asked.count({hunk, part})) return false;
  }
  return true;
}

/// A file diff's header without its "old mode"/"new mode" lines: some of the hunks of a text
/// modification go live without its mode change (the merged file keeps the live mode,
/// commit_stage.h), and the diff of them says so, so that applying it gives what they land.
std::string WithoutModeChange(const std::string& header) {
  std::string kept;
  for (size_t at = 0; at < header.size();) {
    size_t end = header.find('\n', at);
    end = end == std::string::npos ? header.size() : end + 1;
    std::string_view line(header.data() + at, end - at);
    if (!line.starts_with("old mode ") && !line.starts_with("new mode ")) kept.append(line);
    at = end;
  }
  return kept;
}

/// The reader of WriteDiff's output went away.
struct ReaderGone {};

/// Writes diffs to an fd as they are made, through a buffer, showing of a change asked for
/// hunk by hunk only the hunks (or parts of hunks) asked for.
class DiffStreamer final : public DiffReceiver {
 public:
  DiffStreamer(int fd, int64_t stall_ms) : fd_(fd), stall_ms_(stall_ms) {}
  /// The hunks and parts to show of the next change's file diff; null: all. `in_part`: they are
  /// not all of its hunks, so its mode change is left out of the header.
  void Only(const std::set<api::HunkRef>* hunks, bool in_part = false) {
    EndHunk();
    only_ = hunks;
    in_part_ = in_part;
  }
  void File(const std::string& header) override {
    EndHunk();
    Write(in_part_ ? WithoutModeChange(header) : header);
  }
  void Data(std::string_view piece) override { Write(piece); }
  void Hunk(int number, std::string_view header, const HunkPlace&) override {
    EndHunk();
    if (only_ && AsksForPartsOf(*only_, number) && !only_->count({number, 0})) {
      // Held whole until its end: its parts are cut from its body.
      split_ = number;
      split_text_ = std::string(header) + "\n";
      return;
    }
    if (!Shown(number)) return;
    Write(header);
    Write("\n");
  }
  bool WantsBody(int number) override { return number == split_ || Shown(number); }
  void Body(std::string_view piece) override {
    if (split_ > 0) split_text_.append(piece);
    else Write(piece);
  }
  /// Writes the parts asked for of a hunk held for them (neighbours joined, so that git apply
  /// takes them: hunk_split.h).
  void EndHunk() {
    if (split_ == 0) return;
    std::set<int> asked;
    for (auto it = only_->lower_bound({split_, 1}); it != only_->end() && it->hunk == split_; ++it) asked.insert(it->part);
    for (const auto& part : api::AskedParts(split_text_, asked)) Write(part);
    split_ = 0;
    split_text_.clear();
  }
  void Write(std::string_view text) {
    buffer_.append(text);
    if (buffer_.size() >= kBuffer) Flush();
  }
  void Flush() {
    if (!WriteWithin(fd_, buffer_, stall_ms_, "the diff")) throw ReaderGone{};
    buffer_.clear();
  }

 private:
  static constexpr size_t kBuffer = 64 * 1024;
  bool Shown(int number) const { return only_ == nullptr || only_->count({number, 0}) != 0; }
  const int fd_;
  const int64_t stall_ms_;
  const std::set<api::HunkRef>* only_ = nullptr;
  bool in_part_ = false;
  std::string buffer_;
  int split_ = 0;  ///< the hunk held for its parts, 0 for none
  std::string split_text_;
};

/// The diff of a path whose sides differ and one at least is binary: git's index line (without
/// one git does not take a header with no mode lines for a patch, and reads on into the next
/// file's), then with --binary and both sides read the binary patch, else "Binary files ...
/// differ". Nothing but the header when both hold the same bytes (a mode change), as git shows it.
void DiffBinary(std::string header, const Side& old_side, const Side& new_side, const std::string& old_label,
                const std::string& new_label, const DiffOptions& options, DiffReceiver& out) {
  if (!out.WantsData()) return out.File(header);
  const std::optional<std::string> old_id = IdOf(old_side), new_id = IdOf(new_side);
  if (old_id && new_id && *old_id == *new_id) return out.File(header);
  // `git apply` needs full ids to apply a binary patch; `git diff --binary` writes them.
  header += IndexLine(old_id, new_id, old_side, new_side, options.binary ? kAbsentBlobId.size() : kShortIdDigits);
  if (!options.binary || !old_id || !new_id)
    return out.File(header + "Binary files " + old_label + " and " + new_label + " differ\n");
  out.File(header);
  const MemoryText nothing{std::string_view()};
  WriteBinaryPatch(old_side.content ? *old_side.content : static_cast<const TextSource&>(nothing),
                   new_side.content ? *new_side.content : static_cast<const TextSource&>(nothing),
                   [&](std::string_view piece) { out.Data(piece); });
}

/// The diff of one path whose old and new sides are given (either may be missing).
void DiffFile(const std::string& shown, const Side& old_side, const Side& new_side, const DiffOptions& options,
              DiffReceiver& out) {
  // Names as git writes them (quote_path.h): a name cannot end a header line or hide one.
  std::string header = "diff --git " + api::QuotePath("a/" + shown) + " " + api::QuotePath("b/" + shown) + "\n";
  if (!old_side.exists) {
    header += "new file mode " + OctalMode(new_side.mode) + "\n";
  } else if (!new_side.exists) {
    header += "deleted file mode " + OctalMode(old_side.mode) + "\n";
  } else if ((old_side.mode & (S_IFMT | 07777)) != (new_side.mode & (S_IFMT | 07777))) {
    header += "old mode " + OctalMode(old_side.mode) + "\nnew mode " + OctalMode(new_side.mode) + "\n";
  }
  bool old_text = HasContent(old_side), new_text = HasContent(new_side);
  if (!old_text && !new_text) return out.File(header);  // directories, fifos, devices: header only
  std::string old_label = old_side.exists ? api::QuotePath("a/" + shown) : "/dev/null";
  std::string new_label = new_side.exists ? api::QuotePath("b/" + shown) : "/dev/null";
  if (old_side.binary || new_side.binary) return DiffBinary(header, old_side, new_side, old_label, new_label, options, out);
  const MemoryText nothing{std::string_view()};
  const TextSource& old_content = old_text ? *old_side.content : static_cast<const TextSource&>(nothing);
  const TextSource& new_content = new_text ? *new_side.content : static_cast<const TextSource&>(nothing);
  if (options.binary) {
    // As `git diff --binary` writes text diffs too: an index line, abbreviated, whenever the ids
    // differ (an added or deleted empty file has one and no hunk).
    const std::string old_id = old_text ? BlobId(old_content) : std::string(kAbsentBlobId);
    const std::string new_id = new_text ? BlobId(new_content) : std::string(kAbsentBlobId);
    if (old_id == new_id) return out.File(header);
    header += IndexLine(old_id, new_id, old_side, new_side, kShortIdDigits);
  }
  if (SameText(old_content, new_content)) return out.File(header);
  out.File(header + "--- " + old_label + "\n+++ " + new_label + "\n");
  ForEachHunk(old_content, new_content, options.context_lines, out, options.text_limits);
}

/// Deletions of every file below a directory of the live tree (sorted, no symlink followed).
void DeletedTree(int lower_dirfd, const std::string& path, const DiffOptions& options, DiffReceiver& out) {
  UniqueFd dir = OpenBeneath(lower_dirfd, path, O_RDONLY | O_DIRECTORY);
  if (!dir) return;
  std::vector<std::string> names = DirectoryListing::Of(dir.get()).Names();
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    std::string child = path + "/" + name;
    Side old_side = ReadSide(lower_dirfd, child, options);
    if (!old_side.exists) continue;
    if (S_ISDIR(old_side.mode)) {
      DeletedTree(lower_dirfd, child, options, out);
    } else {
      DiffFile(options.path_prefix + child, old_side, Side{}, options, out);
    }
  }
}

/// The file diffs of one change, to `out` (DiffChange says which).
void EmitChange(const Change& change, int lower_dirfd, int upper_dirfd, const DiffOptions& options, DiffReceiver& out) {
  std::string shown = change.path == "." ? (options.path_prefix.empty() ? "." : options.path_prefix.substr(0, options.path_prefix.size() - 1))
                                         : options.path_prefix + change.path;
  Side old_side = change.kind == ChangeKind::kAdded ? Side{} : ReadSide(lower_dirfd, change.path, options);
  Side new_side = change.kind == ChangeKind::kDeleted ? Side{} : ReadSide(upper_dirfd, change.path, options);
  bool old_dir = old_side.exists && S_ISDIR(old_side.mode);
  bool new_dir = new_side.exists && S_ISDIR(new_side.mode);
  if (change.kind == ChangeKind::kTypeChanged || (old_dir && !new_side.exists)) {
    // A type change reads as git shows it: the old entry deleted, the new one added.
    if (old_dir) DeletedTree(lower_dirfd, change.path, options, out);
    else if (old_side.exists) DiffFile(shown, old_side, Side{}, options, out);
    if (new_side.exists && !new_dir) DiffFile(shown, Side{}, new_side, options, out);
    return;
  }
  if (new_dir && !old_side.exists) return;  // a new directory: its entries speak for it
  if (old_dir || new_dir) {
    if (old_dir && new_dir && (old_side.mode & 07777) != (new_side.mode & 07777)) DiffFile(shown, old_side, new_side, options, out);
    return;
  }
  DiffFile(shown, old_side, new_side, options, out);
}

}  // namespace

std::string FileDiff::Text() const {
  std::string text = header;
  for (const auto& hunk : hunks) text += hunk.header + "\n" + hunk.body;
  return text;
}

std::vector<FileDiff> DiffChange(const Change& change, int lower_dirfd, int upper_dirfd, const DiffOptions& options) {
  DiffCollector collector;
  EmitChange(change, lower_dirfd, upper_dirfd, options, collector);
  return std::move(collector.files);
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
  // The changes shown hunk by hunk are counted first: a hunk that does not exist is refused
  // before any of the diff is written.
  std::set<std::string> in_part;  // of them, those shown by some of their hunks, not all
  for (const auto& change : changes) {
    auto asked = options.only_hunks.find(change.path);
    if (asked == options.only_hunks.end() || renamed_away.count(change.path) || by_added.count(change.path)) continue;
    HunkCounter counter(asked->second);
    EmitChange(change, lower_dirfd, upper_dirfd, options, counter);
    counter.End();
    size_t count = counter.files == 1 ? counter.hunks : 0;
    const std::string shown = options.path_prefix + change.path;
    for (const api::HunkRef& ref : asked->second) {
      if (ref.hunk < 1 || static_cast<size_t>(ref.hunk) > count)
        throw Error(Code::kNotFound, "no hunk " + shown + ":" + api::ToString(ref) + " (" + shown + " has " +
                                         (count == 0 ? "no hunks" : count == 1 ? "1 hunk" : std::to_string(count) + " hunks") + ")");
      size_t parts = counter.parts.count(ref.hunk) ? counter.parts[ref.hunk] : 1;
      if (ref.part > 0 && static_cast<size_t>(ref.part) > parts)
        throw Error(Code::kNotFound, "no hunk " + shown + ":" + api::ToString(ref) + " (hunk " + std::to_string(ref.hunk) + " of " +
                                         shown + " has " + std::to_string(parts) + (parts == 1 ? " part" : " parts") + ")");
    }
    if (!AsksForAll(asked->second, count, counter.parts)) in_part.insert(change.path);
  }
  DiffStreamer out(out_fd, options.output_stall_ms);
  try {
    for (const auto& change : changes) {
      if (renamed_away.count(change.path)) continue;  // shown with its added half
      auto rename = by_added.find(change.path);
      if (rename != by_added.end()) {
        out.Write(DiffRename(*rename->second, lower_dirfd, upper_dirfd, options).Text());
        continue;
      }
      auto asked = options.only_hunks.find(change.path);
      out.Only(asked != options.only_hunks.end() ? &asked->second : nullptr, in_part.count(change.path) != 0);
      EmitChange(change, lower_dirfd, upper_dirfd, options, out);
      out.EndHunk();
    }
    out.Flush();
  } catch (const ReaderGone&) {
    return false;
  }
  return true;
}

}  // namespace sandboxd
