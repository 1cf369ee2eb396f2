// "Escape safety": a commit never writes through a symlink out of its root. A job that swaps a
// directory of the root for a symlink to somewhere else (/etc, the other test user's home, a
// directory of the owner's own that lies outside the root, the host's /tmp) and writes "through"
// it, after an earlier job changed files under that directory, gets the symlink itself
// committed as an entry, and nothing outside the root is created or changed. A live directory
// (or the root itself) that the owner turns into such a symlink after the job, or while the
// commit is under way, either makes the commit refuse with a named error or has the sandbox's
// entries put in its place, never written through it; on the same file system as the upper
// layer (entries renamed in) and on another one (entries copied in).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "harness.h"

namespace sandboxd::it {
namespace {

/// Files a write through a symlink would hit, made in the root's `dir` and in every outside
/// directory alike (so "the same name" exists on both sides).
constexpr const char* kDirContent =
    "mkdir -p sub && printf 'a\\n' > a.txt && printf 'b\\n' > b.txt && printf 'c\\n' > c.txt && printf 'keep\\n' > keep.txt"
    " && printf 's\\n' > sub/s.txt";

/// Changes under dir/ made by a first job, before the swap.
constexpr const char* kChangesUnderDir =
    "echo changed > dir/a.txt && echo new > dir/new.txt && mkdir dir/nd && echo n > dir/nd/n && rm dir/b.txt"
    " && chmod 600 dir/c.txt && echo s2 >> dir/sub/s.txt";

std::mt19937_64& Random() {
  static std::mt19937_64 random{std::random_device{}()};
  return random;
}

std::string Home(const std::string& user) { return getpwnam(user.c_str())->pw_dir; }

/// `mkdir -p DIR` as `user`, then `kDirContent` in it.
void MakeDir(const std::string& user, const std::string& dir) {
  Result r = World().RunAs(
      user, {"sh", "-c", "mkdir -p '" + dir + "' && chmod 755 '" + dir + "' && cd '" + dir + "' && " + kDirContent});
  ASSERT_EQ(r.status, 0) << r.err;
}

void RemoveAsRoot(const std::string& path) {
  Result r = World().RunAs("root", {"rm", "-rf", "--one-file-system", path});
  EXPECT_EQ(r.status, 0) << r.err;
}

std::string Merged(const std::string& id) { return World().MergedView(id); }

bool IsSymlink(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

/// Commit over raw D-Bus as alice, for the error name that sandboxctl does not print. Tries
/// Commit(as selectors, t flags) and then Commit(t flags): whichever this build's interface has.
Result RawCommit(const std::string& id, uint64_t flags) {
  std::string path = "/org/sandboxd/Sandbox1/sandbox/" + id, method = "org.sandboxd.Sandbox1.Sandbox.Commit";
  std::string flag = "uint64 " + std::to_string(flags);
  Result r = World().Gdbus(kAlice, path, method, {"@as []", flag});
  // gdbus refused the arguments itself (no reply from the daemon): the other signature.
  if (r.status != 0 && r.err.find("GDBus.Error:") == std::string::npos) r = World().Gdbus(kAlice, path, method, {flag});
  return r;
}

/// The directories outside the root that a commit must leave alone, all made fresh per test:
/// one of the owner's own beside the root (writable by the owner), one in the other user's
/// home, one in the host's /tmp (the owner's, writable by the owner), and marker names in /etc
/// (watched by name: /etc itself may change under other work on this machine).
struct OutsideWorld {
  std::string base;     ///< the owner's HOME/it-escape-N, holding proj/ (the root) and outside/
  std::string project;  ///< the root
  std::string own;      ///< base/outside
  std::string bob;      ///< the other user's HOME/it-escape-N
  std::string tmp;      ///< /tmp/sandboxd-it-outside-N
  std::string marker;   ///< a name that must not appear in any of them nor in /etc
  std::map<std::string, std::map<std::string, std::string>> before;
  std::map<std::string, std::string> etc_before;
  std::string mounted;  ///< the root, when it is a tmpfs of its own

  /// With `tmpfs_root` the root is a tmpfs, another file system than the sandbox's upper layer.
  void Make(bool tmpfs_root = false) {
    std::string n = std::to_string(Random()() % 1000000000);
    base = Home(kAlice) + "/it-escape-" + n;
    project = base + "/proj";
    own = base + "/outside";
    bob = Home(kBob) + "/it-escape-" + n;
    tmp = "/tmp/sandboxd-it-outside-" + n;
    marker = "sandboxd-it-escaped-" + n;
    if (tmpfs_root) {
      Result made = World().RunAs(kAlice, {"mkdir", "-p", project});
      ASSERT_EQ(made.status, 0) << made.err;
      passwd* pw = getpwnam(kAlice);
      std::string options = "mode=0755,size=16m,uid=" + std::to_string(pw->pw_uid) + ",gid=" + std::to_string(pw->pw_gid);
      ASSERT_EQ(mount("tmpfs", project.c_str(), "tmpfs", 0, options.c_str()), 0) << strerror(errno);
      mounted = project;
      World().LetDaemonSeeNewMounts();
    }
    MakeDir(kAlice, project + "/dir");
    Result top = World().RunAs(kAlice, {"sh", "-c", "printf 'top\\n' > top.txt"}, {.cwd = project});
    ASSERT_EQ(top.status, 0) << top.err;
    MakeDir(kAlice, own);
    MakeDir(kBob, bob);
    MakeDir(kAlice, tmp);
    for (const auto& dir : {own, bob, tmp}) before[dir] = Snapshot(dir);
    etc_before = EtcState();
  }

  void ExpectUntouched() const {
    for (const auto& [dir, snapshot] : before) {
      auto now = Snapshot(dir);
      EXPECT_EQ(now, snapshot) << dir << " outside the root changed:\n" << Describe(now) << "before:\n" << Describe(snapshot);
    }
    EXPECT_EQ(EtcState(), etc_before) << "the commit wrote into /etc";
  }

  /// The entries of /etc that a write through a symlink to /etc could make, change or delete.
  std::map<std::string, std::string> EtcState() const {
    std::map<std::string, std::string> state;
    const std::vector<std::string> names = {"a.txt", "b.txt", "c.txt", "keep.txt", "new.txt", "nd", "sub", marker, marker + "-dir"};
    for (const auto& name : names) {
      struct stat st;
      state[name] = lstat(("/etc/" + name).c_str(), &st) != 0
                        ? "missing"
                        : std::to_string(st.st_ino) + " " + std::to_string(st.st_mode) + " " + std::to_string(st.st_size) + " " +
                              std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
    }
    return state;
  }

  /// Everything made for the test goes when it ends, however it ends.
  ~OutsideWorld() {
    if (!mounted.empty()) umount2(mounted.c_str(), MNT_DETACH);
    for (const auto& dir : {base, bob, tmp})
      if (!dir.empty()) RemoveAsRoot(dir);
  }
};

enum class Target { kEtc, kOtherUsersHome, kOwnDirectoryOutsideTheRoot, kOwnDirectoryByRelativePath, kHostTmp };

const char* TargetName(Target target) {
  switch (target) {
    case Target::kEtc: return "Etc";
    case Target::kOtherUsersHome: return "OtherUsersHome";
    case Target::kOwnDirectoryOutsideTheRoot: return "OwnDirectoryOutsideTheRoot";
    case Target::kOwnDirectoryByRelativePath: return "OwnDirectoryByRelativePath";
    case Target::kHostTmp: return "HostTmp";
  }
  return "?";
}

std::string SymlinkText(Target target, const OutsideWorld& world) {
  switch (target) {
    case Target::kEtc: return "/etc";
    case Target::kOtherUsersHome: return world.bob;
    case Target::kOwnDirectoryOutsideTheRoot: return world.own;
    case Target::kOwnDirectoryByRelativePath: return "../outside";  // proj/dir -> proj/../outside
    case Target::kHostTmp: return world.tmp;
  }
  return "";
}

class CommitEscapeTest : public ::testing::TestWithParam<Target> {};

TEST_P(CommitEscapeTest, JobsSymlinkIsCommittedAsASymlinkNeverWrittenThrough) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  OutsideWorld outside;
  ASSERT_NO_FATAL_FAILURE(outside.Make());
  const std::string link = SymlinkText(GetParam(), outside);
  const auto live_before = Snapshot(outside.project);

  Result created = w.Sandboxctl(kAlice, {"create", outside.project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  Result first = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", kChangesUnderDir}, {.cwd = outside.project});
  ASSERT_EQ(first.status, 0) << first.err;
  ASSERT_NE(w.Sandboxctl(kAlice, {"changes", id}).out, "");
  // The swap, and writes "through" the new symlink. Inside the job they fail (the host is
  // read-only) or land in the job's private /tmp; what matters is what the commit does.
  std::string swap = "rm -rf dir && ln -s '" + link + "' dir && { mkdir -p \"$(readlink dir)\"; for f in a.txt " +
                     outside.marker + " new.txt nd/n; do echo pwned > dir/$f; done; mkdir dir/" + outside.marker +
                     "-dir; chmod 777 dir/keep.txt; rm -f dir/b.txt; } 2>/dev/null; exit 0";
  Result second = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", swap}, {.cwd = outside.project});
  ASSERT_EQ(second.status, 0) << second.err;
  const auto seen = Snapshot(Merged(id));
  ASSERT_TRUE(IsSymlink(Merged(id) + "/dir"));
  EXPECT_EQ(Snapshot(outside.project), live_before);
  // The changes made under dir/ before the swap went with the directory: an upper entry is
  // the symlink or a directory, never both, so the one change left is the symlink.
  EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", id}).out, "T dir\n");

  Result commit = w.Sandboxctl(kAlice, {"commit", id, "--all"});
  outside.ExpectUntouched();
  const auto after = Snapshot(outside.project);
  if (commit.status == 0) {
    // Committed: the symlink itself is the entry, exactly as the job left it.
    ASSERT_TRUE(IsSymlink(outside.project + "/dir")) << "live dir is not the job's symlink:\n" << Describe(after);
    EXPECT_EQ(std::filesystem::read_symlink(outside.project + "/dir").string(), link);
    EXPECT_EQ(after, seen) << "live:\n" << Describe(after) << "the job saw:\n" << Describe(seen);
    EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", id}).out, "");
  } else {
    // Refused: with a named error and a message that names the path; nothing moved, and the
    // sandbox keeps its change.
    std::printf("the commit refused: %s", commit.err.c_str());
    EXPECT_EQ(commit.status, 1);
    EXPECT_NE(commit.err.find("dir"), std::string::npos) << commit.err;
    EXPECT_EQ(after, live_before);
    Result raw = RawCommit(id, 2);
    EXPECT_NE(raw.err.find("org.sandboxd.Sandbox1.Error."), std::string::npos) << raw.err;
    EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", id}).out, "T dir\n");
  }
  outside.ExpectUntouched();
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

INSTANTIATE_TEST_SUITE_P(CommitEscape, CommitEscapeTest,
                         ::testing::Values(Target::kEtc, Target::kOtherUsersHome, Target::kOwnDirectoryOutsideTheRoot,
                                           Target::kOwnDirectoryByRelativePath, Target::kHostTmp),
                         [](const ::testing::TestParamInfo<Target>& info) { return std::string("To") + TargetName(info.param); });

// The owner turns live directories into symlinks to directories outside the root (that the
// owner may write) after the job changed, added, deleted and re-moded files under them, and
// after the job deleted one of them whole. Whatever the commit decides (refuse, as a conflict or
// as a symlinked parent; or put the sandbox's own entries in place of the symlinks), it must
// never add, change or delete anything through them.
TEST(CommitEscapeTest, LiveDirectoriesTurnedIntoSymlinksAfterTheJob) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  OutsideWorld outside;
  ASSERT_NO_FATAL_FAILURE(outside.Make());
  MakeDir(kAlice, outside.project + "/gone");
  MakeDir(kAlice, outside.base + "/outside2");
  outside.before[outside.base + "/outside2"] = Snapshot(outside.base + "/outside2");

  std::string id = Trim(w.Sandboxctl(kAlice, {"create", outside.project}).out);
  ASSERT_FALSE(id.empty());
  Result job = w.Sandboxctl(kAlice,
                            {"run", id, "--", "sh", "-c", std::string(kChangesUnderDir) + " && rm -rf gone && echo t2 > top2.txt"},
                            {.cwd = outside.project});
  ASSERT_EQ(job.status, 0) << job.err;
  // In the live tree, behind the sandbox's back: one absolute and one relative symlink.
  Result swap = w.RunAs(kAlice,
                        {"sh", "-c",
                         "mv dir dir.moved && ln -s '" + outside.own + "' dir && mv gone gone.moved && ln -s ../outside2 gone"},
                        {.cwd = outside.project});
  ASSERT_EQ(swap.status, 0) << swap.err;
  const auto live_before = Snapshot(outside.project);

  // What a commit may do here: put the sandbox's own entries in place of the owner's symlinks
  // (the symlinks are live entries like any other: they move aside, never get followed).
  auto expect_placed = [&](const std::map<std::string, std::string>& after) {
    struct stat st;
    ASSERT_EQ(lstat((outside.project + "/dir").c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode)) << "live dir is not a directory after the commit:\n" << Describe(after);
    EXPECT_EQ(after.count("/dir/new.txt"), 1u) << Describe(after);
    EXPECT_FALSE(Exists(outside.project + "/gone")) << "the job deleted gone";
    EXPECT_TRUE(Exists(outside.project + "/top2.txt"));
  };
  auto expect_moved_aside_kept = [&](const std::map<std::string, std::string>& after) {
    for (const auto& [path, value] : live_before) {
      if (path.rfind("/dir.moved", 0) != 0 && path.rfind("/gone.moved", 0) != 0) continue;
      EXPECT_EQ(after.count(path) ? after.at(path) : "(gone)", value) << path << ", moved aside by the owner, changed";
    }
  };

  Result commit = w.Sandboxctl(kAlice, {"commit", id, "--all"});
  outside.ExpectUntouched();
  auto after = Snapshot(outside.project);
  expect_moved_aside_kept(after);
  if (commit.status == 0) {
    std::printf("the commit put the sandbox's entries in place of the owner's symlinks\n");
    expect_placed(after);
  } else {
    // Refused (the live tree changed where the sandbox changed it: a conflict), with a
    // message naming the paths and an error name of the API; nothing moved.
    std::printf("the commit refused: %s", commit.err.c_str());
    EXPECT_EQ(commit.status, 1);
    EXPECT_TRUE(commit.err.find("dir") != std::string::npos || commit.err.find("gone") != std::string::npos) << commit.err;
    EXPECT_EQ(after, live_before) << "a refused commit changed the live tree";
    Result raw = RawCommit(id, 2);
    EXPECT_NE(raw.err.find("org.sandboxd.Sandbox1.Error."), std::string::npos) << raw.err;
    EXPECT_EQ(Snapshot(outside.project), live_before);
    EXPECT_NE(w.Sandboxctl(kAlice, {"changes", id}).out, "") << "a refused commit lost the sandbox's changes";
    // Forced over the conflict, the steps meet the symlinks themselves.
    Result forced = w.Sandboxctl(kAlice, {"commit", id, "--all", "--force"});
    outside.ExpectUntouched();
    after = Snapshot(outside.project);
    expect_moved_aside_kept(after);
    if (forced.status == 0) {
      std::printf("forced, it put the sandbox's entries in place of the owner's symlinks\n");
      expect_placed(after);
      EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", id}).out, "");
    } else {
      std::printf("forced, it refused: %s", forced.err.c_str());
      EXPECT_EQ(after, live_before) << "a refused commit changed the live tree";
      Result raw_forced = RawCommit(id, 6);
      EXPECT_NE(raw_forced.err.find("org.sandboxd.Sandbox1.Error."), std::string::npos) << raw_forced.err;
    }
  }
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// Where the root is on another file system than the upper layer, the commit copies entries
// instead of renaming them: the job's symlink (made after changes under the directory it
// replaces) is still committed as a symlink, and a live directory the owner turned into a
// symlink is still never followed, even by a commit forced over the conflict.
TEST(CommitEscapeTest, AcrossFileSystemsNeitherTheJobsNorTheOwnersSymlinkIsFollowed) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  OutsideWorld outside;
  ASSERT_NO_FATAL_FAILURE(outside.Make(/*tmpfs_root=*/true));
  MakeDir(kAlice, outside.project + "/gone");
  MakeDir(kAlice, outside.base + "/outside2");
  outside.before[outside.base + "/outside2"] = Snapshot(outside.base + "/outside2");

  std::string id = Trim(w.Sandboxctl(kAlice, {"create", outside.project}).out);
  ASSERT_FALSE(id.empty());
  Result first = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", std::string(kChangesUnderDir) + " && echo g > gone/a.txt"},
                              {.cwd = outside.project});
  ASSERT_EQ(first.status, 0) << first.err;
  Result second = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "rm -rf dir && ln -s '" + outside.own + "' dir"},
                               {.cwd = outside.project});
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", id}).out, "T dir\nM gone/a.txt\n");
  Result swap = w.RunAs(kAlice, {"sh", "-c", "mv gone gone.moved && ln -s ../outside2 gone"}, {.cwd = outside.project});
  ASSERT_EQ(swap.status, 0) << swap.err;
  const auto live_before = Snapshot(outside.project);

  Result commit = w.Sandboxctl(kAlice, {"commit", id, "--all"});
  outside.ExpectUntouched();
  if (commit.status != 0) {
    std::printf("the commit refused: %s", commit.err.c_str());
    Result raw = RawCommit(id, 2);
    EXPECT_NE(raw.err.find("org.sandboxd.Sandbox1.Error."), std::string::npos) << raw.err;
    EXPECT_EQ(Snapshot(outside.project), live_before);
    commit = w.Sandboxctl(kAlice, {"commit", id, "--all", "--force"});
    outside.ExpectUntouched();
  }
  auto after = Snapshot(outside.project);
  for (const auto& [entry, value] : live_before) {
    if (entry.rfind("/gone.moved", 0) != 0) continue;
    EXPECT_EQ(after.count(entry) ? after.at(entry) : "(gone)", value) << entry << ", moved aside by the owner, changed";
  }
  if (commit.status == 0) {
    ASSERT_TRUE(IsSymlink(outside.project + "/dir")) << Describe(after);
    EXPECT_EQ(std::filesystem::read_symlink(outside.project + "/dir").string(), outside.own);
    // The owner's symlink gone gave way to the sandbox's directory gone, holding the job's
    // gone/a.txt: put in place beneath the root, not written through the symlink.
    struct stat st;
    ASSERT_EQ(lstat((outside.project + "/gone").c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode)) << Describe(after);
    EXPECT_NE(after["/gone/a.txt"].find(" g\n"), std::string::npos) << Describe(after);
  } else {
    std::printf("forced, it refused: %s", commit.err.c_str());
    Result raw = RawCommit(id, 6);
    EXPECT_NE(raw.err.find("org.sandboxd.Sandbox1.Error."), std::string::npos) << raw.err;
  }
  outside.ExpectUntouched();
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// The root itself turned into a symlink to a directory of the owner's outside it: the commit
// must refuse (InvalidPath), touch neither side, and work once the root is back.
TEST(CommitEscapeTest, LiveRootTurnedIntoASymlinkIsRefused) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  OutsideWorld outside;
  ASSERT_NO_FATAL_FAILURE(outside.Make());
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", outside.project}).out);
  ASSERT_FALSE(id.empty());
  Result job = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "echo changed > dir/a.txt && echo new > new.txt && rm top.txt"},
                            {.cwd = outside.project});
  ASSERT_EQ(job.status, 0) << job.err;
  std::string moved = outside.base + "/proj.moved";
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", "mv proj proj.moved && ln -s outside proj"}, {.cwd = outside.base}).status, 0);
  const auto moved_before = Snapshot(moved);

  Result commit = w.Sandboxctl(kAlice, {"commit", id, "--all"});
  EXPECT_EQ(commit.status, 1) << commit.out << commit.err;
  EXPECT_NE(commit.err.find(outside.project), std::string::npos) << commit.err;
  Result raw = RawCommit(id, 2);
  EXPECT_NE(raw.err.find("org.sandboxd.Sandbox1.Error.InvalidPath"), std::string::npos) << raw.err;
  outside.ExpectUntouched();
  EXPECT_EQ(Snapshot(moved), moved_before);
  EXPECT_FALSE(Exists(outside.own + "/new.txt"));

  // Back in place, the same commit goes through.
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", "rm proj && mv proj.moved proj"}, {.cwd = outside.base}).status, 0);
  Result again = w.Sandboxctl(kAlice, {"commit", id, "--all"});
  EXPECT_EQ(again.status, 0) << again.err;
  auto after = Snapshot(outside.project);
  EXPECT_EQ(after.count("/new.txt"), 1u) << Describe(after);
  EXPECT_EQ(after.count("/top.txt"), 0u) << Describe(after);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", id}).out, "");
  outside.ExpectUntouched();
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// The owner turns a live directory into a symlink to a directory of the owner's outside the
// root while the commit is under way: after the commit's checks and plan, once its first
// entries are live, before it reaches the changes under that directory. The commit must not
// write through the symlink: it refuses (and takes back what it did) or it was already past
// that directory. Either way nothing outside the root changes, and the sandbox stays usable.
TEST(CommitEscapeTest, LiveDirectoryTurnedIntoASymlinkDuringTheCommit) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  OutsideWorld outside;
  ASSERT_NO_FATAL_FAILURE(outside.Make());
  passwd* alice = getpwnam(kAlice);
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", outside.project}).out);
  ASSERT_FALSE(id.empty());
  // "aa/..." sorts before "dir/...": 2,000 entries go live before the commit reaches dir/.
  Result job = w.Sandboxctl(kAlice,
                            {"run", id, "--", "sh", "-c",
                             "mkdir aa && (cd aa && seq 1 2000 | xargs touch)"
                             " && echo changed > dir/a.txt && echo new > dir/new.txt"},
                            {.cwd = outside.project});
  ASSERT_EQ(job.status, 0) << job.err;
  const auto live_before = Snapshot(outside.project);
  const auto seen = Snapshot(Merged(id));

  std::string err_path = w.dir() + "/escape-commit-" + id + ".err";
  pid_t client = StartSandboxctl(kAlice, {"commit", id, "--all"}, err_path);
  std::string aa = outside.project + "/aa", dir = outside.project + "/dir", moved = outside.project + "/dir.moved";
  bool started = WaitUntil([&] { return Exists(aa); }, std::chrono::seconds(30));
  // The swap as the owner would make it (two renames' worth of time, no process start-up).
  bool swapped = started && rename(dir.c_str(), moved.c_str()) == 0 && symlink(outside.own.c_str(), dir.c_str()) == 0 &&
                 lchown(dir.c_str(), alice->pw_uid, alice->pw_gid) == 0;
  int status = 0;
  waitpid(client, &status, 0);
  std::string err = ReadWhole(err_path);
  ASSERT_TRUE(started) << "the commit never started: " << err;
  ASSERT_TRUE(swapped) << strerror(errno);
  outside.ExpectUntouched();

  bool committed = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::printf("the swap landed %s: %s", committed ? "after the commit was past dir/" : "inside the commit, which said",
              committed ? "committed\n" : err.c_str());
  // Undo the owner's swap, so that the live tree compares with the snapshots.
  ASSERT_EQ(unlink(dir.c_str()), 0);
  ASSERT_EQ(rename(moved.c_str(), dir.c_str()), 0);
  if (committed) {
    EXPECT_EQ(Snapshot(outside.project), seen);
  } else {
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1);
    EXPECT_NE(err.find("dir"), std::string::npos) << err;
    auto after = Snapshot(outside.project);
    EXPECT_EQ(after, live_before) << "a refused commit is not wholly taken back:\n" << Describe(after);
    // The sandbox keeps its changes and commits them once the directory is back.
    Result again = w.Sandboxctl(kAlice, {"commit", id, "--all"});
    EXPECT_EQ(again.status, 0) << again.err;
    EXPECT_EQ(Snapshot(outside.project), seen);
  }
  EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", id}).out, "");
  outside.ExpectUntouched();
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
