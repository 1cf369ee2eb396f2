// Issue 16, attack 6 (first part): signals about a sandbox reach its owner's connections and no
// one else's. Bob listens on the bus the way any local user can (gdbus monitor, subscribed to
// everything sandboxd sends) while alice works; he must learn nothing of her sandbox, not even
// that it exists: no ids, no job paths, no change counts, no exit statuses.

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "bus_monitor.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

std::string CreateSandbox(const std::string& user) {
  Result r = World().Sandboxctl(user, {"create", World().MakeProject(user)});
  EXPECT_EQ(r.status, 0) << r.err;
  return Trim(r.out);
}

TEST(SignalPrivacyTest, AnotherUserListeningOnTheBusHearsNothingOfASandbox) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  BusMonitor alice(kAlice, "signal-privacy-alice");
  BusMonitor bob(kBob, "signal-privacy-bob");
  ASSERT_TRUE(alice.Ready()) << alice.Text();
  ASSERT_TRUE(bob.Ready()) << bob.Text();

  std::string id = CreateSandbox(kAlice);
  ASSERT_FALSE(id.empty());
  std::string sandbox = "/org/sandboxd/Sandbox1/sandbox/" + id;
  const std::string manager = "/org/sandboxd/Sandbox1: org.sandboxd.Sandbox1.Manager.";
  EXPECT_TRUE(alice.WaitFor(manager + "SandboxAdded (objectpath '" + sandbox + "', '" + id + "', 'proj')")) << alice.Text();
  // No streams passed: the output is captured, so OutputAvailable is sent while the job runs.
  Result run = w.Gdbus(kAlice, sandbox, "org.sandboxd.Sandbox1.Sandbox.Run",
                       {"['sh', '-c', 'echo first; sleep 0.5; echo made > made.txt']", "''", "{}", "{}", "{}", "0"});
  ASSERT_EQ(run.status, 0) << run.err;
  size_t quote = run.out.find('\'');
  ASSERT_NE(quote, std::string::npos) << run.out;
  std::string job = run.out.substr(quote + 1, run.out.find('\'', quote + 1) - quote - 1);
  std::string job_id = job.substr(job.rfind('/') + 1);

  // The owner's own listener hears everything: the job's output and end, then the change set
  // after the job, after the approval, and after the commit.
  EXPECT_TRUE(alice.WaitFor(job + ": org.sandboxd.Sandbox1.Job.OutputAvailable (uint64 6,)")) << alice.Text();
  EXPECT_TRUE(alice.WaitFor(job + ": org.sandboxd.Sandbox1.Job.Finished (0, 'exited')")) << alice.Text();
  // The live feed named the file the job made (its path is alice's business alone).
  EXPECT_TRUE(alice.WaitFor(sandbox + ": org.sandboxd.Sandbox1.Sandbox.ChangesSeen ([(uint32 0, 'made.txt', 'added')], uint32 0, false)"))
      << alice.Text();
  EXPECT_TRUE(alice.WaitFor(sandbox + ": org.sandboxd.Sandbox1.Sandbox.ChangeSetChanged (uint32 1,)")) << alice.Text();
  Result approve = w.Sandboxctl(kAlice, {"approve", id, "--all"});
  ASSERT_EQ(approve.status, 0) << approve.err;
  Result commit = w.Sandboxctl(kAlice, {"commit", id});  // the test rules let alice commit
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_TRUE(alice.WaitFor(sandbox + ": org.sandboxd.Sandbox1.Sandbox.ChangeSetChanged (uint32 0,)")) << alice.Text();
  ASSERT_EQ(w.Sandboxctl(kAlice, {"suspend", id}).status, 0);
  ASSERT_EQ(w.Sandboxctl(kAlice, {"resume", id}).status, 0);
  EXPECT_TRUE(alice.WaitFor(manager + "SandboxStateChanged (objectpath '" + sandbox + "', '" + id + "', 'suspended')")) << alice.Text();
  EXPECT_TRUE(alice.WaitFor(manager + "SandboxStateChanged (objectpath '" + sandbox + "', '" + id + "', 'active')")) << alice.Text();

  // An agent of alice's asks her for a review: her words are hers alone.
  Result asked = w.Gdbus(kAlice, sandbox, "org.sandboxd.Sandbox1.Sandbox.RequestReview", {"'the secret plan'"});
  ASSERT_EQ(asked.status, 0) << asked.err;
  EXPECT_TRUE(alice.WaitFor(sandbox + ": org.sandboxd.Sandbox1.Sandbox.ReviewRequested ('the secret plan', int64 ")) << alice.Text();

  // Bob's own sandbox and job, after all of alice's signals were sent: his listener works and
  // hears his own. The bus delivers one sender's messages in order, so had any of alice's
  // signals been meant for him too, it would be in his log before this one.
  std::string bobs = CreateSandbox(kBob);
  ASSERT_FALSE(bobs.empty());
  ASSERT_EQ(w.Sandboxctl(kBob, {"run", bobs, "--", "sh", "-c", "echo x > bob.txt"}).status, 0);
  std::string bobs_signal = "/org/sandboxd/Sandbox1/sandbox/" + bobs + ": org.sandboxd.Sandbox1.Sandbox.ChangeSetChanged (uint32 1,)";
  EXPECT_TRUE(bob.WaitFor(bobs_signal)) << bob.Text();

  std::string heard = bob.Text();
  EXPECT_FALSE(Contains(heard, id)) << "bob heard of alice's sandbox:\n" << heard;
  EXPECT_FALSE(Contains(heard, job_id)) << "bob heard of alice's job:\n" << heard;
  EXPECT_FALSE(Contains(heard, "made.txt")) << "bob heard what alice's job made:\n" << heard;
  EXPECT_FALSE(Contains(heard, "secret plan")) << "bob heard alice's review request:\n" << heard;
  // Nor alice of bob's (her listener was on the bus the whole time too).
  EXPECT_FALSE(Contains(alice.Text(), bobs)) << "alice heard of bob's sandbox:\n" << alice.Text();

  // The end of each is heard by its owner alone, as its start was.
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
  EXPECT_TRUE(alice.WaitFor(manager + "SandboxRemoved (objectpath '" + sandbox + "', '" + id + "')")) << alice.Text();
  EXPECT_EQ(w.Sandboxctl(kBob, {"destroy", bobs}).status, 0);
  EXPECT_TRUE(bob.WaitFor(manager + "SandboxRemoved (objectpath '/org/sandboxd/Sandbox1/sandbox/" + bobs + "', '" + bobs + "')"))
      << bob.Text();
  EXPECT_FALSE(Contains(bob.Text(), id)) << "bob heard of the end of alice's sandbox:\n" << bob.Text();
}

}  // namespace
}  // namespace sandboxd::it
