#pragma once
/// What `diff --stat` and `diff --name-only` show, read from the unified diff sandboxd writes
/// (Sandbox.Diff): per file its name (a rename as "old => new"), and the lines it adds and
/// removes, or that it is binary. Fed the diff a piece at a time: a diff may be far larger than
/// memory should hold, and only one entry per file is kept.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "text_lines.h"

namespace sandboxctl {

class DiffSummary {
 public:
  struct File {
    std::string name;
    size_t insertions = 0;
    size_t deletions = 0;
    bool binary = false;
  };

  /// The next piece of the diff (any chunking).
  void Add(std::string_view data);
  /// Ends the input (a last line without its newline counts).
  const std::vector<File>& Files();

  /// As git prints them: " NAME | N ++--" per file, the bars scaled to fit `width` columns,
  /// then " F files changed, I insertions(+), D deletions(-)". "" for an empty diff.
  std::string Stat(size_t width = 80);
  /// One name a line (the new name of a rename).
  std::string NameOnly();

 private:
  void Line(std::string_view line);
  std::vector<File> files_;
  std::vector<std::string> new_names_;
  LineAssembler lines_;
  bool in_hunk_ = false;
  std::string rename_from_;
};

}  // namespace sandboxctl
