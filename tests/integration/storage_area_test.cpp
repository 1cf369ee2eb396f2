// Roots on another file system than sandboxd's state directory (here a tmpfs mounted as root,
// as a separate /home would be): their layers live in that file system's storage area
// (TOP/.sandboxd), so that a commit there is the same journaled rename as anywhere, partial
// commits and undo included; where TOP may be written by others, the layers stay in the state
// directory and the commit copies.

#include <dirent.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "harness.h"

namespace sandboxd::it {
namespace {

ino_t InodeOf(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

/// A tmpfs of its own at /mnt/sandboxd-it-N, its top owned by root with `mode`, holding alice's
/// project proj/ (two files), unmounted at the end.
class OtherFileSystem {
 public:
  explicit OtherFileSystem(const std::string& mode) {
    static std::mt19937_64 random{std::random_device{}()};
    top_ = "/mnt/sandboxd-it-" + std::to_string(random() % 1000000000);
    if (mkdir(top_.c_str(), 0755) != 0) {
      error_ = "cannot make " + top_ + ": " + strerror(errno);
      return;
    }
    std::string options = "mode=" + mode + ",size=16m,uid=0,gid=0";
    if (mount("tmpfs", top_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      error_ = std::string("cannot mount a tmpfs: ") + strerror(errno);
      return;
    }
    mounted_ = true;
    World().LetDaemonSeeNewMounts();  // sandboxd's namespace sees it only so where / is private
    passwd* alice = getpwnam(kAlice);
    project_ = top_ + "/proj";
    if (mkdir(project_.c_str(), 0755) != 0 || chown(project_.c_str(), alice->pw_uid, alice->pw_gid) != 0) {
      error_ = "cannot make " + project_;
      return;
    }
    Result files = World().RunAs(kAlice, {"sh", "-c", "echo one > a.txt && echo two > b.txt"}, {.cwd = project_});
    if (files.status != 0) error_ = "cannot write the project: " + files.err;
  }
  ~OtherFileSystem() {
    if (mounted_) umount2(top_.c_str(), MNT_DETACH);
    rmdir(top_.c_str());
  }
  const std::string& error() const { return error_; }
  const std::string& top() const { return top_; }
  const std::string& project() const { return project_; }

 private:
  std::string top_, project_, error_;
  bool mounted_ = false;
};

TEST(StorageAreaTest, ARootOnAnotherFileSystemCommitsByRenameThereAndUndoes) {
  SANDBOXD_REQUIRE_WORLD();
  OtherFileSystem fs("0755");
  if (!fs.error().empty()) GTEST_SKIP() << fs.error();
  // The daemon's log is shared by every test: only what this test made it write counts.
  const size_t log_start = World().DaemonLog().size();
  Result created = Ctl({"create", fs.project()});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  std::string area = fs.top() + "/.sandboxd/sandboxes/" + id;
  EXPECT_TRUE(Exists(area + "/upper/0")) << "the upper layer is not on the root's file system";
  EXPECT_FALSE(Exists(World().dir() + "/state/sandboxes/" + id + "/upper/0"));
  struct stat area_st;
  ASSERT_EQ(lstat((fs.top() + "/.sandboxd").c_str(), &area_st), 0);
  EXPECT_EQ(area_st.st_uid, 0u);
  EXPECT_EQ(area_st.st_mode & 07777, 0700u);

  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "echo changed > a.txt && echo new > c.txt && rm b.txt"}).status, 0);
  // A partial commit, which across file systems could not be staged: only a.txt goes.
  ASSERT_EQ(Ctl({"approve", id, "a.txt"}).status, 0);
  Result partial = Ctl({"commit", id});
  ASSERT_EQ(partial.status, 0) << partial.err;
  EXPECT_EQ(ReadWhole(fs.project() + "/a.txt"), "changed\n");
  EXPECT_TRUE(Exists(fs.project() + "/b.txt"));
  EXPECT_FALSE(Exists(fs.project() + "/c.txt"));
  Result rest = Ctl({"commit", id, "--all"});
  ASSERT_EQ(rest.status, 0) << rest.err;
  EXPECT_EQ(ReadWhole(fs.project() + "/c.txt"), "new\n");
  EXPECT_FALSE(Exists(fs.project() + "/b.txt"));
  EXPECT_TRUE(Exists(area + "/commits")) << "no backups kept on the root's file system";

  Result undo = Ctl({"undo", id});
  ASSERT_EQ(undo.status, 0) << undo.err;
  EXPECT_EQ(ReadWhole(fs.project() + "/b.txt"), "two\n");
  EXPECT_FALSE(Exists(fs.project() + "/c.txt"));
  EXPECT_EQ(ReadWhole(fs.project() + "/a.txt"), "changed\n");  // the first commit stays

  ASSERT_EQ(Ctl({"destroy", id}).status, 0);
  EXPECT_TRUE(WaitUntil([&] { return !Exists(area); })) << area << " outlived its sandbox";
  EXPECT_EQ(World().DaemonLog().find("removed the remains", log_start), std::string::npos);
}

TEST(StorageAreaTest, ACommitOnTheAreaMovesTheSandboxesFileWithoutCopying) {
  SANDBOXD_REQUIRE_WORLD();
  OtherFileSystem fs("0755");
  if (!fs.error().empty()) GTEST_SKIP() << fs.error();
  std::string id = Trim(Ctl({"create", fs.project()}).out);
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "echo new > c.txt"}).status, 0);
  ino_t in_sandbox = InodeOf(fs.top() + "/.sandboxd/sandboxes/" + id + "/upper/0/c.txt");
  ASSERT_NE(in_sandbox, 0u);
  ASSERT_EQ(Ctl({"commit", id, "--all"}).status, 0);
  EXPECT_EQ(InodeOf(fs.project() + "/c.txt"), in_sandbox);
  Ctl({"destroy", id});
}

/// `changes` output without its review marks (" [approved]", " [partial: ...]").
std::string WithoutMarks(const std::string& text) {
  std::string plain;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) plain += line.substr(0, line.find(" [")) + "\n";
  return plain;
}

/// The names in `dir` that start with ".sandboxd": a landing area left behind.
std::vector<std::string> Leftovers(const std::string& dir) {
  std::vector<std::string> found;
  if (DIR* listing = opendir(dir.c_str())) {
    while (dirent* entry = readdir(listing))
      if (std::string(entry->d_name).rfind(".sandboxd", 0) == 0) found.push_back(entry->d_name);
    closedir(listing);
  }
  return found;
}

// Where TOP may be written by others (a USB stick, a tmpfs of the user's) there is no storage
// area: the layers stay in the state directory and every commit copies what goes live into a
// landing area in the root, then renames from there, journaled as anywhere: partial commits
// and undo included, and nothing of the landing area left in the live tree afterwards.
TEST(StorageAreaTest, ATopOthersMayWriteCommitsThroughALandingArea) {
  SANDBOXD_REQUIRE_WORLD();
  OtherFileSystem fs("1777");  // like /tmp: anyone could plant .sandboxd there
  if (!fs.error().empty()) GTEST_SKIP() << fs.error();
  ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "seq 1 30 > a.txt"}, {.cwd = fs.project()}).status, 0);
  const auto seq_before = Snapshot(fs.project());
  Result created = Ctl({"create", fs.project()});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  EXPECT_FALSE(Exists(fs.top() + "/.sandboxd"));
  std::string storage = World().dir() + "/state/sandboxes/" + id;
  EXPECT_TRUE(Exists(storage + "/upper/0"));

  // Three hunks in a.txt, of which only the second goes; b.txt deleted, c.txt new, d/ new.
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c",
                 "sed -i -e 's/^2$/two/' -e 's/^15$/fifteen/' -e 's/^28$/twenty-eight/' a.txt && echo new > c.txt && "
                 "rm b.txt && mkdir d && echo deep > d/e && chmod 4755 c.txt"})
                .status,
            0);
  ASSERT_EQ(Ctl({"approve", id, "a.txt:2", "b.txt", "d"}).status, 0);
  Result partial = Ctl({"commit", id});
  ASSERT_EQ(partial.status, 0) << partial.err;
  std::string expected_a;
  for (int i = 1; i <= 30; ++i) expected_a += (i == 15 ? std::string("fifteen") : std::to_string(i)) + "\n";
  EXPECT_EQ(ReadWhole(fs.project() + "/a.txt"), expected_a);
  EXPECT_FALSE(Exists(fs.project() + "/b.txt"));
  EXPECT_EQ(ReadWhole(fs.project() + "/d/e"), "deep\n");
  EXPECT_FALSE(Exists(fs.project() + "/c.txt"));
  EXPECT_EQ(Leftovers(fs.project()), std::vector<std::string>{});
  // The rest stays in the sandbox: hunks 1 and 3 of a.txt, and c.txt.
  Result left = Ctl({"changes", id});
  EXPECT_EQ(left.out, "M a.txt\nA c.txt\n") << left.err;
  // The replaced a.txt and the removed b.txt are kept in the state directory, not in the root.
  std::vector<std::string> commits;
  if (DIR* listing = opendir((storage + "/commits").c_str())) {
    while (dirent* entry = readdir(listing))
      if (entry->d_name[0] != '.') commits.push_back(entry->d_name);
    closedir(listing);
  }
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(ReadWhole(storage + "/commits/" + commits[0] + "/backup/0/a.txt").substr(0, 4), "1\n2\n");
  EXPECT_EQ(ReadWhole(storage + "/commits/" + commits[0] + "/removed/0/e1"), "two\n");

  Result rest = Ctl({"commit", id, "--all"});
  ASSERT_EQ(rest.status, 0) << rest.err;
  EXPECT_EQ(ReadWhole(fs.project() + "/c.txt"), "new\n");
  struct stat c_st;
  ASSERT_EQ(lstat((fs.project() + "/c.txt").c_str(), &c_st), 0);
  EXPECT_EQ(c_st.st_mode & 07777, 04755u) << "the setuid bit did not arrive";
  EXPECT_EQ(Ctl({"changes", id}).out, "");
  EXPECT_EQ(Leftovers(fs.project()), std::vector<std::string>{});

  // Undo twice: byte for byte as before each commit, from the backups in the state directory.
  Result undo = Ctl({"undo", id});
  ASSERT_EQ(undo.status, 0) << undo.err;
  EXPECT_FALSE(Exists(fs.project() + "/c.txt"));
  EXPECT_EQ(ReadWhole(fs.project() + "/a.txt"), expected_a);
  undo = Ctl({"undo", id});
  ASSERT_EQ(undo.status, 0) << undo.err;
  EXPECT_EQ(Snapshot(fs.project()), seq_before);
  EXPECT_EQ(Leftovers(fs.project()), std::vector<std::string>{});
  // Everything is in the sandbox again, and commits again.
  EXPECT_EQ(WithoutMarks(Ctl({"changes", id}).out), "M a.txt\nD b.txt\nA c.txt\nA d\nA d/e\n");
  ASSERT_EQ(Ctl({"commit", id, "--all"}).status, 0);
  EXPECT_EQ(ReadWhole(fs.project() + "/d/e"), "deep\n");
  Ctl({"destroy", id});
}

// A name in the root where the landing area must go (the next commit's, read from the journal)
// stops the commit, which names it and changes nothing.
TEST(StorageAreaTest, ALandingAreaNameTakenStopsTheCommit) {
  SANDBOXD_REQUIRE_WORLD();
  OtherFileSystem fs("1777");
  if (!fs.error().empty()) GTEST_SKIP() << fs.error();
  std::string id = Trim(Ctl({"create", fs.project()}).out);
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "echo changed > a.txt"}).status, 0);
  Result next = World().RunAs("root", {"python3", "-c",
                                       "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
                                       "row = db.execute(\"SELECT seq FROM sqlite_sequence WHERE name = 'commits'\").fetchone(); "
                                       "print((row[0] if row else 0) + 1)",
                                       World().dir() + "/state/sandboxd.db"});
  ASSERT_EQ(next.status, 0) << next.err;
  std::string planted = ".sandboxd-commit-" + id + "-" + Trim(next.out);
  ASSERT_EQ(World().RunAs(kAlice, {"mkdir", planted}, {.cwd = fs.project()}).status, 0);
  const auto before = Snapshot(fs.project());
  Result commit = Ctl({"commit", id, "--all"});
  EXPECT_EQ(commit.status, 1);
  EXPECT_NE(commit.err.find(fs.project() + "/" + planted + " is in the way"), std::string::npos) << commit.err;
  EXPECT_EQ(Snapshot(fs.project()), before);
  EXPECT_EQ(Ctl({"changes", id}).out, "M a.txt\n");
  Ctl({"destroy", id});
}

TEST(StorageAreaTest, AreaSandboxesComeBackAfterARestart) {
  SANDBOXD_REQUIRE_WORLD();
  OtherFileSystem fs("0755");
  if (!fs.error().empty()) GTEST_SKIP() << fs.error();
  std::string id = Trim(Ctl({"create", fs.project()}).out);
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "echo changed > a.txt"}).status, 0);
  World().KillDaemon();
  ASSERT_TRUE(World().StartDaemon());
  Result changes = Ctl({"changes", id});
  ASSERT_EQ(changes.status, 0) << changes.err;
  EXPECT_EQ(changes.out, "M a.txt\n");
  ASSERT_EQ(Ctl({"commit", id, "--all"}).status, 0);
  EXPECT_EQ(ReadWhole(fs.project() + "/a.txt"), "changed\n");
  Ctl({"destroy", id});
}

}  // namespace
}  // namespace sandboxd::it
