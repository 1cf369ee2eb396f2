#pragma once
/// The changes a partial commit took, written as it stages them and read back a page at a time
/// to plan its steps, once a landing area (landing_area.h) has given what goes live its inodes:
/// a commit of a million changes never holds them. A file of the commit's own area, which only
/// root can reach, gone with the area; it is needed only until the steps are journaled.

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "model/change.h"
#include "sandbox/root_changes.h"

namespace sandboxd {

class TakenListWriter {
 public:
  /// Creates (or empties) the list at `path`. Throws Error.
  explicit TakenListWriter(std::string path);
  void Append(size_t root, const Change& change);
  /// Writes out what is buffered. Throws Error naming the file.
  void Close();

 private:
  std::string path_;
  std::ofstream out_;
};

/// Reads the list at `path` in pages of up to `page` changes, grouped by root in the order
/// written. Throws Error naming the file when it cannot be read or is cut short.
void ForEachTakenPage(const std::string& path, size_t page, const std::function<void(const std::vector<RootChanges>&)>& visit);

}  // namespace sandboxd
