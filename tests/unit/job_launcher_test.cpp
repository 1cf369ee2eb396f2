// A job is published (its object made) before it starts, so that its object exists before its
// first signal. When the start then fails (here: bwrap cannot be executed), nothing of the job
// may stay behind: not its object (a job listed as finished with exit 0, or waited on for ever,
// that never ran), not its slot of the owner's running jobs, not its count in the sandbox.

#include "jobs/job_launcher.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>

#include "base/errors.h"
#include "runtime/user_slots.h"
#include "jobs/captured_output.h"
#include "sandbox/live_sight.h"
#include "sandbox_world.h"

namespace sandboxd {
namespace {

class JobLauncherTest : public testing::SandboxWorldTest {
 protected:
  JobLauncherTest() { MakeDirectory(temp_ / "output", 0700); }

  JobLauncher Launcher() {
    JobSettings settings;
    settings.bwrap_path = temp_ / "no-such-bwrap";
    settings.helper_path = temp_ / "sandboxd-helper";
    settings.run_dir = temp_ / "run";
    settings.state_dir = temp_ / "state";
    settings.output_dir = temp_ / "output";
    return JobLauncher({settings, slots_, std::make_shared<OutputBudget>(1 << 20), limits_, sights_,
                        [](const Sandbox&) { return int64_t{0}; }});
  }

  static JobRequest Request() {
    JobRequest request;
    request.argv = {"true"};
    request.options.live_feed = false;
    return request;
  }

  UserSlots slots_;
  LimitControllers limits_;  // none: no cgroup work in a unit test
  SightStore sights_{store_};
};

TEST_F(JobLauncherTest, AJobThatCannotStartIsUnpublishedAndGivesEverythingBack) {
  auto sandbox = CreateOver("project");
  JobLauncher launcher = Launcher();
  std::shared_ptr<Job> published, unpublished;
  JobWatchers watchers;
  watchers.publish = [&](const std::shared_ptr<Job>& job) { published = job; };
  watchers.unpublish = [&](const std::shared_ptr<Job>& job) { unpublished = job; };
  EXPECT_THROW(launcher.Launch(sandbox, Request(), watchers), Error);
  ASSERT_NE(published, nullptr) << "the job was published before its start failed";
  EXPECT_EQ(unpublished, published) << "a job that never started keeps its object";
  EXPECT_EQ(slots_.Held(sandbox->owner()), 0u);
  EXPECT_EQ(sandbox->running_jobs(), 0u);
}

TEST_F(JobLauncherTest, AJobWhosePublicationFailsIsNotUnpublished) {
  auto sandbox = CreateOver("project");
  JobLauncher launcher = Launcher();
  bool unpublished = false;
  JobWatchers watchers;
  watchers.publish = [](const std::shared_ptr<Job>&) { throw Error(Code::kFailed, "no object"); };
  watchers.unpublish = [&](const std::shared_ptr<Job>&) { unpublished = true; };
  EXPECT_THROW(launcher.Launch(sandbox, Request(), watchers), Error);
  EXPECT_FALSE(unpublished) << "only what was published is unpublished";
  EXPECT_EQ(slots_.Held(sandbox->owner()), 0u);
  EXPECT_EQ(sandbox->running_jobs(), 0u);
}

}  // namespace
}  // namespace sandboxd
