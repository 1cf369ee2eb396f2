// "Every kind of entry": each kind of change a job can make (a new directory, a directory
// removed and made again with other content, a deletion, a regular file, a symlink, a fifo)
// against each state the live path was in before the job (file, directory, symlink, missing).
// For each of the 24 pairs a job makes the change in a sandbox, `commit --all` writes it, and
// the live tree must then be byte for byte what the job saw in its merged view: types,
// contents, symlink targets, modes (setuid, setgid and sticky bits included), fifos as fifos,
// empty directories kept, nothing else touched. The one impossible pair (deleting a path that
// is not there) must be a no-op job and a no-op commit, without an error. The same 24 pairs run
// once more together with the root on another file system (the commit's copying path).
// Sockets and device nodes are reported and skipped, never committed.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "harness.h"

namespace sandboxd::it {
namespace {

/// The path under test is `sub/p`, so its parent is an ordinary directory of the root; beside
/// it are files that no job touches, and `tdir`, a directory a live symlink points to (a
/// commit that followed that symlink would write into tdir, which the snapshot would show).
constexpr const char* kCommonTree =
    "mkdir -p sub tdir && printf 'keep\\n' > keep.txt && printf 'sibling\\n' > sub/sibling.txt"
    " && printf 't\\n' > tdir/t.txt";

enum class Live { kFile, kDirectory, kSymlink, kMissing };
enum class Incoming { kNewDirectory, kReplacedDirectory, kDeletion, kFile, kSymlink, kFifo };

const char* LiveName(Live live) {
  switch (live) {
    case Live::kFile: return "File";
    case Live::kDirectory: return "Directory";
    case Live::kSymlink: return "Symlink";
    case Live::kMissing: return "Missing";
  }
  return "?";
}

const char* IncomingName(Incoming incoming) {
  switch (incoming) {
    case Incoming::kNewDirectory: return "NewDirectory";
    case Incoming::kReplacedDirectory: return "ReplacedDirectory";
    case Incoming::kDeletion: return "Deletion";
    case Incoming::kFile: return "File";
    case Incoming::kSymlink: return "Symlink";
    case Incoming::kFifo: return "Fifo";
  }
  return "?";
}

/// What sub/p is in the live tree before the sandbox exists (run in the project directory).
std::string LiveSetup(Live live) {
  switch (live) {
    case Live::kFile: return "printf 'live\\001\\n' > sub/p && chmod 640 sub/p";
    case Live::kDirectory:
      return "mkdir -p sub/p/inner sub/p/emptylive && printf 'i\\n' > sub/p/inner.txt && printf 'd\\n' > sub/p/inner/deep.txt"
             " && chmod 755 sub/p";
    case Live::kSymlink: return "ln -s ../tdir sub/p";
    case Live::kMissing: return "true";
  }
  return "false";
}

/// The job, run in the project directory. Each script works whatever sub/p is; `rm -rf` on a
/// symlink removes the link, never what it points to.
std::string JobScript(Incoming incoming) {
  switch (incoming) {
    case Incoming::kNewDirectory:
      // A directory that is there stays (new entries join it, its mode changes); anything else
      // gives way to a new directory. Setgid on a directory is meaningful: children inherit it.
      return "cd sub && { [ -d p ] && [ ! -L p ] || rm -f p; } && mkdir -p p && mkdir p/empty"
             " && printf 'new\\n' > p/new.txt && chmod 2750 p";
    case Incoming::kReplacedDirectory:
      // Removed and made again with other content: over a live directory this is an opaque
      // directory in the upper layer, which must hide every live entry below it.
      return "cd sub && rm -rf p && mkdir p && printf 'first\\n' > p/first.txt && rm -rf p && mkdir p"
             " && printf 'other\\n' > p/other.txt && mkdir p/empty2 && chmod 1750 p";
    case Incoming::kDeletion: return "cd sub && rm -rf p";
    case Incoming::kFile:
      // A live regular file is rewritten in place (a copy-up); anything else is replaced.
      return "cd sub && { [ -f p ] && [ ! -L p ] || rm -rf p; } && printf 'new\\001\\377\\n' > p && chmod 4750 p";
    case Incoming::kSymlink: return "cd sub && rm -rf p && ln -s 'no such/target' p";
    case Incoming::kFifo: return "cd sub && rm -rf p && mkfifo -m 640 p";
  }
  return "false";
}

/// `sandboxctl changes` after the job.
std::string ExpectedChanges(Live live, Incoming incoming) {
  const std::string own = [&] {
    switch (live) {
      case Live::kMissing: return std::string("A");
      case Live::kDirectory:
        if (incoming == Incoming::kNewDirectory || incoming == Incoming::kReplacedDirectory) return std::string("P");
        return std::string(incoming == Incoming::kDeletion ? "D" : "T");
      case Live::kFile:
        if (incoming == Incoming::kFile) return std::string("M");
        return std::string(incoming == Incoming::kDeletion ? "D" : "T");
      case Live::kSymlink:
        if (incoming == Incoming::kSymlink) return std::string("M");
        return std::string(incoming == Incoming::kDeletion ? "D" : "T");
    }
    return std::string("?");
  }();
  if (incoming == Incoming::kDeletion) return live == Live::kMissing ? "" : own + " sub/p\n";
  std::string text = own + " sub/p\n";
  if (incoming == Incoming::kNewDirectory) text += "A sub/p/empty\nA sub/p/new.txt\n";
  if (incoming == Incoming::kReplacedDirectory) {
    text += "A sub/p/empty2\n";
    if (live == Live::kDirectory) text += "D sub/p/emptylive\nD sub/p/inner\nD sub/p/inner.txt\n";
    text += "A sub/p/other.txt\n";
  }
  return text;
}

/// A fresh directory of alice's, outside any other test's: HOME/it-kinds-N.
std::string NewBase(const std::string& user, const std::string& tag) {
  static std::mt19937_64 random{std::random_device{}()};
  std::string base = std::string(getpwnam(user.c_str())->pw_dir) + "/it-" + tag + "-" + std::to_string(random() % 1000000000);
  Result r = World().RunAs(user, {"mkdir", "-p", base});
  EXPECT_EQ(r.status, 0) << r.err;
  return base;
}

std::string Merged(const std::string& id) { return World().MergedView(id); }

/// Removes the directory when the test ends, however it ends.
struct RemoveAtEnd {
  std::string path;
  ~RemoveAtEnd() {
    Result r = World().RunAs("root", {"rm", "-rf", "--one-file-system", path});
    EXPECT_EQ(r.status, 0) << r.err;
  }
};

using KindParam = std::tuple<Live, Incoming>;

class CommitKindsTest : public ::testing::TestWithParam<KindParam> {};

TEST_P(CommitKindsTest, LiveTreeBecomesWhatTheJobSaw) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  const auto [live, incoming] = GetParam();
  const bool impossible = live == Live::kMissing && incoming == Incoming::kDeletion;
  std::string base = NewBase(kAlice, "kinds");
  RemoveAtEnd cleanup{base};
  std::string project = base + "/proj";
  Result setup = w.RunAs(
      kAlice, {"sh", "-c", "mkdir '" + project + "' && cd '" + project + "' && " + kCommonTree + " && " + LiveSetup(live)});
  ASSERT_EQ(setup.status, 0) << setup.err;
  // The same job run directly on a copy: what the job should see through the overlay.
  std::string reference = base + "/reference";
  ASSERT_EQ(w.RunAs(kAlice, {"cp", "-a", project, reference}).status, 0);
  Result direct = w.RunAs(kAlice, {"sh", "-c", JobScript(incoming)}, {.cwd = reference});
  ASSERT_EQ(direct.status, 0) << "the job script itself fails: " << direct.err;
  const auto before = Snapshot(project);

  Result created = w.Sandboxctl(kAlice, {"create", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  Result job = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", JobScript(incoming)}, {.cwd = project});
  ASSERT_EQ(job.status, 0) << job.err;
  const auto seen = Snapshot(Merged(id));
  EXPECT_EQ(seen, Snapshot(reference)) << "the merged view is not what the same job makes on a copy:\n"
                                       << Describe(seen) << "the copy:\n" << Describe(Snapshot(reference));
  EXPECT_EQ(Snapshot(project), before) << "the live tree changed before the commit";

  Result changes = w.Sandboxctl(kAlice, {"changes", id});
  ASSERT_EQ(changes.status, 0) << changes.err;
  EXPECT_EQ(changes.out, ExpectedChanges(live, incoming));

  Result commit = w.Sandboxctl(kAlice, {"commit", id, "--all"});
  ASSERT_EQ(commit.status, 0) << commit.err;
  const auto after = Snapshot(project);
  EXPECT_EQ(after, seen) << "live after the commit:\n" << Describe(after) << "the job saw:\n" << Describe(seen);
  if (impossible) {
    EXPECT_EQ(seen, before) << "the job of an impossible change changed something";
    EXPECT_EQ(after, before) << "a commit of nothing changed the live tree";
    EXPECT_EQ(commit.err.find("rror"), std::string::npos) << commit.err;
  }
  Result left = w.Sandboxctl(kAlice, {"changes", id});
  EXPECT_EQ(left.status, 0) << left.err;
  EXPECT_EQ(left.out, "") << "changes left after commit --all";
  // The remounted sandbox shows the committed tree.
  EXPECT_EQ(Snapshot(Merged(id)), after);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

INSTANTIATE_TEST_SUITE_P(CommitKinds, CommitKindsTest,
                         ::testing::Combine(::testing::Values(Live::kFile, Live::kDirectory, Live::kSymlink, Live::kMissing),
                                            ::testing::Values(Incoming::kNewDirectory, Incoming::kReplacedDirectory,
                                                              Incoming::kDeletion, Incoming::kFile, Incoming::kSymlink,
                                                              Incoming::kFifo)),
                         [](const ::testing::TestParamInfo<KindParam>& info) {
                           return std::string("Live") + LiveName(std::get<0>(info.param)) + "_Gets" +
                                  IncomingName(std::get<1>(info.param));
                         });

/// Unmounts (lazily) when the test ends, however it ends.
struct UnmountAtEnd {
  std::string path;
  ~UnmountAtEnd() {
    if (!path.empty()) umount2(path.c_str(), MNT_DETACH);
  }
};

// The same 24 pairs at once, in one sandbox whose root is on another file system than the
// sandbox's upper layer (a tmpfs): there the commit copies each entry instead of renaming it,
// a code path of its own that must be just as faithful.
TEST(CommitKindsTest, EveryPairAtOnceAcrossFileSystems) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string base = NewBase(kAlice, "kinds");
  RemoveAtEnd cleanup{base};
  std::string project = base + "/proj";
  ASSERT_EQ(w.RunAs(kAlice, {"mkdir", project}).status, 0);
  passwd* alice = getpwnam(kAlice);
  std::string options = "mode=0755,size=16m,uid=" + std::to_string(alice->pw_uid) + ",gid=" + std::to_string(alice->pw_gid);
  if (mount("tmpfs", project.c_str(), "tmpfs", 0, options.c_str()) != 0)
    GTEST_SKIP() << "cannot mount a tmpfs: " << strerror(errno);
  UnmountAtEnd unmount{project};
  w.LetDaemonSeeNewMounts();
  std::string setup, job;
  for (Live live : {Live::kFile, Live::kDirectory, Live::kSymlink, Live::kMissing}) {
    for (Incoming incoming : {Incoming::kNewDirectory, Incoming::kReplacedDirectory, Incoming::kDeletion, Incoming::kFile,
                              Incoming::kSymlink, Incoming::kFifo}) {
      std::string pair = std::string(LiveName(live)) + "_" + IncomingName(incoming);
      setup += "mkdir " + pair + " && (cd " + pair + " && " + kCommonTree + " && " + LiveSetup(live) + ") && ";
      job += "(cd " + pair + " && " + JobScript(incoming) + ") && ";
    }
  }
  setup += "true";
  job += "true";
  Result made = w.RunAs(kAlice, {"sh", "-c", setup}, {.cwd = project});
  ASSERT_EQ(made.status, 0) << made.err;
  std::string reference = base + "/reference";
  ASSERT_EQ(w.RunAs(kAlice, {"cp", "-a", project, reference}).status, 0);
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", job}, {.cwd = reference}).status, 0);
  const auto before = Snapshot(project);

  Result created = w.Sandboxctl(kAlice, {"create", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  struct stat live_st, upper_st;
  ASSERT_EQ(stat(project.c_str(), &live_st), 0);
  ASSERT_EQ(stat((w.dir() + "/state/sandboxes/" + id + "/upper/0").c_str(), &upper_st), 0);
  ASSERT_NE(live_st.st_dev, upper_st.st_dev) << "the root is not on another file system than the upper layer";
  Result ran = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", job}, {.cwd = project});
  ASSERT_EQ(ran.status, 0) << ran.err;
  const auto seen = Snapshot(Merged(id));
  EXPECT_EQ(seen, Snapshot(reference)) << "the merged view is not what the same job makes on a copy";
  EXPECT_EQ(Snapshot(project), before);

  Result commit = w.Sandboxctl(kAlice, {"commit", id, "--all"});
  ASSERT_EQ(commit.status, 0) << commit.err;
  const auto after = Snapshot(project);
  EXPECT_EQ(after, seen) << "live after the commit:\n" << Describe(after) << "the job saw:\n" << Describe(seen);
  Result left = w.Sandboxctl(kAlice, {"changes", id});
  EXPECT_EQ(left.status, 0) << left.err;
  EXPECT_EQ(left.out, "") << "changes left after commit --all";
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

std::set<std::string> Lines(const std::string& text) {
  std::set<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.insert(line);
  return lines;
}

// A job can make sockets (and, with a right no job has, device nodes). They are changes the
// review shows, but they are not committed: the commit skips each one, says so (the daemon
// logs "skipped P: sockets and device nodes are not committed"; newer clients also print it),
// and commits everything else. A skipped entry that replaced a live file leaves that file be.
TEST(CommitKindsTest, SocketsAndDeviceNodesAreReportedAndSkipped) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3 to make a socket in the job";
  std::string base = NewBase(kAlice, "kinds");
  RemoveAtEnd cleanup{base};
  std::string project = base + "/proj";
  Result setup = w.RunAs(kAlice, {"sh", "-c", "mkdir '" + project + "' && cd '" + project + "' && printf 'live\\n' > f.txt"});
  ASSERT_EQ(setup.status, 0) << setup.err;
  const auto before = Snapshot(project);
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", project}).out);
  ASSERT_FALSE(id.empty());
  Result job = w.Sandboxctl(kAlice,
                            {"run", id, "--", "sh", "-c",
                             "mkdir nd && printf 'ok\\n' > ok.txt && rm f.txt && /usr/bin/python3 -c 'import socket\n"
                             "for p in (\"sock\", \"nd/sock\", \"f.txt\"): socket.socket(socket.AF_UNIX).bind(p)'"},
                            {.cwd = project});
  ASSERT_EQ(job.status, 0) << job.err;
  const auto seen = Snapshot(Merged(id));
  // A device node as a job with CAP_MKNOD would leave it: planted by root in the upper layer
  // (the overlay is unmounted for the commit, which reads the upper layer alone).
  std::string upper = w.dir() + "/state/sandboxes/" + id + "/upper/0";
  passwd* alice = getpwnam(kAlice);
  ASSERT_EQ(mknod((upper + "/null").c_str(), S_IFCHR | 0600, makedev(1, 3)), 0);
  ASSERT_EQ(lchown((upper + "/null").c_str(), alice->pw_uid, alice->pw_gid), 0);

  Result changes = w.Sandboxctl(kAlice, {"changes", id});
  ASSERT_EQ(changes.status, 0) << changes.err;
  EXPECT_EQ(changes.out, "T f.txt\nA nd\nA nd/sock\nA null\nA ok.txt\nA sock\n");

  Result commit = w.Sandboxctl(kAlice, {"commit", id, "--all"});
  ASSERT_EQ(commit.status, 0) << commit.err;
  std::string log = w.DaemonLog();
  for (const char* path : {"sock", "nd/sock", "f.txt", "null"}) {
    std::string message = std::string("skipped ") + path + ": sockets and device nodes are not committed";
    EXPECT_TRUE(log.find("sandbox " + id + ": " + message) != std::string::npos ||
                commit.out.find(message) != std::string::npos || commit.err.find(message) != std::string::npos)
        << "no report of " << message << "\nsandboxctl said:\n" << commit.out << commit.err;
  }
  auto after = Snapshot(project);
  auto expected = before;
  expected["/nd"] = seen.at("/nd");
  expected["/ok.txt"] = seen.at("/ok.txt");
  EXPECT_EQ(after, expected) << "live:\n" << Describe(after) << "expected:\n" << Describe(expected);
  // What is left in the sandbox can only be what was skipped.
  Result left = w.Sandboxctl(kAlice, {"changes", id});
  EXPECT_EQ(left.status, 0) << left.err;
  for (const auto& line : Lines(left.out))
    EXPECT_TRUE(line == "T f.txt" || line == "A nd/sock" || line == "A null" || line == "A sock")
        << "left after commit: " << line;
  std::printf("sandboxctl commit said: %s%s; left in the sandbox: %s\n", commit.out.c_str(), Trim(commit.err).c_str(),
              left.out.empty() ? "nothing" : ("\n" + left.out).c_str());
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
