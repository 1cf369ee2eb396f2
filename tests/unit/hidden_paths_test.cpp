#include "jobs/hidden_paths.h"

#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fcntl.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/errors.h"
#include "unique_fd.h"
#include "helper_clients/fs_identity.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;
using testing::WriteFile;

/// A small host: TOP/home/{alice,bob,carol}, TOP/root, alice's secrets and her project, the
/// sandbox's only root. Alice is the owner.
class HiddenPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char canonical[PATH_MAX];
    ASSERT_NE(realpath(dir_.path().c_str(), canonical), nullptr);
    top_ = canonical;
    alice_ = top_ + "/home/alice";
    proj_ = alice_ + "/proj";
    for (const auto& d : {"/home", "/home/alice", "/home/bob", "/home/carol", "/root", "/data", "/data/gnupg",
                          "/home/alice/.ssh", "/home/alice/proj", "/home/alice/proj/.secrets"})
      MakeDir(top_ + d);
    WriteFile(alice_ + "/.netrc", "machine x password p\n", 0600);
    WriteFile(alice_ + "/.ssh/id_ed25519", "key\n", 0600);
    WriteFile(proj_ + "/.env", "TOKEN=t\n");
    request_.sandbox_id = "sbx1";
    request_.owner_uid = 1000;
    request_.owner_home = alice_;
    request_.roots = {{"", proj_}};
    request_.hide_other_homes = false;
    request_.home_parents = {top_ + "/home"};
    request_.root_home = top_ + "/root";
    request_.private_dirs = {};  // the test tree lives under /tmp
  }
  static void MakeDir(const std::string& path) { ASSERT_EQ(mkdir(path.c_str(), 0755), 0) << path; }
  static void Symlink(const std::string& target, const std::string& path) {
    ASSERT_EQ(symlink(target.c_str(), path.c_str()), 0) << path;
  }
  /// The paths hidden one by one.
  std::vector<HiddenEntry> Resolve() { return ResolveHiddenPaths(request_).entries; }
  std::vector<BwrapCover> Covers() { return ResolveHiddenPaths(request_).covers; }
  /// The message of the Error(kInvalidPath) that resolving throws, or "" if none.
  std::string ResolveError() {
    try {
      Resolve();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInvalidPath) << e.what();
      return e.what();
    }
    return "";
  }

  ScopedTempDir dir_;
  std::string top_, alice_, proj_;
  HiddenPathsRequest request_;
};

TEST_F(HiddenPathsTest, TildeExpandsToTheOwnersHomeAndMissingPathsAreSkipped) {
  request_.configured = {"~/.ssh", "~/.aws", "~/.netrc", "~/.config/gcloud"};
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{alice_ + "/.netrc", false}, {alice_ + "/.ssh", true}}));
}

TEST_F(HiddenPathsTest, NothingBeneathTheJobsOwnTmpNeedsHidingOutsideARoot) {
  // As if the test tree's /home were the job's private /tmp: the host's entries there are out
  // of the job's sight already, but a root inside it shows the host's files again.
  request_.private_dirs = {top_ + "/home"};
  request_.configured = {"~/.ssh", "~/proj/.env"};
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{proj_ + "/.env", false}}));
}

TEST_F(HiddenPathsTest, ASymlinkedSecretDirectoryHidesItsTarget) {
  Symlink("../../data/gnupg", alice_ + "/.gnupg");
  Symlink(top_ + "/data/nowhere", alice_ + "/.aws");  // dangling: nothing to read
  request_.configured = {"~/.gnupg", "~/.aws"};
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/data/gnupg", true}}));
}

// Issue 41: the home parent is one cover, whatever it holds; the owner's home is bound back
// and a link to it made again; root's home is hidden as a path.
TEST_F(HiddenPathsTest, OtherHomesAndRootsHomeAreHiddenButNotTheOwnersOwn) {
  Symlink("alice", top_ + "/home/alice-link");  // the owner's home by another name
  Symlink("bob", top_ + "/home/bob-link");      // into the cover: nothing more to hide
  WriteFile(top_ + "/home/notes.txt", "x");
  request_.hide_other_homes = true;
  const std::vector<BwrapCover> home = {{top_ + "/home", {{top_ + "/home/alice-link", "alice"}}, {alice_}}};
  EXPECT_EQ(Covers(), home);
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/root", true}}));
  request_.owner_uid = 0;  // root's own home stays visible to root's jobs
  EXPECT_EQ(Covers(), home);
  EXPECT_EQ(Resolve(), std::vector<HiddenEntry>{});
  for (int i = 0; i < 300; ++i) MakeDir(top_ + "/home/user" + std::to_string(i));
  EXPECT_EQ(Covers(), home) << "a cover does not grow with the homes";
  EXPECT_EQ(Resolve(), std::vector<HiddenEntry>{});
  request_.hide_other_homes = false;
  EXPECT_EQ(Covers(), std::vector<BwrapCover>{});
}

// A symlink in a directory of homes that leads out of it shows its target elsewhere on the
// host: that target is hidden, as every other home was before covers. One that leads to the
// owner's home is made again: a passwd home may be such a link.
TEST_F(HiddenPathsTest, ASymlinkOutOfACoverIsHiddenWhereItLeadsUnlessItIsTheOwners) {
  MakeDir(top_ + "/data/dave");
  MakeDir(top_ + "/data/alice");
  Symlink(top_ + "/data/dave", top_ + "/home/dave");
  Symlink(top_ + "/data/nowhere", top_ + "/home/gone");  // dangling: nothing to read
  Symlink(top_ + "/data/alice", top_ + "/home/al");
  request_.owner_home = top_ + "/home/al";
  request_.hide_other_homes = true;
  EXPECT_EQ(Covers(), (std::vector<BwrapCover>{{top_ + "/home", {{top_ + "/home/al", top_ + "/data/alice"}}, {}}}));
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/data/dave", true}, {top_ + "/root", true}}));
}

// A cover is made for a directory of homes that the job would otherwise see: not for one in
// another (/home holds /home/staff's homes), nor the owner's home itself, nor one in the job's
// own private directories, nor a missing one.
TEST_F(HiddenPathsTest, OneCoverPerDirectoryOfHomesTheJobWouldSee) {
  MakeDir(top_ + "/home/staff");
  MakeDir(top_ + "/data/homes");
  MakeDir(top_ + "/private");
  MakeDir(top_ + "/private/homes");
  Symlink("data/homes", top_ + "/homes-link");
  request_.private_dirs = {top_ + "/private"};
  request_.home_parents = {top_ + "/home/staff", top_ + "/home", alice_, top_ + "/private/homes", top_ + "/homes-link",
                           top_ + "/missing"};
  request_.hide_other_homes = true;
  EXPECT_EQ(Covers(), (std::vector<BwrapCover>{{top_ + "/data/homes", {}, {}}, {top_ + "/home", {}, {alice_}}}));
  // Never one over a tree that holds the job's own directories (DefaultHomeParents gives none).
  request_.home_parents = {top_};
  EXPECT_EQ(Covers(), std::vector<BwrapCover>{});
}

// A directory of homes inside a root would be covered again by the root's bind: its homes are
// hidden one by one there, in the root's view, as before covers.
TEST_F(HiddenPathsTest, ADirectoryOfHomesInARootIsHiddenEntryByEntry) {
  MakeDir(top_ + "/data/homes");
  MakeDir(top_ + "/data/homes/frank");
  request_.roots = {{"", top_ + "/data"}};
  request_.home_parents = {top_ + "/home", top_ + "/data/homes"};
  request_.hide_other_homes = true;
  EXPECT_EQ(Covers(), (std::vector<BwrapCover>{{top_ + "/home", {}, {alice_}}}));
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/data/homes/frank", true}, {top_ + "/root", true}}));
}

// What a cover has out of sight needs no mount of its own (nor could bwrap make its mount
// point in the read-only cover); what lies in the owner's home or a root still does.
TEST_F(HiddenPathsTest, PathsUnderACoverCostNoMountButInTheOwnersHomeOrARoot) {
  MakeDir(top_ + "/home/bob/.ssh");
  MakeDir(top_ + "/home/bob/shared");
  WriteFile(top_ + "/home/bob/shared/.env", "TOKEN=t\n");
  request_.roots = {{"", proj_}, {"", top_ + "/home/bob/shared"}};
  request_.configured = {"~/.ssh", "~/proj/.env"};
  request_.explicit_paths = {top_ + "/home/bob/.ssh", top_ + "/home/bob/shared/.env"};
  request_.hide_other_homes = true;
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{
                           {top_ + "/home/alice/.ssh", true}, {proj_ + "/.env", false}, {top_ + "/home/bob/shared/.env", false},
                           {top_ + "/root", true}}));
  // A path on the way to the owner's home is hidden on top of the cover, home and all.
  MakeDir(top_ + "/home/staff");
  MakeDir(top_ + "/home/staff/erin");
  request_.owner_home = top_ + "/home/staff/erin";
  request_.roots = {{"", top_ + "/data"}};
  request_.configured = {};
  request_.explicit_paths = {top_ + "/home/staff"};
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/home/staff", true}, {top_ + "/root", true}}));
}

TEST_F(HiddenPathsTest, TheAncestorsOfTheOwnersHomeAreNotOtherHomes) {
  MakeDir(top_ + "/home/staff");
  MakeDir(top_ + "/home/staff/dave");
  MakeDir(top_ + "/home/staff/erin");
  MakeDir(top_ + "/home/staff/erin/proj");
  request_.owner_home = top_ + "/home/staff/erin";
  request_.roots = {{"", top_ + "/home/staff/erin/proj"}};
  request_.home_parents = {top_ + "/home", top_ + "/home/staff"};
  request_.hide_other_homes = true;
  // Only the home is bound back, not /home/staff: dave stays out of sight.
  EXPECT_EQ(Covers(), (std::vector<BwrapCover>{{top_ + "/home", {}, {top_ + "/home/staff/erin"}}}));
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/root", true}}));
}

TEST_F(HiddenPathsTest, AnExplicitHideThatHoldsARootIsRefusedNamingBoth) {
  request_.explicit_paths = {alice_};
  EXPECT_EQ(ResolveError(), "cannot hide " + alice_ + " in sandbox sbx1: it holds root " + proj_);
  request_.explicit_paths = {proj_};
  EXPECT_EQ(ResolveError(), "cannot hide " + proj_ + " in sandbox sbx1: it holds root " + proj_);
  Symlink(proj_, top_ + "/data/proj-link");
  request_.explicit_paths = {top_ + "/data/proj-link"};
  EXPECT_EQ(ResolveError(), "cannot hide " + top_ + "/data/proj-link in sandbox sbx1: it resolves to " + proj_ +
                                ", which holds root " + proj_);
}

TEST_F(HiddenPathsTest, ExplicitPathsMustBeAbsoluteWithoutDotDot) {
  request_.explicit_paths = {".ssh"};
  EXPECT_EQ(ResolveError(), "cannot hide .ssh in sandbox sbx1: it is not an absolute path");
  request_.explicit_paths = {"~/.ssh"};
  EXPECT_EQ(ResolveError(), "cannot hide ~/.ssh in sandbox sbx1: it is not an absolute path");
  request_.explicit_paths = {alice_ + "/proj/../.ssh"};
  EXPECT_EQ(ResolveError(), "cannot hide " + alice_ + "/proj/../.ssh in sandbox sbx1: it has a \"..\" component");
}

TEST_F(HiddenPathsTest, ExplicitPathsAreHiddenAndMissingOnesSkipped) {
  request_.explicit_paths = {alice_ + "/.ssh/", top_ + "//data", top_ + "/missing"};
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/data", true}, {alice_ + "/.ssh", true}}));
}

TEST_F(HiddenPathsTest, AConfiguredOrOtherHomePathHoldingARootIsSkippedSilently) {
  request_.configured = {"~/", "~/.ssh"};
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{alice_ + "/.ssh", true}}));
  // Alice sandboxes a directory in Bob's home: the cover hides the rest of /home, and bwrap
  // binds the root inside it at its path, as it does every root.
  MakeDir(top_ + "/home/bob/shared");
  request_.configured = {};
  request_.roots = {{"", top_ + "/home/bob/shared"}};
  request_.hide_other_homes = true;
  EXPECT_EQ(Covers(), (std::vector<BwrapCover>{{top_ + "/home", {}, {alice_}}}));
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/root", true}}));
}

TEST_F(HiddenPathsTest, PathsInsideARootAreHidden) {
  request_.configured = {"~/proj/.env", "~/proj/.secrets"};
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{proj_ + "/.env", false}, {proj_ + "/.secrets", true}}));
}

TEST_F(HiddenPathsTest, PathsInsideARootAreLookedUpInTheMergedView) {
  // The job sees the merged view there: a secret the sandbox deleted or replaced by a symlink
  // is not visible and needs no mount; one whose type changed gets a mount of the new type.
  std::string merged = top_ + "/merged";
  MakeDir(merged);
  MakeDir(merged + "/.env");  // a file live, a directory in the sandbox
  Symlink("/etc", merged + "/.secrets");
  WriteFile(proj_ + "/gone.key", "k");  // live only: the sandbox deleted it
  WriteFile(proj_ + "/kept.key", "k");
  WriteFile(merged + "/kept.key", "k");
  request_.roots = {{merged, proj_}};
  request_.configured = {"~/proj/.env", "~/proj/.secrets", "~/proj/gone.key", "~/proj/kept.key"};
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{proj_ + "/.env", true}, {proj_ + "/kept.key", false}}));
}

TEST_F(HiddenPathsTest, DuplicatesAndNestedPathsAreDropped) {
  MakeDir(top_ + "/data/x");
  MakeDir(top_ + "/data/x/inner");
  MakeDir(top_ + "/data/x-y");  // "x-y" sorts between "x" and "x/inner"
  request_.configured = {"~/.ssh/id_ed25519", "~/.ssh", "~/.ssh", top_ + "/data/x/inner", top_ + "/data/x-y"};
  request_.explicit_paths = {alice_ + "/.ssh", top_ + "/data/x"};
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{
                           {top_ + "/data/x", true}, {top_ + "/data/x-y", true}, {alice_ + "/.ssh", true}}));
}

TEST_F(HiddenPathsTest, AlwaysHiddenPathsNeedNoConfiguration) {
  MakeDir(top_ + "/run-sandboxd");
  request_.always = {top_ + "/run-sandboxd"};
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/run-sandboxd", true}}));
}

TEST(HiddenPathSyntaxTest, AbsoluteOrTildeWithoutDotDot) {
  EXPECT_FALSE(HiddenPathSyntaxError("/home/u/.ssh", false));
  EXPECT_FALSE(HiddenPathSyntaxError("/a/./b//", false));
  EXPECT_FALSE(HiddenPathSyntaxError("~/.ssh", true));
  EXPECT_FALSE(HiddenPathSyntaxError("/a/..b/c..", false));
  EXPECT_EQ(HiddenPathSyntaxError("~/.ssh", false), "it is not an absolute path");
  EXPECT_EQ(HiddenPathSyntaxError("~", true), "it is neither absolute nor under ~/");
  EXPECT_EQ(HiddenPathSyntaxError("~bob/.ssh", true), "it is neither absolute nor under ~/");
  EXPECT_EQ(HiddenPathSyntaxError("", true), "it is empty");
  EXPECT_EQ(HiddenPathSyntaxError("/a/../b", false), "it has a \"..\" component");
  EXPECT_EQ(HiddenPathSyntaxError("/a/..", false), "it has a \"..\" component");
  EXPECT_EQ(HiddenPathSyntaxError("~/..", true), "it has a \"..\" component");
  EXPECT_EQ(HiddenPathSyntaxError(std::string("/a\0b", 4), false), "it contains a NUL byte");
}

TEST(HiddenPathsDefaultHomeParentsTest, ServiceAccountsAndMissingHomesAddNoParent) {
  const std::vector<std::string> kHomeOnly = {"/home"};
  EXPECT_EQ(DefaultHomeParents("/nonexistent-sandboxd-test"), kHomeOnly);
  EXPECT_EQ(DefaultHomeParents("/var/lib"), kHomeOnly);  // parent /var: a system tree
  EXPECT_EQ(DefaultHomeParents("/usr/lib"), kHomeOnly);
  EXPECT_EQ(DefaultHomeParents("/tmp"), kHomeOnly);  // parent "/"
  ScopedTempDir dir;  // under /tmp, a system tree
  EXPECT_EQ(DefaultHomeParents(dir.path()), kHomeOnly);
}

TEST(HiddenPathsBwrapArgsTest, DirectoriesGetAnEmptyLockedTmpfsAndFilesTheEmptyFile) {
  std::vector<HiddenEntry> entries = {{"/data/ssh", true}, {"/home/u/.netrc", false}, {"/run/user", true}};
  std::vector<std::string> expected = {
      "--perms", "0000", "--tmpfs", "/data/ssh", "--remount-ro", "/data/ssh",
      "--ro-bind", "/run/sandboxd/empty", "/home/u/.netrc",
      "--perms", "0000", "--tmpfs", "/run/user", "--remount-ro", "/run/user"};
  EXPECT_EQ(HiddenPathsBwrapArgs(entries, "/run/sandboxd/empty"), expected);
  EXPECT_TRUE(HiddenPathsBwrapArgs({}, "/run/sandboxd/empty").empty());
}


/// nobody: a user who may reach nothing of the test tree's private parts.
UserCredentials Nobody() {
  UserCredentials nobody;
  nobody.uid = 65534;
  nobody.gid = 65534;
  nobody.groups = {65534};
  return nobody;
}

// Only the thread holding the identity sees as the user sees; another thread stays root, and
// the holder is root again once the identity goes. (A thread started while it is held would
// inherit it, as threads inherit credentials: the holder starts none.)
TEST(ScopedFileSystemIdentityTest, OnlyTheHoldingThreadSeesAsTheUserAndOnlyWhileItHoldsIt) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  ScopedTempDir dir;
  std::string locked = dir / "locked";
  ASSERT_EQ(mkdir(locked.c_str(), 0700), 0);
  WriteFile(locked + "/secret", "s\n", 0600);
  auto can_open = [&] { return UniqueFd(open((locked + "/secret").c_str(), O_RDONLY | O_CLOEXEC)).valid(); };
  std::mutex mutex;
  std::condition_variable changed;
  int phase = 0;  // 1: the identity is held; 2: the other thread has tried
  bool other_thread_can = false;
  std::thread other([&] {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return phase == 1; });
    other_thread_can = can_open();
    phase = 2;
    changed.notify_all();
  });
  {
    ScopedFileSystemIdentity nobody(Nobody());
    EXPECT_FALSE(can_open());
    EXPECT_EQ(errno, EACCES);
    std::unique_lock lock(mutex);
    phase = 1;
    changed.notify_all();
    changed.wait(lock, [&] { return phase == 2; });
  }
  other.join();
  EXPECT_TRUE(other_thread_can) << "another thread lost root's rights";
  EXPECT_TRUE(can_open()) << "the thread did not get root's rights back";
}

// With the owner's identity, a --hide path the owner cannot reach is nothing to hide (the job
// cannot reach it either, and its mount table must not tell that it exists); with root's it
// would be hidden, telling just that.
TEST_F(HiddenPathsTest, AnExplicitPathTheOwnerCannotReachIsNotHiddenNorRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);  // nobody may come this far, not into locked/
  std::string locked = top_ + "/data/locked";
  ASSERT_EQ(mkdir(locked.c_str(), 0700), 0);
  WriteFile(locked + "/key", "k\n", 0600);
  request_.explicit_paths = {locked + "/key", top_ + "/data/gnupg"};
  request_.owner_identity = Nobody();
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/data/gnupg", true}}));
  request_.owner_identity.reset();
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/data/gnupg", true}, {locked + "/key", false}}));
}

// create --hide: a path that holds a root is refused, but only as the owner finds it. A symlink
// in a directory only root may read that points above the root is nothing the owner can reach,
// so the refusal (which would tell where it points) does not happen.
TEST_F(HiddenPathsTest, CreateHideHoldingARootIsJudgedAsTheOwnerResolvesIt) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  std::string locked = top_ + "/data/locked";
  ASSERT_EQ(mkdir(locked.c_str(), 0700), 0);
  Symlink(alice_, locked + "/pointer");
  Symlink(alice_, top_ + "/data/open-pointer");
  EXPECT_NO_THROW(CheckHiddenPathsHoldNoRoot({locked + "/pointer", top_ + "/data/gnupg", top_ + "/missing"}, {proj_}, Nobody()));
  try {
    CheckHiddenPathsHoldNoRoot({top_ + "/data/open-pointer"}, {proj_}, Nobody());
    FAIL() << "a path the owner reaches that holds the root was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidPath);
    EXPECT_NE(std::string(e.what()).find("cannot hide " + top_ + "/data/open-pointer in a new sandbox: it holds root " + proj_),
              std::string::npos)
        << e.what();
  }
}

/// A unix socket bound at `path` (listening), closed with the returned fd.
UniqueFd BoundSocket(const std::string& path) {
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  EXPECT_LT(path.size(), sizeof address.sun_path) << path;
  path.copy(address.sun_path, sizeof address.sun_path - 1);
  EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0) << path;
  EXPECT_EQ(listen(fd.get(), 1), 0);
  return fd;
}

// Issue 40, item 2: the host's sockets a job could see are hidden, as files (a stand-in bound
// over each), unless they lie in a root (a connect through the overlay is refused anyway), in
// a private directory, or the owner allowed them; a listed path that is not a socket, or that
// the owner cannot reach, is nothing to hide (any process may bind a socket with a name that
// lists other paths, and nothing of that must reach another user's job).
TEST_F(HiddenPathsTest, TheHostsSocketsAreHiddenButThoseInARootOrAllowed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (sockets looked up with an owner's identity)";
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  ASSERT_EQ(chmod(top_.c_str(), 0755), 0);
  std::string locked = top_ + "/data/locked";
  ASSERT_EQ(mkdir(locked.c_str(), 0700), 0);
  std::vector<UniqueFd> sockets;
  for (const auto& path : {top_ + "/data/agent.sock", top_ + "/data/allowed.sock", proj_ + "/in-root.sock", locked + "/private.sock"})
    sockets.push_back(BoundSocket(path));
  Symlink(top_ + "/data", top_ + "/link");
  request_.sockets = {top_ + "/link/agent.sock", top_ + "/data/allowed.sock", proj_ + "/in-root.sock", locked + "/private.sock",
                      alice_ + "/.netrc", top_ + "/missing.sock", "/proc/self/../../etc/passwd"};
  request_.allowed_sockets = {top_ + "/data/allowed.sock"};
  request_.owner_identity = Nobody();
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/data/agent.sock", false}}));
  // Under a cover of homes: another user's socket costs no mount; the owner's own is hidden.
  ASSERT_EQ(chmod((top_ + "/home").c_str(), 0755), 0);
  ASSERT_EQ(chmod((top_ + "/home/bob").c_str(), 0755), 0);
  ASSERT_EQ(chmod(alice_.c_str(), 0755), 0);
  sockets.push_back(BoundSocket(top_ + "/home/bob/bob.sock"));
  sockets.push_back(BoundSocket(alice_ + "/alice.sock"));
  request_.sockets = {top_ + "/data/agent.sock", top_ + "/home/bob/bob.sock", alice_ + "/alice.sock"};
  request_.hide_other_homes = true;
  EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/data/agent.sock", false}, {alice_ + "/alice.sock", false}, {top_ + "/root", true}}));
  request_.hide_other_homes = false;
  // Without an identity to look them up with, none is looked at (the daemon always gives one).
  request_.owner_identity.reset();
  EXPECT_EQ(Resolve(), std::vector<HiddenEntry>{});
}

// Issue 41: the host's sockets are looked at a directory at a time where the directory is out
// of a job's sight (its own /run), so that hundreds of them cost a job's start nothing each.
// What must not slip through that: a name there that is a symlink now (the socket replaced by
// a link to one elsewhere), and a directory whose path runs through a link out of sight.
TEST_F(HiddenPathsTest, SocketsInADirectoryOutOfSightAreLookedThroughWhereTheyLeadOut) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (sockets looked up with an owner's identity)";
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  ASSERT_EQ(chmod(top_.c_str(), 0755), 0);
  const std::string run = top_ + "/run";
  ASSERT_EQ(mkdir(run.c_str(), 0755), 0);
  request_.private_dirs = {run};
  std::vector<UniqueFd> sockets;
  sockets.push_back(BoundSocket(top_ + "/data/agent.sock"));
  for (int i = 0; i < 50; ++i) sockets.push_back(BoundSocket(run + "/service-" + std::to_string(i) + ".sock"));
  // Listed in /run, a link now: the socket it leads to is the job's to reach.
  sockets.push_back(BoundSocket(run + "/replaced.sock"));
  ASSERT_EQ(unlink((run + "/replaced.sock").c_str()), 0);
  Symlink(top_ + "/data/agent.sock", run + "/replaced.sock");
  // A directory in /run that is a link out of it.
  Symlink(top_ + "/data", run + "/out");
  std::vector<std::string> services;
  for (int i = 0; i < 50; ++i) services.push_back(run + "/service-" + std::to_string(i) + ".sock");
  request_.owner_identity = Nobody();
  request_.sockets = services;
  EXPECT_EQ(Resolve(), std::vector<HiddenEntry>{}) << "sockets in the job's own /run are out of its sight";
  for (const auto& listed : {run + "/replaced.sock", run + "/out/agent.sock"}) {
    request_.sockets = services;
    request_.sockets.push_back(listed);
    EXPECT_EQ(Resolve(), (std::vector<HiddenEntry>{{top_ + "/data/agent.sock", false}})) << listed;
  }
}

}  // namespace
}  // namespace sandboxd
