#pragma once
/// A repository's own data is decided and committed whole (git_data.h): over a change set read in
/// path order, how much of each repository's data a choice (a decision, a commit's selection)
/// takes, and a refusal when it takes a part. The data of one repository comes together in the
/// stream (every path beneath "lib/.git/" sorts together), so this holds one repository at a
/// time, never the change set.

#include <cstddef>
#include <functional>
#include <string>

namespace sandboxd {

/// One repository's data as a choice took it.
struct GitUnit {
  size_t root = 0;
  std::string git_dir;     ///< as the root names it (".git", "lib/.git")
  size_t members = 0;      ///< its changes
  size_t chosen = 0;       ///< of them, chosen whole
  size_t in_part = 0;      ///< of them, chosen by hunks or parts only
  std::string first_chosen;
  /// Whether the choice takes some of it but not all of it, whole.
  bool Partial() const { return in_part > 0 || (chosen > 0 && chosen < members); }
};

class GitUnitTally {
 public:
  /// `partial` is called (and may throw) for each repository a choice takes a part of, once the
  /// stream is past its data (or at Finish).
  explicit GitUnitTally(std::function<void(const GitUnit&)> partial) : partial_(std::move(partial)) {}
  /// Every change of the stream, in order.
  void Seen(size_t root, const std::string& path);
  /// A change seen (its own Seen, or a directory's before it) that the choice takes.
  void Chosen(size_t root, const std::string& path, bool in_part = false);
  void Finish();

 private:
  void Close();

  std::function<void(const GitUnit&)> partial_;
  bool open_ = false;
  GitUnit unit_;
};

}  // namespace sandboxd
