#include "text/text_patch.h"

#include <git2.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "base/errors.h"

namespace sandboxd {
namespace {

void InitLibgit2() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

/// The options of every line diff: only the context differs between MakeTextPatch and
/// ChangedLineRuns, and context does not change which lines libgit2 finds changed.
git_diff_options TextDiffOptions(int context_lines) {
  git_diff_options opts;
  git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
  opts.context_lines = static_cast<uint32_t>(context_lines);
  opts.interhunk_lines = 0;
  opts.flags = GIT_DIFF_FORCE_TEXT;
  return opts;
}

[[noreturn]] void ThrowLibgit2() {
  const git_error* error = git_error_last();
  throw Error(Code::kFailed, std::string("cannot compute a diff: ") + (error ? error->message : "libgit2 error"));
}

int CollectRun(const git_diff_delta*, const git_diff_hunk* hunk, void* payload) {
  auto* runs = static_cast<std::vector<ChangedLines>*>(payload);
  runs->push_back({FirstLineOfRange(hunk->old_start, hunk->old_lines), static_cast<uint64_t>(hunk->old_lines),
                   FirstLineOfRange(hunk->new_start, hunk->new_lines), static_cast<uint64_t>(hunk->new_lines)});
  return 0;
}

}  // namespace

void GitPatchDeleter::operator()(git_patch* patch) const { git_patch_free(patch); }

GitPatch MakeTextPatch(std::string_view old_text, std::string_view new_text, int context_lines) {
  InitLibgit2();
  git_diff_options opts = TextDiffOptions(context_lines);
  git_patch* raw = nullptr;
  if (git_patch_from_buffers(&raw, old_text.data(), old_text.size(), "a", new_text.data(), new_text.size(), "b", &opts) != 0)
    ThrowLibgit2();
  return GitPatch(raw);
}

std::vector<ChangedLines> ChangedLineRuns(std::string_view old_text, std::string_view new_text) {
  InitLibgit2();
  // Without context and interhunk lines each hunk is one run: xdiff parts runs by at least one
  // unchanged line, and puts two runs in one hunk only when at most 2 x context lines part them.
  git_diff_options opts = TextDiffOptions(0);
  std::vector<ChangedLines> runs;
  if (git_diff_buffers(old_text.data(), old_text.size(), "a", new_text.data(), new_text.size(), "b", &opts, nullptr,
                       nullptr, CollectRun, nullptr, &runs) != 0)
    ThrowLibgit2();
  return runs;
}

bool LooksBinary(std::string_view content) {
  return content.substr(0, kBinaryProbeBytes).find('\0') != std::string_view::npos;  // (an empty view's data() may be null)
}

}  // namespace sandboxd
