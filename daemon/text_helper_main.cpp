// sandboxd-text-helper: the unprivileged half of sandboxd that reads text: diffs, hunk counts
// and the merge of approved hunks (with libgit2's patch API). Started like sandboxd-helper
// (helper_main.cpp), as the sandbox's owner with directory fds and a JSON request on stdin.

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "diff_writer.h"
#include "errors.h"
#include "helper_request.h"
#include "hunk_merge.h"
#include "text_file.h"

namespace {

using sandboxd::Code;
using sandboxd::Error;
using sandboxd::ParseRoots;

nlohmann::json Diff(const nlohmann::json& request) {
  int out = request.at("output_fd").get<int>();
  // Only a pipe or a socket has a reader that can stop reading; a file (sandboxctl review's
  // memory file) takes every write, in pieces as large as it likes.
  struct stat out_st;
  bool can_stall = fstat(out, &out_st) != 0 || S_ISFIFO(out_st.st_mode) || S_ISSOCK(out_st.st_mode) || S_ISCHR(out_st.st_mode);
  for (const auto& root : ParseRoots(request)) {
    sandboxd::DiffOptions options;
    options.path_prefix = root.prefix;
    options.only_hunks = root.only_hunks;
    if (can_stall) options.output_stall_ms = request.value("output_stall_ms", int64_t{0});
    if (!sandboxd::WriteDiff(root.changes, root.live_fd, root.upper_fd, options, out, root.renames)) break;  // reader went away
  }
  return {{"ok", true}};
}

/// Files larger than this have no hunks, exactly as `diff` shows them as binary.
const size_t kMaxTextBytes = sandboxd::DiffOptions{}.max_text_bytes;

/// {"roots": [{"counts": {PATH: hunks, ...}}, ...]}: for each change, how many hunks `diff` shows
/// for it when it can be committed hunk by hunk, else -1 (it can only be approved whole).
nlohmann::json Hunks(const nlohmann::json& request) {
  nlohmann::json answer_roots = nlohmann::json::array();
  for (const auto& root : ParseRoots(request)) {
    nlohmann::json counts = nlohmann::json::object();
    for (const auto& change : root.changes) {
      int count = -1;
      if (sandboxd::MayHaveHunks(change)) {
        if (auto text = sandboxd::ReadTextModification(root.live_fd, root.upper_fd, change.path, kMaxTextBytes))
          count = static_cast<int>(sandboxd::CountHunks(text->old_text, text->new_text));
      }
      counts[change.path] = count;
    }
    answer_roots.push_back({{"counts", counts}});
  }
  return {{"roots", answer_roots}};
}

void WriteMerged(int fd, const std::string& text, const std::string& path) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0)
    throw Error(Code::kInvalidArgument, "the output for the hunks of " + path + " is not an empty regular file");
  size_t done = 0;
  while (done < text.size()) {
    ssize_t put = write(fd, text.data() + done, text.size() - done);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) sandboxd::ThrowErrno("cannot write the approved hunks of " + path);
    done += static_cast<size_t>(put);
  }
  if (fsync(fd) != 0) sandboxd::ThrowErrno("cannot sync the approved hunks of " + path);
}

/// Writes the live file with only the approved hunks of the sandbox's version applied to
/// output_fd (an empty file the daemon made), synced, for the daemon to rename into place.
nlohmann::json Merge(const nlohmann::json& request) {
  int live_fd = request.at("live_fd").get<int>();
  int upper_fd = request.at("upper_fd").get<int>();
  int output_fd = request.at("output_fd").get<int>();
  auto path = request.at("path").get<std::string>();
  auto approved = request.at("hunks").get<std::set<int>>();
  std::string why_not;
  auto text = sandboxd::ReadTextModification(live_fd, upper_fd, path, kMaxTextBytes, &why_not);
  if (!text) throw Error(Code::kInvalidArgument, "cannot commit single hunks of " + path + ": " + why_not);
  std::string merged;
  try {
    merged = sandboxd::ApplyHunks(text->old_text, text->new_text, approved);
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
  WriteMerged(output_fd, merged, path);
  return {{"ok", true}};
}

}  // namespace

int main(int argc, char** argv) {
  return sandboxd::ServeHelperRequest(argc, argv, {{"diff", Diff}, {"hunks", Hunks}, {"merge", Merge}});
}
