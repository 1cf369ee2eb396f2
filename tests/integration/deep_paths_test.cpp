// Trees deeper than one syscall takes: a job nests 25 directories of 200 bytes (a relative
// path of 5 KB, past PATH_MAX) and puts a script at the bottom. Every verb must go down such a
// tree a directory at a time and show, commit, undo, suspend, resume and destroy it whole; a
// commit that fails half-way through such a tree is taken back and leaves the sandbox usable.
// The live tree is read here the same way, with `cd -P` one level at a time in a shell of
// alice's (no one syscall takes the whole path).

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "harness.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

constexpr int kDepth = 25;

/// The name of level `level` (from 1): 200 bytes, told apart by a prefix.
std::string Level(int level) {
  std::string name = "d" + std::to_string(level) + "-";
  name.resize(200, 'x');
  return name;
}

/// Levels `from`..`to` joined by '/'.
std::string Levels(int from, int to) {
  std::string path;
  for (int level = from; level <= to; ++level) path += (path.empty() ? "" : "/") + Level(level);
  return path;
}

/// Shell words that go down levels `from`..`to` one at a time, making each when `make`.
std::string GoDown(int from, int to, bool make) {
  std::string script = "true";
  for (int level = from; level <= to; ++level)
    script += std::string(" && ") + (make ? "mkdir " + Level(level) + " && " : "") + "cd -P " + Level(level);
  return script;
}

const std::string kScript = "#!/bin/sh\necho deep down\n";
const std::string kScriptPath = Levels(1, kDepth) + "/run.sh";

class DeepPathsTest : public AliceSandboxTest {
 protected:
  /// `script` run by alice's shell in the live project.
  Result InLive(const std::string& script) const {
    return World().RunAs(kAlice, {"sh", "-c", "cd -P '" + project_ + "' && " + script});
  }
  /// The live script's mode and content, or what the shell said when it could not get there.
  std::string LiveScript() const {
    Result seen = InLive(GoDown(1, kDepth, false) + " && stat -c %a run.sh && cat run.sh");
    return seen.status == 0 ? seen.out : "(not there: " + seen.err.substr(0, 300) + ")";
  }
  /// The job that makes the deep tree and its script.
  void MakeDeepScript() const {
    Job(GoDown(1, kDepth, true) + " && printf '#!/bin/sh\\necho deep down\\n' > run.sh && chmod 755 run.sh");
  }
  std::string Storage() const { return World().dir() + "/state/sandboxes/" + id_; }
};

TEST_F(DeepPathsTest, ADeepTreeIsShownCommittedUndoneSuspendedAndDestroyedWhole) {
  ASSERT_GT(kScriptPath.size(), 4096u);
  MakeDeepScript();

  EXPECT_NE(Changes().find("A " + kScriptPath + "\n"), std::string::npos) << Changes().substr(0, 300);
  Result diff = Ctl({"diff", id_, kScriptPath});
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_NE(diff.out.find("new file mode 100755\n"), std::string::npos) << diff.out.substr(diff.out.size() - 300);
  EXPECT_NE(diff.out.find("\n+#!/bin/sh\n+echo deep down\n"), std::string::npos) << diff.out.substr(diff.out.size() - 300);

  // A suspend and resume keeps it, and it still shows the same.
  Result suspended = Ctl({"suspend", id_});
  ASSERT_EQ(suspended.status, 0) << suspended.err;
  Result resumed = Ctl({"resume", id_});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  Result after_resume = Ctl({"diff", id_, kScriptPath});
  EXPECT_EQ(after_resume.out, diff.out) << after_resume.err;
  Result ran = Ctl({"run", id_, "--", "sh", "-c", "cd -P '" + project_ + "' && " + GoDown(1, kDepth, false) + " && ./run.sh"});
  EXPECT_EQ(ran.out, "deep down\n") << ran.err;

  Result committed = Ctl({"commit", id_, "--all"});
  ASSERT_EQ(committed.status, 0) << committed.err;
  EXPECT_EQ(LiveScript(), "755\n" + kScript);
  EXPECT_EQ(Changes(), "");

  Result undone = Ctl({"undo", id_});
  ASSERT_EQ(undone.status, 0) << undone.err;
  Result gone = InLive("test ! -e " + Level(1));
  EXPECT_EQ(gone.status, 0) << "undo left directory levels in the live tree";
  EXPECT_NE(Changes().find("A " + kScriptPath + "\n"), std::string::npos) << "undo did not give the change back";

  // Destroy removes the files after its reply: the deep upper goes too, none of it left in
  // the trash.
  Result destroyed = Ctl({"destroy", id_});
  ASSERT_EQ(destroyed.status, 0) << destroyed.err;
  const std::string storage = Storage(), trash = World().dir() + "/state/trash/" + id_;
  // (The daemon's log is the whole run's: other tests' sandboxes may have said so of theirs.)
  const std::string could_not = "sandbox " + id_ + ": cannot remove its files";
  id_.clear();
  EXPECT_TRUE(WaitUntil([&] {
    struct stat st;
    return lstat(storage.c_str(), &st) != 0 && lstat(trash.c_str(), &st) != 0;
  })) << "destroy left the sandbox's storage";
  EXPECT_EQ(World().DaemonLog().find(could_not), std::string::npos);
}

/// A live tree that is deep already: a job changes a file at its bottom and deletes another.
class DeepLiveTreeTest : public DeepPathsTest {
 protected:
  void PrepareProject() override {
    Result made = InLive(GoDown(1, kDepth, true) + " && echo old > changed.txt && echo gone > deleted.txt");
    ASSERT_EQ(made.status, 0) << made.err;
  }
  std::string LiveBottom() const {
    Result seen = InLive(GoDown(1, kDepth, false) + " && ls && cat changed.txt");
    return seen.status == 0 ? seen.out : "(not there: " + seen.err.substr(0, 300) + ")";
  }
};

TEST_F(DeepLiveTreeTest, ChangesAndDeletionsDeepDownCommitAndUndo) {
  Job("cd -P '" + project_ + "' && " + GoDown(1, kDepth, false) + " && echo new >> changed.txt && rm deleted.txt");
  const std::string bottom = Levels(1, kDepth);
  EXPECT_EQ(Changes(), "M " + bottom + "/changed.txt\nD " + bottom + "/deleted.txt\n");
  Result diff = Ctl({"diff", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_NE(diff.out.find("\n old\n+new\n"), std::string::npos) << diff.out.substr(diff.out.size() - 300);
  EXPECT_NE(diff.out.find("\n-gone\n"), std::string::npos) << diff.out.substr(diff.out.size() - 300);

  Result committed = Ctl({"commit", id_, "--all"});
  ASSERT_EQ(committed.status, 0) << committed.err;
  EXPECT_EQ(LiveBottom(), "changed.txt\nold\nnew\n");
  Result undone = Ctl({"undo", id_});
  ASSERT_EQ(undone.status, 0) << undone.err;
  EXPECT_EQ(LiveBottom(), "changed.txt\ndeleted.txt\nold\n");
}

/// A commit that cannot finish: live levels 1..22 are there before the job, level 22
/// read-only; the job makes it writable for a moment, goes on to level 25 (a script at the
/// bottom), makes it read-only again and changes a.txt, which goes live before the levels. So
/// the commit, which writes as alice, cannot put level 23 into live level 22: it fails after
/// a.txt went live, and must take that back, whole (whole upper) or staged.
class DeepCommitFailureTest : public DeepPathsTest {
 protected:
  void PrepareProject() override {
    Result made = InLive(GoDown(1, 22, true) + " && chmod 555 .");
    ASSERT_EQ(made.status, 0) << made.err;
  }
  void ExpectNothingLive(const Result& failed, const std::string& a) const {
    EXPECT_EQ(failed.status, 1) << failed.out;
    EXPECT_NE(failed.err.find("ermission denied"), std::string::npos) << failed.err.substr(0, 600);
    EXPECT_EQ(ReadWhole(project_ + "/a.txt"), a) << "the failed commit left a.txt live";
    EXPECT_EQ(InLive(GoDown(1, 22, false) + " && test ! -e " + Level(23)).status, 0) << "the failed commit left a level live";
  }
};

TEST_F(DeepCommitFailureTest, ACommitThatFailsHalfWayIsTakenBackAndTheSandboxStaysUsable) {
  const std::string a = ReadWhole(project_ + "/a.txt");
  Job(GoDown(1, 21, false) + " && chmod 755 " + Level(22) + " && cd -P " + Level(22) + " && " + GoDown(23, kDepth, true) +
      " && printf 'x\\n' > run.sh && cd -P '" + project_ + "' && " + GoDown(1, 21, false) + " && chmod 555 " + Level(22) +
      " && cd -P '" + project_ + "' && echo changed >> a.txt && echo other > other.txt");
  const std::string changes = Changes();
  ASSERT_EQ(changes.find("M a.txt\n"), 0u) << changes.substr(0, 300);
  ASSERT_EQ(changes.find(Level(22) + "\n"), std::string::npos) << "level 22 is a change";

  // Every change at once: the upper goes live whole.
  ExpectNothingLive(Ctl({"commit", id_, "--all"}), a);
  Result listed = Ctl({"changes", id_});
  ASSERT_EQ(listed.status, 0) << listed.err;
  EXPECT_EQ(listed.out, changes);

  // Some of them: through a stage.
  ASSERT_EQ(Ctl({"approve", id_, "a.txt", Level(1)}).status, 0);
  ExpectNothingLive(Ctl({"commit", id_}), a);
  listed = Ctl({"changes", id_});
  ASSERT_EQ(listed.status, 0) << listed.err;
  EXPECT_NE(listed.out.find("M a.txt [approved]\n"), std::string::npos) << listed.out.substr(0, 300);

  // Still usable: what can go live does.
  ASSERT_EQ(Ctl({"reject", id_, Level(1)}).status, 0);
  Result committed = Ctl({"commit", id_});
  ASSERT_EQ(committed.status, 0) << committed.err;
  EXPECT_EQ(ReadWhole(project_ + "/a.txt"), a + "changed\n");
  Result bottom = Ctl({"run", id_, "--", "sh", "-c", GoDown(1, kDepth, false) + " && cat run.sh"});
  EXPECT_EQ(bottom.out, "x\n") << bottom.err;
}

}  // namespace
}  // namespace sandboxd::it
