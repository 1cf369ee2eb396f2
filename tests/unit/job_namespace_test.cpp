#include "jobs/job_namespace.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobs/job_senders.h"

namespace sandboxd {
namespace {

TEST(JobNamespaceTest, ReadsOnlyAChildPidClaim) {
  EXPECT_EQ(ReportedChildPid(R"({"child-pid": 1234})"), 1234);
  EXPECT_FALSE(ReportedChildPid(R"({"exit-code": 0})"));
  EXPECT_FALSE(ReportedChildPid(R"({"child-pid": "1234"})"));
  EXPECT_FALSE(ReportedChildPid(R"({"child-pid": 1})"));
  EXPECT_FALSE(ReportedChildPid(R"({"child-pid": -5})"));
  EXPECT_FALSE(ReportedChildPid(R"({"child-pid": 99999999999})"));
  EXPECT_FALSE(ReportedChildPid("garbage"));
}

/// A claim naming a process that is not a namespace init under the given bwrap is refused:
/// here a child of ours in our own pid namespace, claimed once under us and once under init.
TEST(JobNamespaceTest, RefusesAClaimThatIsNoNamespaceInitOfOurBwrap) {
  pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  EXPECT_FALSE(VerifyNamespaceInit(child, getpid())) << "a child in our own pid namespace";
  EXPECT_FALSE(VerifyNamespaceInit(child, 1)) << "not a child of the claimed bwrap";
  EXPECT_FALSE(VerifyNamespaceInit(getpid(), getppid())) << "ourselves";
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(VerifyNamespaceInit(child, getpid())) << "a process that is gone";
}

TEST(JobSendersTest, CgroupBelowTheJobsGroupOnly) {
  EXPECT_TRUE(CgroupTextIsBelow("12:pids:/\n0::/sandboxd-jobs/job-ab\n", "/sandboxd-jobs"));
  EXPECT_TRUE(CgroupTextIsBelow("0::/sandboxd-jobs\n", "/sandboxd-jobs"));
  EXPECT_FALSE(CgroupTextIsBelow("0::/sandboxd-jobs-evil/x\n", "/sandboxd-jobs"));
  EXPECT_FALSE(CgroupTextIsBelow("0::/user.slice\n", "/sandboxd-jobs"));
  EXPECT_FALSE(CgroupTextIsBelow("0::/sandboxd-jobs/job-ab\n", ""));
  EXPECT_EQ(PathFromCgroup2Root("/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified/a/b"), "/a/b");
}

TEST(JobSendersTest, OurOwnProcessIsOutsideEveryJob) {
  EXPECT_EQ(JobSenders::Instance().Classify(getpid()), JobSenders::Verdict::kOutside);
  EXPECT_EQ(JobSenders::Instance().Classify(-1), JobSenders::Verdict::kUnknown);
}

}  // namespace
}  // namespace sandboxd
