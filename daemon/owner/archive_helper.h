#pragma once
/// The daemon's side of sandboxd-archive-helper (archive_helper_main.cpp): the calls of
/// upper_archive.h, each run in a helper process as root that dies with the thread that started
/// it (a daemon killed mid-suspend leaves no archiver behind; recovery settles the suspend).

#include <string>
#include <vector>

#include "helpers/upper_archive.h"

namespace sandboxd {

class ArchiveHelper {
 public:
  explicit ArchiveHelper(std::string program) : program_(std::move(program)) {}

  /// As WriteUpperArchive and ExtractUpperArchive; a failure is an Error carrying the
  /// helper's message.
  ArchiveStats Write(const std::string& upper, const std::string& archive_path, int level) const;
  ArchiveStats Extract(const std::string& archive_path, const std::string& upper) const;

 private:
  ArchiveStats Run(const std::vector<std::string>& args, const std::string& what) const;
  std::string program_;
};

}  // namespace sandboxd
