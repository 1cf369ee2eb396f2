#pragma once
/// The decisions of a display-equals-commit case (display_commit_test.cpp): random verdicts on
/// what `changes` lists, by file, by hunk and by part, drawn with RapidCheck, some made twice
/// (the other verdict first), issued in a few `approve`/`reject` calls. Every selector is typed
/// in git's quoted form ("NAME", "NAME":N, "NAME":N.M), so that a job's file named "run.sh:1"
/// can never pass for a hunk of run.sh, nor the other way round. Pure: no daemon here.

#include <map>
#include <string>
#include <vector>

namespace sandboxd::display {

/// One entry of `sandboxctl --json changes`, the fields the test reads; names are the raw bytes
/// the wire names stand for.
struct Listed {
  std::string name;
  std::string kind, type, old_type, new_type, review;
  unsigned old_mode = 0, new_mode = 0;
  bool unreadable = false;  ///< the owner cannot read it: its diff shows nothing
  std::string renamed_from, renamed_to;  ///< raw names too
};

/// The entries of `sandboxctl --json changes` output; throws std::runtime_error on what is not.
std::vector<Listed> ParseListed(const std::string& json);

/// What a selector names: a change, a hunk of it (`hunk` > 0) or a part of a hunk (`part` > 0).
struct Selection {
  std::string name;
  int hunk = 0;
  int part = 0;
};

/// The selector as people type it, in git's quoted form always ("NAME", "NAME":N, "NAME":N.M):
/// QuotePath's form, wrapped in quotes where QuotePath did not quote.
std::string Typed(const Selection& selection);

/// How many parts each hunk of a change has, in order (review's `s` split, hunk_split.h).
using HunkShape = std::vector<int>;

enum class Verdict { kPending, kApproved, kRejected };

struct Decisions {
  /// The calls to make, in order: `approve` (kApproved) or `reject` (kRejected) of selectors.
  std::vector<std::pair<Verdict, std::vector<Selection>>> calls;
  /// What holds approved once the calls are made: the selectors `diff` must be asked for.
  std::vector<Selection> approved;
  /// Per change decided whole (a rename by the half named), the verdict that holds at the end.
  std::map<std::string, Verdict> whole;
  /// The changes decided hunk by hunk (or part by part), with something approved in them.
  std::map<std::string, bool> by_hunk;
  /// What the decisions hold ("by hunk", "by part", "decided twice", ...), for the summary.
  std::vector<std::string> tags;
};

/// Draws decisions for `changes` (inside a RapidCheck property). `shapes`: the hunks of the
/// changes that may be decided hunk by hunk (text modifications of regular files).
Decisions DrawDecisions(const std::vector<Listed>& changes, const std::map<std::string, HunkShape>& shapes);

/// A person's account of the calls, a line each: "approve "a" "b":2".
std::string DescribeCalls(const Decisions& decisions);

}  // namespace sandboxd::display
