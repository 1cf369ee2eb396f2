#pragma once
/// The random case of the display-equals-commit property (display_commit_test.cpp): a live tree
/// and one job over it, drawn with RapidCheck inside the property (so that a failing case
/// shrinks and replays from its seed). Both are shell scripts over contents staged as files: the
/// scripts stay ASCII (a job's command travels in a D-Bus string, which must be UTF-8) and short
/// whatever bytes the contents and names hold. No fifos, hard links or empty directories: a git
/// patch cannot carry them (the model test covers them). Only draws and writes text: never runs
/// anything.

#include <string>
#include <vector>

namespace sandboxd::display {

struct DrawnCase {
  /// Run as the owner with "$S" the stage directory, in the empty project: makes the live tree.
  std::string setup;
  /// The job, run in the sandbox the same way (sh -c), in the project.
  std::string job;
  /// Contents the scripts copy: staged[i] is the file "$S/i".
  std::vector<std::string> staged;
  /// Whether the live tree is a git work tree with a .gitignore (which the job leaves alone):
  /// `changes` and `diff` fold what git ignores, and git must read every name literally.
  bool git = false;
  /// The job's last act, one case in four (issue 39, defect 1): it writes `mapped_first` over
  /// the start of the file `mapped` through a shared writable mapping and keeps running until a
  /// file "go" appears in the root (the test makes it once the owner has seen the diff and
  /// decided); then, unless `mapped_then` is empty, it writes that into the same dirty page (no
  /// page fault, so no time of the file moves), removes "go" and ends. Empty: no such act.
  std::string mapped, mapped_first, mapped_then;
  /// What the case holds ("setuid", "odd name", "text with a late NUL", ...), for the
  /// distribution RapidCheck prints and for a failure's report.
  std::vector<std::string> tags;
};

/// Draws a case; `size` (RapidCheck's, 0..100) scales how many entries the tree has and how
/// many steps the job takes. Paths are at most 6 components deep.
DrawnCase DrawCase(int size);

}  // namespace sandboxd::display
