// What sandboxd-text-helper does (text_helper_main.cpp), as the sandbox's owner: diffs, hunk
// counts and the merge of approved hunks, with libgit2's patch API.

#include "helpers/helper_operations.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "base/errors.h"
#include "model/helper_request.h"
#include "text/diff_writer.h"
#include "unique_fd.h"
#include "model/hunk_pick.h"
#include "text/hunk_merge.h"
#include "text/hunk_parts.h"
#include "text/text_file.h"
#include "text/text_hunks.h"
#include "helpers/git_summary.h"
#include "helpers/staged_digest.h"

namespace sandboxd {
namespace {

nlohmann::json Diff(const nlohmann::json& request) {
  int out = request.at("output_fd").get<int>();
  // Only a pipe or a socket has a reader that can stop reading; a file (sandboxctl review's
  // memory file) takes every write, in pieces as large as it likes.
  struct stat out_st;
  bool can_stall = fstat(out, &out_st) != 0 || S_ISFIFO(out_st.st_mode) || S_ISSOCK(out_st.st_mode) || S_ISCHR(out_st.st_mode);
  for (const auto& root : ParseRoots(request)) {
    DiffOptions options;
    options.path_prefix = root.prefix;
    options.only_hunks = root.only_hunks;
    if (can_stall) options.output_stall_ms = request.value("output_stall_ms", int64_t{0});
    // `diff --binary` (Diff's option "binary", through WriteDiff and RunHelper): git's binary
    // patches, with full index lines (DiffOptions::binary).
    options.binary = root.binary;
    if (!WriteDiff(root.changes, root.live_fd, root.upper_fd, options, out, root.renames)) break;  // reader went away
  }
  return {{"ok", true}};
}

/// Files larger than this have no hunks, exactly as `diff` shows them as binary; and hunks are
/// found as `diff` finds them: both from DiffOptions' defaults, which the diff above uses.
const uint64_t kMaxTextBytes = DiffOptions{}.max_text_bytes;
const TextDiffLimits kTextLimits = DiffOptions{}.text_limits;
const int kContextLines = DiffOptions{}.context_lines;

/// {"roots": [{"counts": {PATH: hunks, ...}}, ...]}: for each change, how many hunks `diff` shows
/// for it when it can be committed hunk by hunk, else -1 (it can only be approved whole). With
/// "with_parts": true, each root also has "parts": {PATH: [parts of hunk 1, ...], ...} for the
/// changes with hunks (hunk_parts.h).
nlohmann::json Hunks(const nlohmann::json& request) {
  const bool with_parts = request.value("with_parts", false);
  nlohmann::json answer_roots = nlohmann::json::array();
  for (const auto& root : ParseRoots(request)) {
    nlohmann::json counts = nlohmann::json::object(), parts = nlohmann::json::object();
    for (const auto& change : root.changes) {
      int count = -1;
      if (MayHaveHunks(change)) {
        if (auto text = OpenTextModification(root.live_fd, root.upper_fd, change.path, kMaxTextBytes)) {
          if (with_parts) {
            std::vector<int> shape = CountHunkParts(*text->old_text, *text->new_text, kContextLines, kTextLimits);
            count = static_cast<int>(shape.size());
            parts[change.path] = shape;
          } else {
            count = static_cast<int>(CountHunks(*text->old_text, *text->new_text, kContextLines, kTextLimits));
          }
        }
      }
      counts[change.path] = count;
    }
    nlohmann::json answer = {{"counts", counts}};
    if (with_parts) answer["parts"] = parts;
    answer_roots.push_back(std::move(answer));
  }
  return {{"roots", answer_roots}};
}

/// The hunks and parts a request picks: "hunks": [N, ...], "parts": [[N, [M, ...]], ...].
HunkPick PickOf(const nlohmann::json& request) {
  HunkPick pick;
  pick.hunks = request.at("hunks").get<std::set<int>>();
  if (request.contains("parts")) pick.parts = request.at("parts").get<std::map<int, std::set<int>>>();
  return pick;
}

/// The merged file, written as it is made into the empty regular file the daemon gave.
class MergedOutput {
 public:
  MergedOutput(int fd, const std::string& path) : fd_(fd), path_(path) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0)
      throw Error(Code::kInvalidArgument, "the output for the hunks of " + path + " is not an empty regular file");
    buffer_.reserve(kBuffer);
  }
  void Write(std::string_view piece) {
    if (buffer_.size() + piece.size() > kBuffer) Flush();
    if (piece.size() >= kBuffer) Put(piece);
    else buffer_.append(piece);
  }
  void Finish() {
    Flush();
    if (fsync(fd_) != 0) ThrowErrno("cannot sync the approved hunks of " + path_);
  }
  void Flush() {
    Put(buffer_);
    buffer_.clear();
  }
  /// Leaves the output empty again, so that nothing half made can be taken for the result.
  void Discard() {
    buffer_.clear();
    if (ftruncate(fd_, 0) != 0) { /* the daemon drops an output whose helper failed anyway */ }
  }

 private:
  static constexpr size_t kBuffer = size_t{1} << 20;
  void Put(std::string_view text) {
    size_t done = 0;
    while (done < text.size()) {
      ssize_t put = write(fd_, text.data() + done, text.size() - done);
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) ThrowErrno("cannot write the approved hunks of " + path_);
      done += static_cast<size_t>(put);
    }
  }
  const int fd_;
  const std::string& path_;
  std::string buffer_;
};

/// What `merge` and `left` are asked about: the text modification at "path" (fds "live_fd" and
/// "upper_fd") and the hunks and parts picked of it.
struct PickedText {
  std::string path;
  HunkPick pick;
  TextFiles text;
};

PickedText OpenPicked(const nlohmann::json& request) {
  auto path = request.at("path").get<std::string>();
  std::string why_not;
  auto text = OpenTextModification(request.at("live_fd").get<int>(), request.at("upper_fd").get<int>(), path, kMaxTextBytes, &why_not);
  if (!text) throw Error(Code::kInvalidArgument, "cannot commit single hunks of " + path + ": " + why_not);
  return {path, PickOf(request), std::move(*text)};
}

/// The live text with the picked hunks and parts of the sandbox's, into `output` (unflushed).
/// Errors name the path; should either file change meanwhile, the merge is refused rather than
/// mix two versions.
void MergePicked(PickedText& picked, MergedOutput& output) {
  try {
    MergeHunks(*picked.text.old_text, *picked.text.new_text, picked.pick, [&](std::string_view piece) { output.Write(piece); },
               kContextLines, kTextLimits);
    picked.text.old_text->CheckUnchanged();
    picked.text.new_text->CheckUnchanged();
  } catch (const Error& e) {
    throw Error(e.code(), picked.path + ": " + e.what());
  }
}

/// Writes the live file with only the approved hunks of the sandbox's version applied to
/// output_fd (an empty file the daemon made), synced, for the daemon to rename into place. The
/// files are read a piece at a time as the merge goes.
nlohmann::json Merge(const nlohmann::json& request) {
  PickedText picked = OpenPicked(request);
  MergedOutput output(request.at("output_fd").get<int>(), picked.path);
  try {
    MergePicked(picked, output);
    output.Finish();
  } catch (...) {
    output.Discard();
    throw;
  }
  return {{"ok", true}};
}

/// {"parts": [parts of hunk 1, ...]}: how the diff of `path` would be cut once the hunks and
/// parts the request picks went live, as Merge writes them: the merged text is made in a
/// memory file and diffed against the sandbox's version. What a partial commit leaves keeps
/// its decisions by this shape (approval.h, ApprovalLeft).
nlohmann::json Left(const nlohmann::json& request) {
  PickedText picked = OpenPicked(request);
  UniqueFd merged(memfd_create("sandboxd-left", MFD_CLOEXEC));
  if (!merged) ThrowErrno("cannot make a memory file for what is left of " + picked.path);
  MergedOutput output(merged.get(), picked.path);
  MergePicked(picked, output);
  output.Flush();
  struct stat st;
  if (fstat(merged.get(), &st) != 0) ThrowErrno("cannot stat the memory file of what is left of " + picked.path);
  FileText left(std::move(merged), st, picked.path);
  nlohmann::json answer = {{"parts", CountHunkParts(left, *picked.text.new_text, kContextLines, kTextLimits)}};
  // A file that changed meanwhile would give the shape of a mix of two versions.
  picked.text.old_text->CheckUnchanged();
  picked.text.new_text->CheckUnchanged();
  return answer;
}

/// {"staged": [{"digest", "ino", "ctime_ns"}, ...]}: what each index file `paths` names beneath `live_fd` stages
/// (staged_digest.h), in the order asked.
nlohmann::json Staged(const nlohmann::json& request) {
  int live_fd = request.at("live_fd").get<int>();
  nlohmann::json digests = nlohmann::json::array();
  for (const auto& path : request.at("paths")) {
    StagedIndex staged = StagedDigest(live_fd, path.get<std::string>());
    digests.push_back({{"digest", staged.digest}, {"ino", static_cast<uint64_t>(staged.ino)}, {"ctime_ns", staged.ctime_ns}});
  }
  return {{"staged", digests}};
}

/// {"branch", "was_branch", "from", "to", "new_branch", "ahead", "behind", "index"}: the
/// repository at "git_dir" as the sandbox left it (git_summary.h).
nlohmann::json Git(const nlohmann::json& request) {
  GitSummary summary = SummarizeGit(request.at("live_fd").get<int>(), request.at("upper_fd").get<int>(), request.at("git_dir").get<std::string>());
  return {{"branch", summary.branch}, {"was_branch", summary.was_branch}, {"from", summary.from},   {"to", summary.to},
          {"new_branch", summary.new_branch}, {"ahead", summary.ahead},   {"behind", summary.behind}, {"index", summary.index}};
}

}  // namespace

const std::map<HelperOp, HelperOperation>& TextHelperOperations() {
  static const std::map<HelperOp, HelperOperation> operations = {
      {HelperOp::kDiff, Diff}, {HelperOp::kHunks, Hunks}, {HelperOp::kMerge, Merge}, {HelperOp::kLeft, Left},
      {HelperOp::kStaged, Staged}, {HelperOp::kGit, Git}};
  return operations;
}

}  // namespace sandboxd
