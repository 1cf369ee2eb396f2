#pragma once
/// The daemon's side of the owner-side helpers: HelperPrograms runs them with the owner's
/// credentials (so every file they read or write is checked by the kernel against the owner,
/// never root), and the functions below make each operation's request (directory fds of the
/// live roots and upper layers plus JSON) and read its answer, through any OwnerHelpers
/// (owner_helpers.h).

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/credentials.h"
#include "model/change.h"
#include "model/commit_step.h"
#include "model/helper_request.h"
#include "model/renames.h"
#include "model/hunk_pick.h"
#include "helper_clients/owner_helpers.h"

namespace sandboxd {

struct HelperRoot {
  int live_fd = -1;      ///< O_PATH dir fd of the live root (daemon's)
  int upper_fd = -1;     ///< O_PATH dir fd of the upper layer (daemon's)
  std::string prefix;    ///< "N/" in multi-root sandboxes, else ""
  std::vector<Change> changes;
  std::vector<Rename> renames;  ///< "diff" only: shown as renames
  std::map<std::string, std::set<api::HunkRef>> only_hunks;  ///< "diff" only: the hunks or parts shown of these changes
  bool binary = false;          ///< "diff" only: binary changes as git's binary patches
};

/// sandboxd-helper and sandboxd-text-helper (beside it) as processes of the owner's: exec'd with
/// the owner's uid, gid and groups, no_new_privs, an empty environment, dying with the calling
/// thread.
class HelperPrograms final : public OwnerHelpers {
 public:
  explicit HelperPrograms(std::string helper_path) : helper_path_(std::move(helper_path)) {}
  nlohmann::json Run(HelperOp op, const UserCredentials& user, const nlohmann::json& request, const std::vector<int>& fds) override;

 private:
  std::string helper_path_;
};

/// `op` is "diff" or "hunks". `output_fd` (diff only) receives the diff text; the
/// helper gives up when its reader reads nothing for `output_stall_ms` (0: waits for ever).
nlohmann::json RunHelper(OwnerHelpers& helpers, HelperOp op, const UserCredentials& user,
                         const std::vector<HelperRoot>& roots, int output_fd = -1, int64_t output_stall_ms = 0);

/// The path of another of sandboxd's programs installed beside sandboxd-helper (`helper_path`).
std::string BesideHelper(const std::string& helper_path, const std::string& program);

struct StepHelperRoot {
  int live_fd = -1;
  int upper_fd = -1;
  int removed_fd = -1;
};

/// Runs a journaled commit's steps as the owner, "forward" or "back" (commit_steps_apply.h): the
/// whole commit, or one page of it (`sync` after the last).
void RunStepsHelper(OwnerHelpers& helpers, const UserCredentials& user, StepDirection direction,
                    const std::vector<StepHelperRoot>& roots, const std::vector<CommitStep>& steps, bool sync = true);

/// For each root (in order), each of its changes' path → the hunks `diff` shows for it when it
/// can be committed hunk by hunk (a text file modified in place), else -1; `with_parts`: and the
/// parts of each hunk (hunk_parts.h).
std::vector<std::map<std::string, HunkShape>> CountHunksAsOwner(OwnerHelpers& helpers, const UserCredentials& user,
                                                                      const std::vector<HelperRoot>& roots, bool with_parts = false);

/// Writes to `output_fd` (an empty regular file) the live file `path` with only the hunks and
/// parts `pick` names (from 1, as `diff` numbers them) taken from the upper layer, and syncs it.
/// Throws Error(kInvalidArgument) when `path` is not a text file on both sides, Error(kNotFound)
/// for a hunk or part the change does not have.
void MergeHunksAsOwner(OwnerHelpers& helpers, const UserCredentials& user, int live_fd, int upper_fd,
                       const std::string& path, const HunkPick& pick, int output_fd);

/// How many parts each hunk has of the diff that would be left of `path` once `pick` of it went
/// live (what MergeHunksAsOwner writes, against the upper layer's file).
std::vector<int> ShapeLeftAsOwner(OwnerHelpers& helpers, const UserCredentials& user, int live_fd, int upper_fd,
                                  const std::string& path, const HunkPick& pick);

/// Of each of `paths` beneath the upper `upper_fd`, the digest a decision made while a job ran
/// is bound to (helpers/content_digest.h), in order, as the owner.
std::vector<std::string> DigestsAsOwner(OwnerHelpers& helpers, const UserCredentials& user, int upper_fd,
                                        const std::vector<std::string>& paths);

/// What a git index stages, and the file that was read (helpers/staged_digest.h).
struct StagedRead {
  std::string digest;  ///< "" when it could not be read
  ino_t ino = 0;
  int64_t ctime_ns = 0;
};
/// Of each of `paths` (git indexes) beneath `dir_fd`, what it stages, in order, as the owner.
std::vector<StagedRead> StagedDigestsAsOwner(OwnerHelpers& helpers, const UserCredentials& user, int dir_fd,
                                             const std::vector<std::string>& paths);

/// The repository at `git_dir` beneath the root as the sandbox left it (helpers/git_summary.h):
/// its fields as JSON, read as the owner.
nlohmann::json GitSummaryAsOwner(OwnerHelpers& helpers, const UserCredentials& user, int live_fd, int upper_fd, const std::string& git_dir);

/// The subset of `paths` whose live and upper entries have the same content (regular files byte
/// for byte, symlinks by target; see same_content.h).
std::set<std::string> SameContentAsOwner(OwnerHelpers& helpers, const UserCredentials& user, int live_fd,
                                         int upper_fd, const std::vector<std::string>& paths);


struct RenameRoot {
  int live_fd = -1;
  int upper_fd = -1;
  RenameCandidates candidates;
};

/// For each root (in order), the candidates that are renames: identical content, read as the
/// owner (renames.h).
std::vector<std::vector<Rename>> ConfirmRenamesAsOwner(OwnerHelpers& helpers, const UserCredentials& user,
                                                       const std::vector<RenameRoot>& roots);

}  // namespace sandboxd
