#include "changes/git_units.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "git_fold_line.h"

namespace sandboxd {
namespace {

using sandboxctl::GitFolded;
using sandboxctl::GitFoldLine;
using sandboxctl::GitHistory;

struct Streamed {
  std::string path;
  bool chosen = false;
  bool in_part = false;
};

/// The repositories a choice over `stream` (in path order, root 0) takes a part of.
std::vector<std::string> PartlyTaken(const std::vector<Streamed>& stream) {
  std::vector<std::string> partial;
  GitUnitTally tally([&](const GitUnit& unit) { partial.push_back(unit.git_dir + " " + std::to_string(unit.chosen) + "/" + std::to_string(unit.members)); });
  for (const auto& one : stream) {
    tally.Seen(0, one.path);
    if (one.chosen) tally.Chosen(0, one.path, one.in_part);
  }
  tally.Finish();
  return partial;
}

TEST(GitUnitsTest, ARepositoryTakenWholeOrNotAtAllPasses) {
  EXPECT_TRUE(PartlyTaken({{".git/COMMIT_EDITMSG", true}, {".git/config"}, {".git/index", true}, {".git/refs/heads/main", true}, {"a.txt"}}).empty());
  EXPECT_TRUE(PartlyTaken({{".git/index"}, {".git/refs/heads/main"}, {"a.txt", true}}).empty());
  // What git obeys is decided on its own, and sorts among the data without ending it.
  EXPECT_TRUE(PartlyTaken({{".git/HEAD", true}, {".git/config", false}, {".git/hooks/pre-commit", true}, {".git/index", true}}).empty());
}

TEST(GitUnitsTest, APartIsFoundWhereverTheStreamLeavesTheRepository) {
  EXPECT_EQ(PartlyTaken({{".git/index", true}, {".git/refs/heads/main"}, {"a.txt", true}}), std::vector<std::string>{".git 1/2"});
  EXPECT_EQ(PartlyTaken({{".git/index"}, {".git/refs/heads/main", true}}), std::vector<std::string>{".git 1/2"});  // at the end
  // Hunks of a ref file are a part too.
  EXPECT_EQ(PartlyTaken({{".git/packed-refs", true, true}}), std::vector<std::string>{".git 0/1"});
  // Two repositories, each judged alone; "lib/.git-x" sorts between them and ends the first.
  EXPECT_EQ(PartlyTaken({{"lib/.git/index", true}, {"lib/.git/refs/x"}, {"lib/.git-x", true}, {"m/.git/index", true}}),
            std::vector<std::string>{"lib/.git 1/2"});
}

TEST(GitFoldLineTest, SaysWhatHappenedToTheHistory) {
  GitFolded folded{.git_dir = ".git", .entries = 9, .files = 7};
  GitHistory history{.branch = "main", .was_branch = "main", .from = "1a2b3c4d5e", .to = "5d6e7f8a9b", .index = "changed",
                     .ahead = 2, .behind = 0, .known = true};
  folded.index_changed = true;
  EXPECT_EQ(GitFoldLine(folded, history), "git: 2 commits on main (1a2b3c4..5d6e7f8), index (7 files)");
  history.ahead = 0, history.behind = 1;
  EXPECT_EQ(GitFoldLine(folded, history), "git: main moved back 1 commit (1a2b3c4..5d6e7f8), index (7 files)");
  history.ahead = 3, history.behind = 2, history.index = "same";
  EXPECT_EQ(GitFoldLine(folded, history), "git: main rewritten: 3 commits in place of 2 (1a2b3c4..5d6e7f8), index refreshed (7 files)");
  history = {.branch = "feature", .was_branch = "main", .from = "1a2b3c4d5e", .to = "5d6e7f8a9b", .new_branch = true, .ahead = 1, .behind = 0,
             .known = true};
  folded.index_changed = false;
  folded.other_refs = 1;
  folded.approved = 9;
  EXPECT_EQ(GitFoldLine(folded, history),
            "git: on feature (was main), 1 commit on new branch feature (1a2b3c4..5d6e7f8), 1 other ref (7 files) [approved]");
  history = {.branch = "main", .to = "5d6e7f8a9b", .new_branch = true, .ahead = 1, .behind = 0, .known = true};
  folded = {.git_dir = "lib/.git", .entries = 3, .files = 3};
  EXPECT_EQ(GitFoldLine(folded, history), "git (lib/): new repository, 1 commit on main (5d6e7f8) (3 files)");
  // Unknown history: the files still counted; a part decided says how to decide it.
  folded = {.git_dir = "lib/.git", .entries = 3, .files = 3, .approved = 1};
  folded.conflict = "lib/.git/index: changed in the live tree";
  EXPECT_EQ(GitFoldLine(folded, GitHistory{}),
            "git (lib/): data (3 files) [partly decided: approve or reject lib/.git whole] [conflict: lib/.git/index: changed in the live tree]");
}

}  // namespace
}  // namespace sandboxd
