// A job cannot read its owner's secrets: the configured hidden paths (the defaults here: no
// sandboxd.conf), the other users' homes and every sandbox's merged view are empty and
// unreadable in it; `run --hide` and `create --hide` add paths, and refuse one that holds a root.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "harness.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

class SecretsTest : public AliceSandboxTest {
 protected:
  void SetUp() override {
    AliceSandboxTest::SetUp();
    // A key in alice's ~/.ssh and a file in bob's home that alice could read on the host.
    ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "mkdir -p ~/.ssh && echo private-key > ~/.ssh/id_test && echo mine > ~/notes.txt"}).status, 0);
    ASSERT_EQ(World().RunAs(kBob, {"sh", "-c", "chmod 755 ~ && echo bobs > ~/readable.txt && chmod 644 ~/readable.txt"}).status, 0);
    ASSERT_EQ(World().RunAs(kAlice, {"cat", "/home/" + std::string(kBob) + "/readable.txt"}).out, "bobs\n");
  }
  Result InJob(const std::vector<std::string>& run_options, const std::string& script) const {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), run_options.begin(), run_options.end());
    args.insert(args.end(), {id_, "--", "sh", "-c", script});
    return Ctl(args);
  }
};

TEST_F(SecretsTest, DefaultSecretsAndOtherHomesAreUnreadable) {
  Result key = InJob({}, "cat ~/.ssh/id_test");
  EXPECT_NE(key.status, 0);
  EXPECT_NE(key.err.find("Permission denied"), std::string::npos) << key.err;
  Result listing = InJob({}, "ls ~/.ssh");
  EXPECT_NE(listing.status, 0) << listing.out;
  Result bobs = InJob({}, "cat /home/" + std::string(kBob) + "/readable.txt");
  EXPECT_NE(bobs.status, 0) << bobs.out;
  // What is not a secret stays readable, and the root stays writable.
  Result notes = InJob({}, "cat ~/notes.txt && echo ok > written.txt");
  EXPECT_EQ(notes.status, 0) << notes.err;
  EXPECT_EQ(notes.out, "mine\n");
  EXPECT_EQ(Changes(), "A written.txt\n");
}

TEST_F(SecretsTest, RunHideAddsAPathAndRefusesOneHoldingARoot) {
  Result hidden = InJob({"--hide", "/home/" + std::string(kAlice) + "/notes.txt"}, "cat ~/notes.txt");
  EXPECT_NE(hidden.status, 0);
  EXPECT_NE(hidden.err.find("Permission denied"), std::string::npos) << hidden.err;
  Result home = InJob({"--hide", "/home/" + std::string(kAlice)}, "true");
  EXPECT_EQ(home.status, 1);
  EXPECT_NE(home.err.find("cannot hide /home/" + std::string(kAlice)), std::string::npos) << home.err;
  EXPECT_NE(home.err.find(project_), std::string::npos) << home.err;
  Result relative = InJob({"--hide", "notes.txt"}, "cat " + project_ + "/notes.txt 2>/dev/null; true");
  EXPECT_EQ(relative.status, 0) << relative.err;  // taken from sandboxctl's cwd: hidden, no error
}

// Issue 41: a directory of homes is one mount in a job, however many homes it holds. The job
// finds its owner's home there, and nothing of another user's: no name to list, nothing to
// read; it can plant nothing there; what is hidden in its own home stays hidden.
TEST_F(SecretsTest, UnderHomeAJobSeesItsOwnHomeAloneAndCanWriteNothing) {
  const std::string home = "/home/" + std::string(kAlice);
  Result listing = InJob({}, "ls -a /home");
  ASSERT_EQ(listing.status, 0) << listing.err;
  EXPECT_EQ(listing.out, ".\n..\n" + std::string(kAlice) + "\n");
  Result bobs = InJob({}, "ls /home/" + std::string(kBob));
  EXPECT_NE(bobs.status, 0) << bobs.out;
  Result own = InJob({}, "cat ~/notes.txt && ls ~ && cat ~/.ssh/id_test");
  EXPECT_NE(own.status, 0) << "the key is readable: " << own.out;
  EXPECT_EQ(own.out.rfind("mine\n", 0), 0u) << own.out;
  EXPECT_NE(own.out.find("notes.txt\n"), std::string::npos) << own.out;
  Result plant = InJob({}, "touch /home/planted || touch " + home + "/planted || mkdir /home/" + std::string(kBob));
  EXPECT_NE(plant.status, 0) << "a job wrote beside the homes";
  // One mount for /home, none for another user's home, whatever the host holds there.
  Result mounts = InJob({}, "awk '{print $5}' /proc/self/mountinfo | grep '^/home' | grep -v '^" + home + "' || true");
  ASSERT_EQ(mounts.status, 0) << mounts.err;
  EXPECT_EQ(mounts.out, "/home\n");
}

// Roots under /home that are not in the owner's home: one beside the homes, one in another
// user's shared directory. Each is bound into the cover at its path and written as usual; the
// rest of the other user's home stays out of sight.
TEST_F(SecretsTest, ARootBesideTheHomesOrInAnotherHomeIsSeenUnderHome) {
  passwd* alice = getpwnam(kAlice);
  const std::string tag = std::to_string(getpid());
  const std::string beside = "/home/sbxtest-beside-" + tag;
  const std::string shared = "/home/" + std::string(kBob) + "/shared-" + tag;
  std::vector<std::string> ids;
  struct Cleanup {
    const std::vector<std::string>& ids;
    std::vector<std::string> dirs;
    ~Cleanup() {
      for (const auto& id : ids) World().Sandboxctl(kAlice, {"destroy", id});
      for (const auto& dir : dirs) std::filesystem::remove_all(dir);
    }
  } cleanup{ids, {beside, shared}};
  for (const auto& dir : {beside, shared}) {
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0) << dir;
    ASSERT_EQ(chown(dir.c_str(), alice->pw_uid, alice->pw_gid), 0) << dir;
  }
  for (const auto& root : {beside, shared}) {
    Result created = Ctl({"create", root});
    ASSERT_EQ(created.status, 0) << created.err;
    ids.push_back(Trim(created.out));
    Result job = Ctl({"run", ids.back(), "--", "sh", "-c",
                      "echo made > made.txt && pwd && ls /home && { ls /home/" + std::string(kBob) + " 2>/dev/null; true; }"});
    EXPECT_EQ(job.status, 0) << job.err;
    // Under /home the owner's home and the root's way; of bob's home, the root alone.
    std::string seen = root == shared ? std::string(kAlice) + "\n" + kBob + "\nshared-" + tag + "\n"
                                      : std::string(kAlice) + "\n" + beside.substr(6) + "\n";
    EXPECT_EQ(job.out, root + "\n" + seen) << job.err;
    EXPECT_EQ(Ctl({"changes", ids.back()}).out, "A made.txt\n");
    Result home = Ctl({"run", ids.back(), "--", "sh", "-c", "cat ~/notes.txt; cat /home/" + std::string(kBob) + "/readable.txt"});
    EXPECT_NE(home.status, 0);
    EXPECT_EQ(home.out, "mine\n") << home.err;
  }
  for (const auto& id : ids) EXPECT_EQ(Ctl({"destroy", id}).status, 0);
  ids.clear();
}

// create --hide: every job of the sandbox sees the path empty, show says so, and a path that
// holds a root is refused at creation, not at every run.
TEST_F(SecretsTest, CreateHideHidesAPathFromEveryJob) {
  std::string notes = "/home/" + std::string(kAlice) + "/notes.txt";
  std::string project = World().MakeProject(kAlice);
  Result created = Ctl({"create", "--hide", notes, project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  for (int run = 0; run < 2; ++run) {
    Result hidden = Ctl({"run", id, "--", "cat", notes});
    EXPECT_NE(hidden.status, 0) << hidden.out;
    EXPECT_NE(hidden.err.find("Permission denied"), std::string::npos) << hidden.err;
  }
  EXPECT_NE(Ctl({"show", id}).out.find("Hidden: " + notes), std::string::npos);
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
  Result holds = Ctl({"create", "--hide", "/home/" + std::string(kAlice), World().MakeProject(kAlice)});
  EXPECT_EQ(holds.status, 1);
  EXPECT_NE(holds.err.find("it holds root"), std::string::npos) << holds.err;
}

}  // namespace
}  // namespace sandboxd::it
