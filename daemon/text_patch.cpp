#include "text_patch.h"

#include <git2.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "errors.h"

namespace sandboxd {
namespace {

constexpr size_t kBinaryProbe = 8000;  // git looks for a NUL byte in this many leading bytes

void InitLibgit2() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

}  // namespace

void GitPatchDeleter::operator()(git_patch* patch) const { git_patch_free(patch); }

GitPatch MakeTextPatch(std::string_view old_text, std::string_view new_text, int context_lines) {
  InitLibgit2();
  git_diff_options opts;
  git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
  opts.context_lines = static_cast<uint32_t>(context_lines);
  opts.interhunk_lines = 0;
  opts.flags = GIT_DIFF_FORCE_TEXT;
  git_patch* raw = nullptr;
  if (git_patch_from_buffers(&raw, old_text.data(), old_text.size(), "a", new_text.data(), new_text.size(), "b", &opts) != 0) {
    const git_error* error = git_error_last();
    throw Error(Code::kFailed, std::string("cannot compute a diff: ") + (error ? error->message : "libgit2 error"));
  }
  return GitPatch(raw);
}

bool LooksBinary(std::string_view content) {
  return content.substr(0, kBinaryProbe).find('\0') != std::string_view::npos;  // (an empty view's data() may be null)
}

}  // namespace sandboxd
