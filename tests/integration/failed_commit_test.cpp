// A commit that fails half-way (DESIGN, "Data safety": all or nothing) is taken back whole and
// leaves the sandbox as it was before the commit was tried: its overlay mounts again (a job
// runs), what the job changed is no conflict (the commit's own moves, there and back, are no
// change of the owner's), the owner's decisions hold, and once the cause is gone it commits.
// The cause is a real one: the job wrote into a read-only live directory (made writable for a
// moment, then read-only again), so the commit, which writes as alice, cannot put the new
// file there; a.txt, modified, goes live before it and must come back.

#include <gtest/gtest.h>

#include <string>

#include "harness.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

class FailedCommitTest : public AliceSandboxTest {
 protected:
  void PrepareProject() override {
    Result made = World().RunAs(kAlice, {"sh", "-c", "cd '" + project_ + "' && mkdir ro && chmod 555 ro"});
    ASSERT_EQ(made.status, 0) << made.err;
  }
  void SetUp() override {
    AliceSandboxTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    a_ = ReadWhole(project_ + "/a.txt");
    Job("echo changed >> a.txt && chmod 755 ro && echo new > ro/new.txt && chmod 555 ro && echo other > other.txt");
    ASSERT_EQ(Changes(), "M a.txt\nA other.txt\nA ro/new.txt\n");
  }
  /// The commit failed and nothing of it is live; the sandbox's overlay is mounted again and
  /// shows the job's work.
  void ExpectTakenBack(const Result& failed) const {
    EXPECT_EQ(failed.status, 1) << failed.out;
    EXPECT_NE(failed.err.find("ermission denied"), std::string::npos) << failed.err;
    EXPECT_EQ(ReadWhole(project_ + "/a.txt"), a_) << "the failed commit left a.txt live";
    EXPECT_EQ(ReadWhole(project_ + "/other.txt"), "") << "the failed commit left other.txt live";
    Result seen = Ctl({"run", id_, "--", "cat", "a.txt", "ro/new.txt"});
    EXPECT_EQ(seen.status, 0) << seen.err;
    EXPECT_EQ(seen.out, a_ + "changed\nnew\n");
  }
  std::string a_;
};

TEST_F(FailedCommitTest, AFailedCommitOfTheWholeUpperLeavesTheSandboxAsItWas) {
  ExpectTakenBack(Ctl({"commit", id_, "--all"}));
  EXPECT_EQ(Changes(), "M a.txt\nA other.txt\nA ro/new.txt\n");
  // Once the directory takes it, everything goes.
  ASSERT_EQ(World().RunAs(kAlice, {"chmod", "755", project_ + "/ro"}).status, 0);
  ASSERT_EQ(Ctl({"run", id_, "--", "chmod", "755", "ro"}).status, 0);
  Result committed = Ctl({"commit", id_, "--all"});
  ASSERT_EQ(committed.status, 0) << committed.err;
  EXPECT_EQ(ReadWhole(project_ + "/ro/new.txt"), "new\n");
  EXPECT_EQ(ReadWhole(project_ + "/a.txt"), a_ + "changed\n");
}

TEST_F(FailedCommitTest, AFailedCommitOfSomeChangesLeavesTheSandboxAndItsDecisionsAsTheyWere) {
  ASSERT_EQ(Ctl({"approve", id_, "a.txt", "ro/new.txt"}).status, 0);
  ASSERT_EQ(Ctl({"reject", id_, "other.txt"}).status, 0);
  const std::string decided = "M a.txt [approved]\nA other.txt [rejected]\nA ro/new.txt [approved]\n";
  ASSERT_EQ(Changes(), decided);
  ExpectTakenBack(Ctl({"commit", id_}));
  EXPECT_EQ(Changes(), decided);
  // What can go live does.
  ASSERT_EQ(Ctl({"reject", id_, "ro/new.txt"}).status, 0);
  Result committed = Ctl({"commit", id_});
  ASSERT_EQ(committed.status, 0) << committed.err;
  EXPECT_EQ(ReadWhole(project_ + "/a.txt"), a_ + "changed\n");
  EXPECT_EQ(Changes(), "A other.txt [rejected]\nA ro/new.txt [rejected]\n");
}

}  // namespace
}  // namespace sandboxd::it
