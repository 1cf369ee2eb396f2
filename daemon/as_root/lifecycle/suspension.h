#pragma once
/// Suspend and resume (DESIGN: active ⇄ suspended). Suspend archives each root's upper layer
/// (upper_archive.h) beside it in the sandbox's storage directory, then frees the layers; the
/// commit areas (what undo needs) and the decisions in the database stay, pinned to what the
/// archive keeps of each change (decision_pins.h). Resume restores the layers from the
/// archives, pins the decisions to them again, and removes the archives. Each step is recorded in the store before it is
/// taken ("suspending", "suspended", "resuming", "active"), so that a daemon killed at any
/// instant finds at start-up a suspend to take back (its layers are intact until "suspended")
/// or a resume to finish (its archives are intact until "active"). No D-Bus here; the caller
/// holds the sandbox exclusively.

#include <cstdint>
#include <string>
#include <vector>

#include "helper_clients/archive_helper.h"
#include "review/approval_store.h"
#include "sandbox/sandbox.h"
#include "store/store.h"

namespace sandboxd {

class Suspension {
 public:
  /// `level`: zstd compression level of the archives (1..19); `archiver` writes and reads them.
  Suspension(Store& store, ApprovalStore& approvals, int level, ArchiveHelper archiver)
      : store_(store), approvals_(approvals), level_(level), archiver_(std::move(archiver)) {}

  /// Unmounts the sandbox and archives its layers (as the owner writes), which go to the
  /// trash (empty it after); returns the archives' size in bytes.
  /// Error(kInvalidState) when it is not active, kBusy when its merged view is in use,
  /// kQuotaExceeded when the owner has no room left for an archive. On failure the sandbox is
  /// as before, mounted.
  uint64_t Suspend(Sandbox& sandbox);
  /// Restores the layers (as the owner writes) and mounts the sandbox. Error(kInvalidState)
  /// when it is not suspended, kQuotaExceeded when the owner has no room left for a layer. On
  /// failure it stays suspended, its archives untouched.
  void Resume(Sandbox& sandbox);
  /// At start-up, before the sandbox is mounted: settles a suspend or resume that was cut off.
  /// Returns a line for the log, or "".
  std::string Recover(Sandbox& sandbox);

 private:
  void Record(Sandbox& sandbox, SandboxState state);
  void RemoveArchives(const Sandbox& sandbox);
  void RestoreLayers(Sandbox& sandbox);

  Store& store_;
  ApprovalStore& approvals_;
  int level_;
  ArchiveHelper archiver_;
};

}  // namespace sandboxd
