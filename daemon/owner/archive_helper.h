#pragma once
/// The daemon's side of sandboxd-archive-helper (archive_helper_main.cpp): the calls of
/// upper_archive.h, each run in a helper process that dies with the thread that started it (a
/// daemon killed mid-suspend leaves no archiver behind; recovery settles the suspend): an
/// archive is written as root, a layer restored with its owner's file-system identity.

#include <string>
#include <vector>

#include "base/credentials.h"
#include "helpers/upper_archive.h"

namespace sandboxd {

class ArchiveHelper {
 public:
  explicit ArchiveHelper(std::string program) : program_(std::move(program)) {}

  /// As WriteUpperArchive and ExtractUpperArchive; a failure is an Error carrying the
  /// helper's message, kQuotaExceeded when the restore found no room.
  /// `progress` hears the helper's figures as it works (on a thread of the call's own, which
  /// has ended when the call returns).
  ArchiveStats Write(const std::string& upper, const std::string& archive_path, int level, const ArchiveProgressSink& progress = {}) const;
  /// Restores the layer as `owner` writes (files_as_owner.h): charged to them, within their
  /// disk quota, never in the blocks kept for root.
  ArchiveStats Extract(const std::string& archive_path, const std::string& upper, const UserCredentials& owner,
                       const ArchiveProgressSink& progress = {}) const;

 private:
  ArchiveStats Run(const std::vector<std::string>& args, const std::string& what, const ArchiveProgressSink& progress) const;
  std::string program_;
};

}  // namespace sandboxd
