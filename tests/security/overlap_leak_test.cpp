// Attack 6, second part, of the security review (issue 16): others' business leaks. A create
// refused because of another user's sandbox used to name that sandbox's id and its root; now
// the refusal says only that the caller's root overlaps a sandbox of another user. The caller's
// own sandboxes are still named (bad_input_test.cpp, shared_test.cpp).

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>

#include "attack_tools.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

constexpr const char* kBobsName = "bobs-private-name";

class OverlapLeakTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    // A directory both can write, on the host (where create looks), as a team's would be.
    static std::mt19937_64 random{std::random_device{}()};
    top_ = "/srv/sbxtest-team-" + std::to_string(random() % 1000000000);
    ASSERT_EQ(mkdir(top_.c_str(), 0755), 0);
    ASSERT_EQ(chmod(top_.c_str(), 0777), 0);
    bobs_root_ = top_ + "/bobs-corner";
    ASSERT_EQ(World().RunAs(kBob, {"sh", "-c", "mkdir '" + bobs_root_ + "' && chmod 0777 '" + bobs_root_ + "'"}).status, 0);
    ASSERT_EQ(World().RunAs(kAlice, {"mkdir", bobs_root_ + "/alices-part"}).status, 0);
  }

  void TearDown() override {
    if (!bobs_id_.empty()) World().Sandboxctl(kBob, {"destroy", bobs_id_});
    if (!top_.empty()) World().RunAs("root", {"rm", "-rf", top_});
  }

  void CreateBobs(bool shared) {
    std::vector<std::string> args = {"create", "--name", kBobsName};
    if (shared) args.push_back("--shared");
    args.push_back(bobs_root_);
    Result made = World().Sandboxctl(kBob, args);
    ASSERT_EQ(made.status, 0) << made.err;
    bobs_id_ = Trim(made.out);
  }

  /// Alice's create over `root` is refused as an overlap, naming nothing of bob's.
  void ExpectRefusedWithoutLeak(const std::vector<std::string>& args, const std::string& root) {
    Result refused = World().Sandboxctl(kAlice, args);
    EXPECT_EQ(refused.status, 1) << refused.out;
    EXPECT_NE(refused.err.find(root), std::string::npos) << "names alice's own root: " << refused.err;
    EXPECT_NE(refused.err.find("another user"), std::string::npos) << refused.err;
    EXPECT_EQ(refused.err.find(bobs_id_), std::string::npos) << "names bob's sandbox: " << refused.err;
    EXPECT_EQ(refused.err.find(kBobsName), std::string::npos) << "names bob's sandbox: " << refused.err;
    EXPECT_EQ(refused.err.find(kBob), std::string::npos) << "names bob: " << refused.err;
    EXPECT_EQ(refused.err.find("uid"), std::string::npos) << "names an owner: " << refused.err;
    EXPECT_EQ(refused.err.find(std::to_string(UidOf(kBob))), std::string::npos) << "names bob's uid: " << refused.err;
    // Bob's root is named only where it is alice's own path (or a part of it).
    if (!(root.rfind(bobs_root_, 0) == 0))
      EXPECT_EQ(refused.err.find("bobs-corner"), std::string::npos) << "names bob's root: " << refused.err;
    Result raw = World().Gdbus(kAlice, "/org/sandboxd/Sandbox1", "org.sandboxd.Sandbox1.Manager.CreateSandbox",
                               {"['" + root + "']", "@a{sv} {}", "uint64 0"});
    EXPECT_NE(raw.err.find("org.sandboxd.Sandbox1.Error.Overlap"), std::string::npos) << raw.err;
    EXPECT_EQ(raw.err.find(bobs_id_), std::string::npos) << raw.err;
  }

  std::string top_;
  std::string bobs_root_;
  std::string bobs_id_;
};

TEST_F(OverlapLeakTest, SameNestedAndHoldingRootsNameNothingOfTheOtherUser) {
  CreateBobs(/*shared=*/false);
  ExpectRefusedWithoutLeak({"create", bobs_root_}, bobs_root_);                      // the same directory
  ExpectRefusedWithoutLeak({"create", bobs_root_ + "/alices-part"}, bobs_root_ + "/alices-part");  // inside his
  ExpectRefusedWithoutLeak({"create", top_}, top_);                                  // around his
  // Asking for a shared sandbox does not help when his is not shared, and is not told more.
  ExpectRefusedWithoutLeak({"create", "--shared", top_}, top_);
}

TEST_F(OverlapLeakTest, ASharedSandboxOfAnotherUserIsNamedNeither) {
  CreateBobs(/*shared=*/true);
  // The hint that helps: a shared sandbox may overlap his, so alice is told to ask for one.
  ExpectRefusedWithoutLeak({"create", top_}, top_);
  Result hinted = World().Sandboxctl(kAlice, {"create", top_});
  EXPECT_NE(hinted.err.find("--shared"), std::string::npos) << hinted.err;
  Result shared = World().Sandboxctl(kAlice, {"create", "--shared", bobs_root_ + "/alices-part"});
  ASSERT_EQ(shared.status, 0) << shared.err;
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", Trim(shared.out)}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
