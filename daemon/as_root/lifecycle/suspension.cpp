#include "lifecycle/suspension.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/fs_util.h"
#include "base/tree_count.h"
#include "lifecycle/roots_progress.h"
#include "review/decision_pins.h"

namespace sandboxd {
namespace {

std::string ArchiveDir(const std::string& archive_path) { return archive_path.substr(0, archive_path.rfind('/')); }

/// The archive helper's figures of the root under way as the sandbox's progress.
ArchiveProgressSink ProgressOf(const Sandbox& sandbox, RootsProgress& roots) {
  return [&sandbox, &roots](const ArchiveProgress& p) { sandbox.gate().ReportProgress(roots.Of(p)); };
}

/// A suspend's totals over every root, when there are several (one root's helper counts its
/// own): a walk of each layer's metadata before the archiving.
ArchiveProgress SuspendTotals(const Sandbox& sandbox) {
  ArchiveProgress totals;
  if (sandbox.roots().size() < 2) return totals;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    TreeCount count = CountTree(sandbox.paths().UpperDir(i));
    totals.entries_total += count.entries;
    totals.bytes_total += count.bytes;
  }
  return totals;
}

/// A resume's: the archives' sizes (their entries are known only once read).
ArchiveProgress ResumeTotals(const Sandbox& sandbox) {
  ArchiveProgress totals;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    struct stat st;
    if (stat(sandbox.paths().ArchivePath(i).c_str(), &st) == 0) totals.bytes_total += static_cast<uint64_t>(st.st_size);
  }
  return totals;
}

void SyncDirectory(const std::string& path) {
  UniqueFd dir(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir || fsync(dir.get()) != 0) ThrowErrno("cannot sync " + path);
}

}  // namespace

void Suspension::Record(Sandbox& sandbox, SandboxState state) {
  store_.SetState(sandbox.id(), state);
  sandbox.gate().SetState(state);
}

void Suspension::RemoveArchives(const Sandbox& sandbox) {
  for (size_t i = 0; i < sandbox.roots().size(); ++i) RemoveTree(ArchiveDir(sandbox.paths().ArchivePath(i)));
}

uint64_t Suspension::Suspend(Sandbox& sandbox) {
  if (!sandbox.gate().active()) throw Error(Code::kInvalidState, "sandbox " + sandbox.id() + " is already " + std::string(ToString(sandbox.gate().state())));
  sandbox.Unmount();  // Busy (a shell in the merged view): nothing changed yet
  uint64_t bytes = 0;
  try {
    Record(sandbox, SandboxState::kSuspending);
    RemoveArchives(sandbox);  // what a suspend taken back may have left
    PinDecisionsForMove(approvals_, sandbox);
    RootsProgress progress(ProgressPhase::kArchiving, SuspendTotals(sandbox));
    for (size_t i = 0; i < sandbox.roots().size(); ++i) {
      std::string archive = sandbox.paths().ArchivePath(i);
      MakeDirectory(ArchiveDir(archive), 0700);
      ArchiveStats written;
      try {
        // As the owner writes: the archive is charged to the owner, like the layer it keeps.
        written = archiver_.Write(sandbox.paths().UpperDir(i), archive, level_, sandbox.OverlayIdentity(), ProgressOf(sandbox, progress));
      } catch (const Error& e) {
        if (e.code() != Code::kQuotaExceeded) throw;
        throw Error(Code::kQuotaExceeded, "sandbox " + sandbox.id() + " cannot be suspended: uid " + std::to_string(sandbox.owner()) +
                                              " has no room left on the file system of " + archive + " for the archive of root " +
                                              sandbox.roots()[i] + " (" + e.what() + ")");
      }
      progress.NextRoot(written);
      bytes += written.bytes;
    }
    for (size_t i = 0; i < sandbox.roots().size(); ++i) SyncDirectory(ArchiveDir(sandbox.paths().ArchivePath(i)));
    Record(sandbox, SandboxState::kSuspended);
  } catch (...) {
    // The layers are untouched until the archives are complete and recorded.
    RemoveArchives(sandbox);
    try {
      PinDecisionsToLayers(approvals_, sandbox);
    } catch (...) {
      // Left pinned for the archive, they show as pending: never a decision on other content.
    }
    Record(sandbox, SandboxState::kActive);
    sandbox.SetUp();
    throw;
  }
  // From here on the archives are the sandbox's changes; the layers go (to the trash: deleting
  // many files takes long, and the caller need not wait for it), and a hard quota's file
  // system is unmounted, its loop device freed.
  sandbox.TrashLayers();
  sandbox.ReleaseLayers();
  return bytes;
}

void Suspension::RestoreLayers(Sandbox& sandbox) {
  sandbox.MountLayers();
  RootsProgress progress(ProgressPhase::kRestoring, ResumeTotals(sandbox));
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    std::string upper = sandbox.paths().UpperDir(i);
    RemoveTree(upper);  // what a cut-off resume left
    RemoveTree(sandbox.paths().WorkDir(i));
    MakeDirectory(upper, 0700);  // its owner and mode come from the archive's "." entry
    try {
      // As the owner writes: what the layer takes is charged to the owner, within their quota,
      // never in the blocks kept for root.
      progress.NextRoot(archiver_.Extract(sandbox.paths().ArchivePath(i), upper, sandbox.OverlayIdentity(), ProgressOf(sandbox, progress)));
    } catch (const Error& e) {
      if (e.code() != Code::kQuotaExceeded) throw;
      throw Error(Code::kQuotaExceeded, "sandbox " + sandbox.id() + " cannot be resumed: uid " + std::to_string(sandbox.owner()) +
                                            " has no room left on the file system of " + upper + " for the changes to root " +
                                            sandbox.roots()[i] + " (" + e.what() + ")");
    }
  }
}

void Suspension::Resume(Sandbox& sandbox) {
  if (sandbox.gate().state() != SandboxState::kSuspended) throw Error(Code::kInvalidState, "sandbox " + sandbox.id() + " is not suspended");
  Record(sandbox, SandboxState::kResuming);
  try {
    RestoreLayers(sandbox);
    // Mounted before it is called active: a root that cannot be mounted (replaced in the live
    // tree, say) leaves the sandbox suspended, its archives whole, to be resumed once it can.
    sandbox.SetUp();
    PinDecisionsToLayers(approvals_, sandbox);
    Record(sandbox, SandboxState::kActive);
  } catch (...) {
    try {
      sandbox.UnmountForGood();
    } catch (...) {
    }
    sandbox.ClearLayers();
    Record(sandbox, SandboxState::kSuspended);
    throw;
  }
  RemoveArchives(sandbox);
}

std::string Suspension::Recover(Sandbox& sandbox) {
  switch (sandbox.gate().state()) {
    case SandboxState::kSuspending:
      // Cut off before the archives were complete: the layers are whole, the suspend is undone.
      RemoveArchives(sandbox);
      PinDecisionsToLayers(approvals_, sandbox);
      Record(sandbox, SandboxState::kActive);
      return "the suspend of sandbox " + sandbox.id() + " was cut off; took it back";
    case SandboxState::kSuspended:
      // Cut off (perhaps) after the archives were recorded but before the layers were freed.
      sandbox.ClearLayers();
      return "";
    case SandboxState::kResuming:
      RestoreLayers(sandbox);
      PinDecisionsToLayers(approvals_, sandbox);
      Record(sandbox, SandboxState::kActive);
      RemoveArchives(sandbox);
      return "the resume of sandbox " + sandbox.id() + " was cut off; finished it";
    case SandboxState::kActive:
      RemoveArchives(sandbox);  // a resume cut off after "active"
      return "";
  }
  return "";
}

}  // namespace sandboxd
