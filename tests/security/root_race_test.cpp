// Attack 5 of the security review (issue 16): root validation races. The daemon used to check a
// root as the caller and then resolve its name again as root, so a symlink flipped between the
// caller's own directory and a directory the caller cannot write (/etc, /home) gave a sandbox
// over the latter. A root is now opened once, as the caller, and everything follows that
// descriptor. The same holds for `create --hide`: resolved as the owner, never as root, so a
// refusal cannot tell whether a path the owner cannot reach exists.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "attack_tools.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

/// Exchanges the symlinks `link` and `alt` in the current directory as fast as it can, until
/// the file `stop` appears (checked every 4096 exchanges) or two minutes have passed.
constexpr const char* kFlipper = R"C(
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
int main(void) {
  time_t end = time(NULL) + 120;
  for (unsigned long n = 0;; ++n) {
    if (renameat2(AT_FDCWD, "link", AT_FDCWD, "alt", RENAME_EXCHANGE) != 0) { perror("renameat2"); return 1; }
    if ((n & 4095) == 0 && (access("stop", F_OK) == 0 || time(NULL) > end)) return 0;
  }
}
)C";

std::string HomeOf(const std::string& user) {
  passwd* pw = getpwnam(user.c_str());
  return pw ? pw->pw_dir : "";
}

bool Holds(const std::string& outer, const std::string& inner) {
  return inner == outer || (inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 && inner[outer.size()] == '/');
}

/// While a program of alice's flips `DIR/link` between her project and `target`, alice asks
/// for sandboxes over `DIR/link` `tries` times. Every sandbox she gets must be over her
/// project, never over `target` or anything outside her directory.
void RaceCreate(const std::string& target, int tries) {
  Harness& w = World();
  std::string flipper = CompileC("root-race-flipper", kFlipper);
  ASSERT_FALSE(flipper.empty());
  std::string project = w.MakeProject(kAlice);
  std::string dir = project.substr(0, project.rfind('/'));
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", "cd '" + dir + "' && ln -s '" + project + "' link && ln -s '" + target + "' alt"}).status, 0);

  Result flipped;
  std::thread flipping([&] {
    RunOptions options;
    options.cwd = dir;
    options.timeout = std::chrono::seconds(150);
    flipped = w.RunAs(kAlice, {flipper}, options);
  });
  int made = 0;
  std::vector<std::string> wrong;
  for (int i = 0; i < tries; ++i) {
    Result created = w.Sandboxctl(kAlice, {"create", dir + "/link"});
    if (created.status != 0) continue;
    std::string id = Trim(created.out);
    ++made;
    Result shown = w.Sandboxctl(kAlice, {"--json", "show", id});
    auto info = nlohmann::json::parse(shown.out, nullptr, false);
    if (info.is_discarded() || !info.contains("roots")) {
      wrong.push_back(id + ": cannot read its roots: " + shown.out + shown.err);
    } else {
      for (const auto& root : info["roots"]) {
        std::string path = root.get<std::string>();
        if (path != project || Holds(path, target) || !Holds(HomeOf(kAlice), path))
          wrong.push_back(id + " is over " + path);
      }
    }
    EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0) << id;
  }
  w.RunAs(kAlice, {"touch", dir + "/stop"});
  flipping.join();
  EXPECT_EQ(flipped.status, 0) << "the flipper did not run: " << flipped.err;
  // Half the time the link leads to the project: some creates must succeed, or nothing was tried.
  EXPECT_GT(made, 0) << "no create over " << dir << "/link succeeded";
  EXPECT_TRUE(wrong.empty()) << "after " << tries << " tries (" << made << " sandboxes made), sandboxes not over " << project
                             << ":\n"
                             << ::testing::PrintToString(wrong);
}

TEST(RootRaceTest, AFlippedSymlinkNeverGivesASandboxOverEtc) {
  SANDBOXD_REQUIRE_WORLD();
  RaceCreate("/etc", 80);
}

TEST(RootRaceTest, AFlippedSymlinkNeverGivesASandboxOverHome) {
  SANDBOXD_REQUIRE_WORLD();
  // A sandbox over /home would refuse every user's sandbox in their own home (Overlap).
  RaceCreate("/home", 80);
}

// `create --hide PATH` refuses a path that holds a root. Resolved as root, that refusal told the
// caller where a symlink in a directory only root can read points (and so that it exists);
// resolved as the owner, such a path is nothing to hide, as it is for `run --hide`.
TEST(RootRaceTest, CreateHideIsResolvedAsTheOwner) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  std::string dir = project.substr(0, project.rfind('/'));
  static std::mt19937_64 random{std::random_device{}()};
  std::string secret = "/var/lib/sbxtest-secret-" + std::to_string(random() % 1000000000);
  ASSERT_EQ(mkdir(secret.c_str(), 0700), 0);
  ASSERT_EQ(symlink(dir.c_str(), (secret + "/pointer").c_str()), 0);

  Result probed = w.Sandboxctl(kAlice, {"create", "--hide", secret + "/pointer", project});
  EXPECT_EQ(probed.err.find("holds root"), std::string::npos) << "the refusal tells where a root-only symlink points: " << probed.err;
  EXPECT_EQ(probed.status, 0) << probed.err;
  if (probed.status == 0) {
    std::string id = Trim(probed.out);
    // Nothing the owner can reach is hidden, and the job runs.
    Result ran = w.Sandboxctl(kAlice, {"run", id, "--", "cat", "a.txt"});
    EXPECT_EQ(ran.status, 0) << ran.err;
    EXPECT_EQ(ran.out, "alpha\n");
    EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
  }
  // A path the owner reaches that holds the root is still refused, naming it.
  ASSERT_EQ(w.RunAs(kAlice, {"ln", "-s", dir, dir + "/up"}).status, 0);
  Result holding = w.Sandboxctl(kAlice, {"create", "--hide", dir + "/up", project});
  EXPECT_EQ(holding.status, 1);
  EXPECT_NE(holding.err.find("holds root " + project), std::string::npos) << holding.err;

  unlink((secret + "/pointer").c_str());
  rmdir(secret.c_str());
}

}  // namespace
}  // namespace sandboxd::it
