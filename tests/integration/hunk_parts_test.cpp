// Parts of a hunk (PATH:N.M, git add -p's split) as an unprivileged user, with real parts:
// one part of a hunk goes live and its neighbours do not; what a commit leaves of a split hunk
// keeps its decisions however the diff left cuts it, rejected never turning pending; split
// decisions survive a restart; parts that do not exist are refused by name.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "numbered_lines.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {


class HunkPartsTest : public AliceSandboxTest {
 protected:
  void PrepareProject() override {
    ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "cat > three.txt"}, {.input = Lines(), .cwd = project_}).status, 0);
  }
  /// Edits at lines 2, 6 and 10: three lines apart, so one hunk of three parts; without the
  /// middle one, lines 2 and 10 are seven lines apart: two hunks.
  void EditThreeParts() { Job("sed -i -e 's/^line 2$/two/' -e 's/^line 6$/six/' -e 's/^line 10$/ten/' three.txt"); }
  /// `--json changes`' entry of three.txt.
  nlohmann::json Three() {
    Result listed = Ctl({"--json", "changes", id_});
    EXPECT_EQ(listed.status, 0) << listed.err;
    for (const auto& entry : nlohmann::json::parse(listed.out))
      if (entry["path"] == "three.txt") return entry;
    return nullptr;
  }
};

TEST_F(HunkPartsTest, OnePartGoesLiveAndWhatIsLeftKeepsItsDecisions) {
  EditThreeParts();
  Result diff = Ctl({"diff", id_, "three.txt"});
  ASSERT_EQ(diff.status, 0) << diff.err;
  ASSERT_TRUE(Contains(diff.out, "@@ -1,13 +1,13 @@")) << "not one hunk:\n" << diff.out;
  // Part 2 alone, as review's s shows it: line 6 with the unchanged lines around it.
  Result part = Ctl({"diff", id_, "three.txt:1.2"});
  ASSERT_EQ(part.status, 0) << part.err;
  EXPECT_TRUE(Contains(part.out, "@@ -3,7 +3,7 @@\n line 3\n line 4\n line 5\n-line 6\n+six\n line 7\n line 8\n line 9\n"))
      << part.out;
  EXPECT_FALSE(Contains(part.out, "two") || Contains(part.out, "ten")) << part.out;

  ASSERT_EQ(Ctl({"approve", id_, "three.txt:1.2"}).status, 0);
  Result reject = Ctl({"reject", id_, "three.txt:1.1"});
  ASSERT_EQ(reject.status, 0) << reject.err;
  EXPECT_EQ(Changes(), "M three.txt [partial: hunks 1 decided in parts, of 1]\n");
  nlohmann::json three = Three();
  EXPECT_EQ(three["review"], "partial") << three.dump();
  EXPECT_EQ(three["split_hunks"], nlohmann::json::array({1})) << three.dump();
  EXPECT_EQ(three["approved_hunks"], nlohmann::json::array()) << three.dump();

  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{6, "six"}})) << "only part 1.2 goes live";

  // Left: the rejected edit at line 2 and the pending one at line 10, now two hunks apart.
  Result left = Ctl({"diff", id_, "three.txt"});
  EXPECT_EQ(CountOf(left.out, "\n@@ "), 2u) << left.out;
  three = Three();
  EXPECT_EQ(three["hunks"], 2) << three.dump();
  EXPECT_EQ(three["rejected_hunks"], nlohmann::json::array({1})) << three.dump();
  EXPECT_EQ(three["approved_hunks"], nlohmann::json::array()) << three.dump();
  EXPECT_FALSE(three.contains("split_hunks")) << three.dump();

  // commit --all takes what is pending, never what was rejected.
  ASSERT_EQ(Ctl({"commit", "--all", id_}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{6, "six"}, {10, "ten"}}));
  EXPECT_EQ(Changes(), "M three.txt [rejected]\n");
}

TEST_F(HunkPartsTest, PartsThatAgreeAreTheHunkAndSplitDecisionsSurviveARestart) {
  EditThreeParts();
  ASSERT_EQ(Ctl({"approve", id_, "three.txt:1.1", "three.txt:1.3"}).status, 0);
  ASSERT_EQ(Ctl({"reject", id_, "three.txt:1.2"}).status, 0);
  World().KillDaemon();
  ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();
  nlohmann::json three = Three();
  EXPECT_EQ(three["split_hunks"], nlohmann::json::array({1})) << three.dump();
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{2, "two"}, {10, "ten"}}));
  EXPECT_EQ(Changes(), "M three.txt [rejected]\n") << "what is left of the hunk is its rejected part";

  // A part decided like its neighbours makes the hunk (here the change) decided whole.
  ASSERT_EQ(Ctl({"approve", id_, "three.txt:1.1"}).status, 0);
  EXPECT_EQ(Changes(), "M three.txt [approved]\n");
}

TEST_F(HunkPartsTest, PartsThatDoNotExistAreRefusedByName) {
  EditThreeParts();
  Job("echo new > n.txt");
  struct Refusal {
    std::vector<std::string> selectors;
    std::string says;
  };
  for (const auto& [selectors, says] : std::vector<Refusal>{
           {{"three.txt:1.4"}, "hunk 1 of three.txt has 3 parts; there is no part 4 in sandbox " + id_},
           {{"three.txt:2.1"}, "three.txt has 1 hunk; there is no hunk 2 in sandbox " + id_},
           {{"n.txt:1.1"}, "n.txt is not a text modification and is approved or rejected whole; name it without ':1.1'"},
           {{"three.txt:1.0"}, "no change at 'three.txt:1.0' in sandbox " + id_},
           {{"three.txt:1.1", "three.txt:1.9"}, "there is no part 9"},
       }) {
    if (selectors.size() == 1 && selectors[0].starts_with("three.txt:") && selectors[0] != "three.txt:1.0") {
      // diff refuses a hunk or part that does not exist (a new file's one hunk it shows).
      Result diff = Ctl({"diff", id_, selectors[0]});
      EXPECT_EQ(diff.status, 1) << selectors[0] << ": " << diff.out;
      EXPECT_TRUE(Contains(diff.err, selectors[0])) << diff.err;
      EXPECT_TRUE(Contains(diff.err, " in sandbox " + id_)) << diff.err;
    }
    std::vector<std::string> args{"approve", id_};
    args.insert(args.end(), selectors.begin(), selectors.end());
    Result refused = Ctl(args);
    EXPECT_EQ(refused.status, 1) << selectors.back();
    EXPECT_TRUE(Contains(refused.err, says)) << refused.err;
  }
  EXPECT_EQ(Changes(), "A n.txt\nM three.txt\n") << "a refused call decided something";
}

}  // namespace
}  // namespace sandboxd::it
