#include "sandbox_fixture.h"

namespace sandboxd::it {

void AliceSandboxTest::SetUp() {
  SANDBOXD_REQUIRE_WORLD();
  project_ = World().MakeProject(kAlice);
  PrepareProject();
  if (HasFatalFailure()) return;
  Result created = Ctl({"create", project_});
  ASSERT_EQ(created.status, 0) << created.err;
  id_ = Trim(created.out);
}

void AliceSandboxTest::TearDown() {
  if (!id_.empty()) Ctl({"destroy", id_});
}

Result AliceSandboxTest::Ctl(const std::vector<std::string>& args) const { return World().Sandboxctl(kAlice, args); }

void AliceSandboxTest::Job(const std::string& script) const {
  Result run = Ctl({"run", id_, "--", "sh", "-c", script});
  ASSERT_EQ(run.status, 0) << "job `" << script << "` failed: " << run.err;
  // The job's end is taken in (its sights recorded) after `run` returns, by a settling at low
  // priority; `changes` waits for it. A test's live edit "after the job" then comes after that
  // too: one within the settling is unseen, the same conflict worded "after the sandbox read it".
  Result settled = Ctl({"changes", id_});
  ASSERT_EQ(settled.status, 0) << settled.err;
}

std::string AliceSandboxTest::Changes() const {
  Result changes = Ctl({"changes", id_});
  EXPECT_EQ(changes.status, 0) << changes.err;
  return changes.out;
}

}  // namespace sandboxd::it
