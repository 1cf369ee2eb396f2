#include "commit_runner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>

#include "beneath.h"
#include "commit_planner.h"
#include "credentials.h"
#include "errors.h"
#include "fs_util.h"
#include "helper_client.h"

namespace sandboxd {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

/// overlayfs marks copied-up entries with trusted.overlay.* attributes (origin, nlink). They
/// mean something only inside an upper layer; an entry going live must not carry them into the
/// user's tree, where a later overlay could misread them. Only root may remove trusted.*.
void StripOverlayAttributes(int upper_root, const CommitStep& step) {
  auto [parent_path, name] = SplitParent(step.path);
  UniqueFd parent = OpenBeneath(upper_root, parent_path, O_PATH | O_DIRECTORY);
  if (!parent) return;  // the helper will report it
  UniqueFd entry(openat(parent.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!entry) return;
  std::string proc = "/proc/self/fd/" + std::to_string(entry.get());
  for (const char* attribute : {"trusted.overlay.origin", "trusted.overlay.nlink"})
    if (lremovexattr(proc.c_str(), attribute) != 0 && errno != ENODATA && errno != ENOTSUP && errno != EPERM)
      ThrowErrno("cannot clear overlay attributes of " + step.path + " in the sandbox");
}

}  // namespace

CommitRunner::CommitRunner(const Layout& layout, CommitJournal& journal, std::string helper_path)
    : layout_(layout), journal_(journal), helper_path_(std::move(helper_path)) {}

CommitRunner::Outcome CommitRunner::CommitAll(Sandbox& sandbox) {
  Outcome outcome;
  auto changes = sandbox.Scan();
  std::vector<UniqueFd> lives, uppers;
  std::vector<int> live_fds, upper_fds;
  std::vector<std::string> prefixes;
  bool one_file_system = true;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    lives.push_back(sandbox.OpenLiveRoot(i));
    uppers.push_back(sandbox.OpenUpper(i));
    live_fds.push_back(lives.back().get());
    upper_fds.push_back(uppers.back().get());
    prefixes.push_back(sandbox.PathPrefix(i));
    struct stat live_st, upper_st;
    if (fstat(live_fds.back(), &live_st) != 0 || fstat(upper_fds.back(), &upper_st) != 0) ThrowErrno("cannot stat a root");
    one_file_system &= live_st.st_dev == upper_st.st_dev;
  }
  size_t total = 0;
  for (const auto& root : changes) total += root.changes.size();
  if (total == 0) return outcome;

  if (!one_file_system) {
    // Entries cannot be renamed across file systems: each file is copied to a temporary file
    // beside its target, synced and renamed over it. Not journaled (yet): see the README.
    std::vector<HelperRoot> roots;
    for (auto& root : changes) {
      roots.push_back({live_fds[root.root], upper_fds[root.root], prefixes[root.root], std::move(root.changes)});
    }
    auto answer = RunHelper(helper_path_, "commit", LookupUser(sandbox.owner()), roots);
    outcome.committed = answer.value("applied", size_t{0});
    for (const auto& skipped : answer.value("skipped", nlohmann::json::array())) outcome.skipped.push_back(skipped.get<std::string>());
    sandbox.ClearLayers();
    return outcome;
  }

  CommitPlan plan = PlanCommit(changes, live_fds, upper_fds, prefixes);
  outcome.skipped = plan.skipped;
  outcome.committed = plan.steps.size();
  for (const auto& step : plan.steps)
    if (step.action == StepAction::kPlace) StripOverlayAttributes(upper_fds[step.root], step);

  int64_t commit = journal_.Begin(sandbox.id(), plan.steps);
  try {
    PrepareDirectories(sandbox, commit);
    Run(sandbox, commit, "forward", plan.steps);
  } catch (...) {
    // Take back whatever was done. If even that fails, the journal still says "applying": the
    // next start-up finishes the commit or takes it back, and until then the sandbox is frozen.
    try {
      Run(sandbox, commit, "back", plan.steps);
    } catch (const std::exception& e) {
      std::string why = "commit " + std::to_string(commit) + " failed and could not be taken back (" + e.what() +
                        "); restarting sandboxd finishes it or takes it back";
      sandbox.MarkBroken(why);
      throw Error(Code::kInvalidState, "sandbox " + sandbox.id() + ": " + why);
    }
    journal_.SetState(commit, "rolled-back");
    RemoveTree(layout_.CommitDir(sandbox.id(), commit));
    throw;
  }
  journal_.SetState(commit, "applied");
  KeepBackups(sandbox, commit);
  journal_.SetState(commit, "done");
  return outcome;
}

std::vector<std::string> CommitRunner::Recover(Sandbox& sandbox) {
  std::vector<std::string> lines;
  for (const auto& commit : journal_.Unfinished(sandbox.id())) {
    std::string what = "commit " + std::to_string(commit.id) + " of sandbox " + sandbox.id();
    if (commit.state == "applying") {
      PrepareDirectories(sandbox, commit.id);
      try {
        Run(sandbox, commit.id, "forward", commit.steps);
        lines.push_back(what + " was cut off; finished it");
      } catch (const std::exception& e) {
        Run(sandbox, commit.id, "back", commit.steps);
        journal_.SetState(commit.id, "rolled-back");
        RemoveTree(layout_.CommitDir(sandbox.id(), commit.id));
        lines.push_back(what + " was cut off and could not be finished (" + e.what() + "); took it back");
        continue;
      }
      journal_.SetState(commit.id, "applied");
    } else {
      lines.push_back(what + " was cut off while keeping its backups; finished it");
    }
    KeepBackups(sandbox, commit.id);
    journal_.SetState(commit.id, "done");
  }
  return lines;
}

void CommitRunner::PrepareDirectories(const Sandbox& sandbox, int64_t commit) {
  MakeDirectory(layout_.CommitsDir(sandbox.id()), 0700);
  MakeDirectory(layout_.CommitDir(sandbox.id(), commit), 0700);
  MakeDirectory(layout_.CommitDir(sandbox.id(), commit) + "/removed", 0700);
  MakeDirectory(layout_.CommitDir(sandbox.id(), commit) + "/upper", 0700);
  // The helper, running as the owner, moves removed live entries in here.
  for (size_t i = 0; i < sandbox.roots().size(); ++i)
    MakeDirectory(layout_.CommitRemovedDir(sandbox.id(), commit, i), 0700, sandbox.owner(), 0);
}

void CommitRunner::Run(const Sandbox& sandbox, int64_t commit, const std::string& direction,
                       const std::vector<CommitStep>& steps) {
  std::vector<UniqueFd> fds;
  std::vector<StepHelperRoot> roots;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    fds.push_back(sandbox.OpenLiveRoot(i));
    fds.push_back(sandbox.OpenUpper(i));
    fds.push_back(OpenDirectoryNoSymlinks(layout_.CommitRemovedDir(sandbox.id(), commit, i), O_PATH));
    roots.push_back({fds[fds.size() - 3].get(), fds[fds.size() - 2].get(), fds.back().get()});
  }
  RunStepsHelper(helper_path_, LookupUser(sandbox.owner()), direction, roots, steps);
}

void CommitRunner::KeepBackups(const Sandbox& sandbox, int64_t commit) {
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    std::string upper = layout_.UpperDir(sandbox.id(), i);
    std::string kept = layout_.CommitUpperDir(sandbox.id(), commit, i);
    if (Exists(upper) && !Exists(kept) && rename(upper.c_str(), kept.c_str()) != 0)
      ThrowErrno("cannot keep the backups of commit " + std::to_string(commit));
    RemoveTree(layout_.WorkDir(sandbox.id(), i));
  }
}

}  // namespace sandboxd
