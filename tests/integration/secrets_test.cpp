// A job cannot read its owner's secrets: the configured hidden paths (the defaults here: no
// sandboxd.conf), the other users' homes and every sandbox's merged view are empty and
// unreadable in it; `run --hide` and `create --hide` add paths, and refuse one that holds a root.

#include <gtest/gtest.h>

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
