#pragma once
/// The daemon's side of sandboxd-archive-helper (archive_helper_main.cpp): the calls of
/// upper_archive.h, each run in a helper process that dies with the thread that started it (a
/// daemon killed mid-suspend leaves no archiver behind; recovery settles the suspend), with
/// the sandbox owner's file-system identity: what it writes is charged to the owner, within
/// their disk quota, never in the blocks kept for root.

#include <string>
#include <vector>

#include "base/credentials.h"
#include "model/archive_progress.h"

namespace sandboxd {

class ArchiveHelper {
 public:
  explicit ArchiveHelper(std::string program) : program_(std::move(program)) {}

  /// As WriteUpperArchive and ExtractUpperArchive, writing as `owner` writes
  /// (files_as_owner.h): the archive is the owner's file, the restored layer's entries are
  /// made by the owner. A failure is an Error carrying the helper's message, kQuotaExceeded
  /// when a write found no room. `progress` hears the helper's figures as it works (on a
  /// thread of the call's own, which has ended when the call returns).
  ArchiveStats Write(const std::string& upper, const std::string& archive_path, int level, const UserCredentials& owner,
                     const ArchiveProgressSink& progress = {}) const;
  ArchiveStats Extract(const std::string& archive_path, const std::string& upper, const UserCredentials& owner,
                       const ArchiveProgressSink& progress = {}) const;

 private:
  ArchiveStats Run(const std::vector<std::string>& args, const std::string& what, const ArchiveProgressSink& progress) const;
  std::string program_;
};

}  // namespace sandboxd
