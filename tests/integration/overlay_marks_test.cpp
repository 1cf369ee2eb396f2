// overlayfs marks what it copies up (trusted.overlay.origin names the live file a copy came
// from; trusted.overlay.nlink keeps a hard link's count). They are the sandbox's bookkeeping:
// a commit puts each entry live without them, whichever way it goes (the whole upper, or a
// part through a stage). A commit only looks for marks on entries the upper has under more
// than one name (under index=on each copy-up is linked into the overlay's index), so this test
// covers each way a placed entry comes to carry marks: edited in place, edited and renamed to a
// name the live tree lacks, and one of two hard-linked live names edited.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>
#include <string>
#include <vector>

#include "harness.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

const std::vector<std::string> kMarked = {"edited", "moved", "linked", "linked2"};

/// The overlay marks `path` carries, named ("origin nlink"), or "" for none.
std::string MarksOn(const std::string& path) {
  std::string marks;
  for (const char* mark : {"origin", "nlink"}) {
    char value[256];
    if (lgetxattr(path.c_str(), (std::string("trusted.overlay.") + mark).c_str(), value, sizeof value) >= 0)
      marks += (marks.empty() ? "" : " ") + std::string(mark);
    else
      EXPECT_EQ(errno, ENODATA) << path;
  }
  return marks;
}

class OverlayMarksTest : public AliceSandboxTest {
 protected:
  void PrepareProject() override {
    Result made = World().RunAs(kAlice, {"sh", "-c", "echo a > edited && echo b > renamed && echo c > linked && ln linked linked2"},
                                {.cwd = project_});
    ASSERT_EQ(made.status, 0) << made.err;
  }

  /// Makes the copies, and checks that the upper holds them with their marks (else this test
  /// could not fail).
  void CopyUp() {
    Job("echo more >> edited && echo more >> renamed && mv renamed moved && echo more >> linked && echo new > fresh && echo no > other");
    std::string upper = World().dir() + "/state/sandboxes/" + id_ + "/upper/0/";
    for (const auto& name : kMarked) EXPECT_NE(MarksOn(upper + name), "") << name << " was not copied up with marks";
  }

  void ExpectLiveUnmarked() {
    for (const auto& name : kMarked) EXPECT_EQ(MarksOn(project_ + "/" + name), "") << "live " << name;
    EXPECT_EQ(ReadWhole(project_ + "/edited"), "a\nmore\n");
    EXPECT_EQ(ReadWhole(project_ + "/moved"), "b\nmore\n");
    EXPECT_EQ(ReadWhole(project_ + "/linked2"), "c\nmore\n");
    struct stat one, two;
    ASSERT_EQ(stat((project_ + "/linked").c_str(), &one), 0);
    ASSERT_EQ(stat((project_ + "/linked2").c_str(), &two), 0);
    EXPECT_EQ(one.st_ino, two.st_ino) << "the two names are no longer one file";
  }
};

TEST_F(OverlayMarksTest, AWholeCommitPutsCopiesLiveWithoutTheOverlaysMarks) {
  CopyUp();
  Result commit = Ctl({"commit", "--all", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  ExpectLiveUnmarked();
  EXPECT_EQ(ReadWhole(project_ + "/other"), "no\n");
}

TEST_F(OverlayMarksTest, APartialCommitPutsCopiesLiveWithoutTheOverlaysMarks) {
  CopyUp();
  Result reject = Ctl({"reject", id_, "other"});
  ASSERT_EQ(reject.status, 0) << reject.err;
  Result commit = Ctl({"commit", "--all", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  ExpectLiveUnmarked();
  EXPECT_FALSE(Exists(project_ + "/other")) << "a rejected file went live";
}

// A suspend archives the upper with its marks but not the overlay's index (the work directory
// is not kept): after the resume a copy-up has one link and still its marks.
TEST_F(OverlayMarksTest, ACommitAfterASuspendAndResumePutsCopiesLiveWithoutTheOverlaysMarks) {
  CopyUp();
  ASSERT_EQ(Ctl({"suspend", id_}).status, 0);
  ASSERT_EQ(Ctl({"resume", id_}).status, 0);
  std::string upper = World().dir() + "/state/sandboxes/" + id_ + "/upper/0/";
  EXPECT_NE(MarksOn(upper + "edited"), "") << "the resume dropped the marks: this case tests nothing";
  Result commit = Ctl({"commit", "--all", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  ExpectLiveUnmarked();
}

}  // namespace
}  // namespace sandboxd::it
