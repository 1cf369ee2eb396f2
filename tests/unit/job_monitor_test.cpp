// A job's start and monitoring (Job::Start, Job::Monitor), with a stand-in for bwrap
// (fake_bwrap.cpp) that speaks bwrap's side of the protocol, or breaks it on purpose: the command
// runs only once the job's pid namespace is known and checks out, a forged status line is not
// taken for it, a bwrap that never reports one fails the job without running the command, a
// sandbox that could not be set up ends "failed", and the command's status, output, timeout and
// cancellation come out as they must. The real bwrap is the integration tests' (job_control_test).

#include "jobs/job.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/credentials.h"
#include "jobs/captured_output.h"
#include "jobs/job_senders.h"
#include "temp_dir.h"
#include "unprivileged.h"

namespace sandboxd {
namespace {

using namespace std::chrono_literals;
using testing::Exists;
using testing::ScopedTempDir;

class JobMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    // As the owner would run bwrap: nobody when the test runs as root, else the tester.
    user_ = LookupUser(testing::kStartedAsRoot ? testing::RunAsNobody::kNobody : geteuid());
    // The stand-in's command writes here, as that user.
    ASSERT_EQ(chmod(temp_.path().c_str(), 0777), 0);
  }

  /// Starts a job whose bwrap is the stand-in with `fake_options`, running `command` (sh -c),
  /// its output captured. Its end arrives in `ended`.
  std::unique_ptr<Job> Start(const std::vector<std::string>& fake_options, const std::string& command,
                             std::chrono::seconds timeout = 0s, std::chrono::milliseconds report_timeout = 20s) {
    std::vector<std::string> argv = {FAKE_BWRAP_BIN};
    argv.insert(argv.end(), fake_options.begin(), fake_options.end());
    argv.insert(argv.end(), {"--", "/bin/sh", "-c", command});
    auto job = std::make_unique<Job>("job-" + std::to_string(++started_), "sandbox", argv);
    JobLaunch launch;
    launch.argv = argv;
    launch.args_data = "--unshare-all";  // read and ignored by the stand-in
    launch.user = user_;
    launch.output = std::make_unique<CapturedOutput>(temp_.path(), job->id(), user_.uid, budget_, Job::kOutputCap);
    launch.timeout = timeout;
    launch.namespace_report_timeout = report_timeout;
    job->Start(std::move(launch), [this](const JobEnd& end) { ended_.set_value(end); });
    return job;
  }

  /// The job's end, once it came (a test fails after 30 s without it).
  JobEnd End() {
    auto future = ended_.get_future();
    if (future.wait_for(30s) != std::future_status::ready) {
      ADD_FAILURE() << "the job did not end within 30 s";
      return {-1, JobEndReason::kFailed};
    }
    return future.get();
  }

  std::string Marker() const { return temp_.path() + "/ran"; }

  ScopedTempDir temp_;
  UserCredentials user_;
  std::shared_ptr<OutputBudget> budget_ = std::make_shared<OutputBudget>(64 << 20);
  std::promise<JobEnd> ended_;
  int started_ = 0;
};

TEST_F(JobMonitorTest, TheCommandRunsOnceItsNamespaceChecksOutAndItsStatusAndOutputComeBack) {
  auto job = Start({}, "echo out; echo err >&2; touch " + Marker() + "; exit 3");
  JobEnd end = End();
  EXPECT_EQ(end.reason, JobEndReason::kExited);
  EXPECT_EQ(end.exit_status, 3);
  EXPECT_TRUE(Exists(Marker()));
  EXPECT_EQ(job->ReadOutput(0, 1 << 20), "out\nerr\n");
  EXPECT_EQ(job->captured_streams(), "stdout and stderr");
  // Finished once the first waiter (the launcher's in the daemon; here End's) has returned.
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (job->state() != JobState::kFinished && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(job->state(), JobState::kFinished);
  EXPECT_EQ(job->failure(), "");
}

TEST_F(JobMonitorTest, AForgedStatusLineIsNotTakenForTheJobsNamespace) {
  // The stand-in reports its own pid first: a process in no new pid namespace, no child of
  // itself. Taken, it would make the daemon's own pid namespace a job's, and every caller a
  // job (JobSenders refuses jobs' calls). The line is passed over and the true one used.
  auto job = Start({"--forge-first"}, "touch " + Marker() + "; echo started; sleep 60");
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (job->ReadOutput(0, 64) != "started\n" && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(job->ReadOutput(0, 64), "started\n");
  EXPECT_EQ(JobSenders::Instance().Classify(getpid()), JobSenders::Verdict::kOutside)
      << "the daemon's own processes were taken for a job's";
  job->Cancel(JobEndReason::kCancelled);
  JobEnd end = End();
  EXPECT_EQ(end.reason, JobEndReason::kCancelled);
  EXPECT_TRUE(Exists(Marker()));
}

TEST_F(JobMonitorTest, ABwrapThatNeverReportsANamespaceFailsTheJobAndItsCommandNeverRuns) {
  auto job = Start({"--no-report"}, "touch " + Marker(), 0s, 500ms);
  JobEnd end = End();
  EXPECT_EQ(end.reason, JobEndReason::kFailed);
  EXPECT_NE(end.exit_status, 0);
  EXPECT_FALSE(Exists(Marker())) << "the command ran without the daemon knowing its namespace";
  EXPECT_EQ(job->failure(), "bwrap did not report the job's namespaces in time");
}

TEST_F(JobMonitorTest, ASandboxThatCouldNotBeSetUpEndsFailedNotExited) {
  // No exit code reported: bwrap's set-up failed, whatever its own status says.
  auto job = Start({"--no-exit-code"}, "exit 0");
  JobEnd end = End();
  EXPECT_EQ(end.reason, JobEndReason::kFailed);
  EXPECT_EQ(end.exit_status, 1);
}

TEST_F(JobMonitorTest, ATimeoutEndsTheJobAndEveryProcessInIt) {
  auto started = std::chrono::steady_clock::now();
  auto job = Start({}, "sleep 60 & sleep 60; touch " + Marker(), 1s);
  JobEnd end = End();
  EXPECT_EQ(end.reason, JobEndReason::kTimeout);
  EXPECT_EQ(end.exit_status, 128 + SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);
  EXPECT_FALSE(Exists(Marker()));
}

TEST_F(JobMonitorTest, ACancelledJobEndsCancelledAndTheFirstReasonGivenWins) {
  auto job = Start({}, "echo started; sleep 60");
  // Once its command runs (its output says so), cancel it twice.
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (job->ReadOutput(0, 64) != "started\n" && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(job->ReadOutput(0, 64), "started\n");
  job->Cancel(JobEndReason::kCancelled);
  job->Cancel(JobEndReason::kTimeout);
  JobEnd end = End();
  EXPECT_EQ(end.reason, JobEndReason::kCancelled);
  EXPECT_EQ(end.exit_status, 128 + SIGKILL);
}

TEST_F(JobMonitorTest, AJobsEndIsToldToEveryWaiterAndToALateOne) {
  auto job = Start({}, "exit 5");
  std::promise<int> second;
  job->WhenFinished([&](const JobEnd& end) { second.set_value(end.exit_status); });
  EXPECT_EQ(End().exit_status, 5);
  auto told = second.get_future();
  ASSERT_EQ(told.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(told.get(), 5);
  // A waiter that comes after the end is told too: at once, or by the monitor thread if it is
  // still telling the others.
  std::promise<int> late;
  job->WhenFinished([&](const JobEnd& end) { late.set_value(end.exit_status); });
  auto told_late = late.get_future();
  ASSERT_EQ(told_late.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(told_late.get(), 5);
}

}  // namespace
}  // namespace sandboxd
