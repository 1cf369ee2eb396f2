#include "runtime/file_clock.h"
#include "sandbox/changeset_scanner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <random>

#include "unique_fd.h"
#include "temp_dir.h"
#include "myself.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;
using testing::WriteFile;

std::string Describe(const std::vector<Change>& changes) {
  std::string text;
  for (const auto& c : changes) {
    char modes[32];
    snprintf(modes, sizeof modes, " %o->%o", c.old_mode, c.new_mode);
    text += std::string(1, ToLetter(c.kind)) + " " + c.path + " " + std::string(ToString(c.old_type)) + "->" +
            std::string(ToString(c.new_type)) + modes + "\n";
  }
  return text;
}

class ScannerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "whiteouts and trusted xattrs need root";
    mkdir((dir_ / "lower").c_str(), 0755);
    mkdir((dir_ / "upper").c_str(), 0755);
  }
  std::string L(const std::string& p) { return dir_ / ("lower/" + p); }
  std::string U(const std::string& p) { return dir_ / ("upper/" + p); }
  void Whiteout(const std::string& p) { ASSERT_EQ(mknod(U(p).c_str(), S_IFCHR | 0, makedev(0, 0)), 0); }
  void Opaque(const std::string& p) { ASSERT_EQ(setxattr(U(p).c_str(), "trusted.overlay.opaque", "y", 1, 0), 0); }
  std::string Scan(ContentVerdicts* verdicts = nullptr) {
    UniqueFd lower(open((dir_ / "lower").c_str(), O_PATH | O_DIRECTORY));
    UniqueFd upper(open((dir_ / "upper").c_str(), O_PATH | O_DIRECTORY));
    return Describe(ScanChanges(lower.get(), upper.get(), testing::Myself(), verdicts));
  }
  ScopedTempDir dir_;
};

TEST_F(ScannerTest, EmptyUpperHasNoChanges) { EXPECT_EQ(Scan(), ""); }

TEST_F(ScannerTest, AddedFilesAndDirectories) {
  WriteFile(U("new.txt"), "x\n");
  mkdir(U("empty").c_str(), 0750);
  mkdir(U("d").c_str(), 0755);
  WriteFile(U("d/f"), "y", 0600);
  mkfifo(U("pipe").c_str(), 0640);
  EXPECT_EQ(Scan(),
            "A d none->directory 0->755\n"
            "A d/f none->file 0->600\n"
            "A empty none->directory 0->750\n"
            "A new.txt none->file 0->644\n"
            "A pipe none->fifo 0->640\n");
}

// The timed scan hands out the sizes of both sides as it saw them: the live one's for a
// deletion (a whiteout has none), the upper one's for an addition.
TEST_F(ScannerTest, TheTimedScanSeesTheSizesOfBothSides) {
  WriteFile(L("grown.txt"), "abc");
  WriteFile(U("grown.txt"), "abcdefgh");
  WriteFile(L("gone.txt"), "12345");
  Whiteout("gone.txt");
  WriteFile(U("new.txt"), "xy");
  UniqueFd lower(open((dir_ / "lower").c_str(), O_PATH | O_DIRECTORY));
  UniqueFd upper(open((dir_ / "upper").c_str(), O_PATH | O_DIRECTORY));
  std::string seen;
  ScanChangesTimed(lower.get(), upper.get(), testing::Myself(), [&](Change&& change, const UpperEntry& entry) {
    seen += change.path + " " + std::to_string(entry.old_size) + "->" + std::to_string(entry.new_size) + "\n";
  });
  EXPECT_EQ(seen, "gone.txt 5->0\ngrown.txt 3->8\nnew.txt 0->2\n");
}

// The live feed looks at one path a job named: a directory on the way that the job swapped for
// a symlink is not followed, in the sandbox or the live tree, so nothing out there is looked at.
TEST_F(ScannerTest, OnePathIsLookedAtBeneathTheRootsWithoutSymlinks) {
  ScopedTempDir elsewhere;
  WriteFile(elsewhere / "secret", "s");
  ASSERT_EQ(symlink(elsewhere.path().c_str(), U("d").c_str()), 0);
  UniqueFd lower(open((dir_ / "lower").c_str(), O_PATH | O_DIRECTORY));
  UniqueFd upper(open((dir_ / "upper").c_str(), O_PATH | O_DIRECTORY));
  EXPECT_FALSE(ScanOnePath(lower.get(), upper.get(), testing::Myself(), "d/secret", 1024)) << "looked through the sandbox's symlink";
  ASSERT_EQ(symlink(elsewhere.path().c_str(), L("e").c_str()), 0);
  ASSERT_EQ(mkdir(U("e").c_str(), 0755), 0);
  WriteFile(U("e/secret"), "s");
  auto change = ScanOnePath(lower.get(), upper.get(), testing::Myself(), "e/secret", 1024);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->kind, ChangeKind::kAdded) << "compared with a file through the live tree's symlink";
  WriteFile(U("plain.txt"), "p");
  ASSERT_TRUE(ScanOnePath(lower.get(), upper.get(), testing::Myself(), "plain.txt", 1024));
}

TEST_F(ScannerTest, ModifiedOnlyWhenContentDiffers) {
  WriteFile(L("same.txt"), "hello\n");
  WriteFile(U("same.txt"), "hello\n");  // copied up, untouched
  WriteFile(L("longer.txt"), "hello\n");
  WriteFile(U("longer.txt"), "hello\nworld\n");
  WriteFile(L("samesize.txt"), "abcdef");
  WriteFile(U("samesize.txt"), "abcdeg");
  EXPECT_EQ(Scan(),
            "M longer.txt file->file 644->644\n"
            "M samesize.txt file->file 644->644\n");
}

// With remembered verdicts, a same-size file is read once, and any later write to either side
// (which moves its ctime) is seen: the verdict is keyed by both identities.
TEST_F(ScannerTest, RememberedVerdictsNeverHideALaterWrite) {
  WriteFile(L("same.txt"), "abc\n");
  WriteFile(U("same.txt"), "abc\n");
  WriteFile(L("edit.txt"), "abc\n");
  WriteFile(U("edit.txt"), "abd\n");
  usleep(20000);  // past the file clock's tick of those writes: their verdicts may be kept
  ContentVerdicts verdicts;
  EXPECT_EQ(Scan(&verdicts), "M edit.txt file->file 644->644\n");
  EXPECT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(Scan(&verdicts), "M edit.txt file->file 644->644\n");
  WriteFile(U("same.txt"), "xyz\n");  // same size, new bytes, in the sandbox
  WriteFile(L("edit.txt"), "abd\n");  // the live tree catches up
  EXPECT_EQ(Scan(&verdicts), "M same.txt file->file 644->644\n");
}

// A write in the same tick of the file clock as the one before keeps the ctime: a verdict
// about such a file is not kept, so a second same-size write right after a scan is seen.
TEST_F(ScannerTest, AVerdictOfAFileWrittenThisTickIsNotKept) {
  WriteFile(L("f"), "abc\n");
  WriteFile(U("f"), "abc\n");
  struct stat written;
  ASSERT_EQ(stat(U("f").c_str(), &written), 0);
  ContentVerdicts verdicts;
  EXPECT_EQ(Scan(&verdicts), "");
  // Only while the clock is still in the writes' tick: once it has moved on (a slow machine),
  // keeping the verdict is right, and the write below gets a later ctime anyway.
  if (FileClockNowNs() <= int64_t{written.st_ctim.tv_sec} * 1000000000 + written.st_ctim.tv_nsec)
    EXPECT_EQ(verdicts.size(), 0u);
  WriteFile(U("f"), "xyz\n");
  EXPECT_EQ(Scan(&verdicts), "M f file->file 644->644\n");
}

TEST_F(ScannerTest, ModeChangesOfFilesDirectoriesAndTheRoot) {
  WriteFile(L("run.sh"), "#!/bin/sh\n", 0644);
  WriteFile(U("run.sh"), "#!/bin/sh\n", 04755);
  mkdir(L("sub").c_str(), 0755);
  mkdir(U("sub").c_str(), 0700);
  chmod((dir_ / "upper").c_str(), 0700);
  EXPECT_EQ(Scan(),
            "P . directory->directory 755->700\n"
            "P run.sh file->file 644->4755\n"
            "P sub directory->directory 755->700\n");
}

TEST_F(ScannerTest, WhiteoutsAreDeletionsOnlyOverALowerEntry) {
  WriteFile(L("gone.txt"), "x");
  mkdir(L("tree").c_str(), 0755);
  WriteFile(L("tree/a"), "a");
  Whiteout("gone.txt");
  Whiteout("tree");
  Whiteout("never-existed");
  EXPECT_EQ(Scan(),
            "D gone.txt file->none 644->0\n"
            "D tree directory->none 755->0\n");
}

TEST_F(ScannerTest, TypeChanges) {
  WriteFile(L("f2d"), "x");
  mkdir(U("f2d").c_str(), 0755);
  WriteFile(U("f2d/inside"), "i");
  mkdir(L("d2f").c_str(), 0755);
  WriteFile(L("d2f/child"), "c");
  WriteFile(U("d2f"), "now a file");
  WriteFile(L("f2l"), "x");
  symlink("target", U("f2l").c_str());
  EXPECT_EQ(Scan(),
            "T d2f directory->file 755->644\n"
            "T f2d file->directory 644->755\n"
            "A f2d/inside none->file 0->644\n"
            "T f2l file->symlink 644->777\n");
}

TEST_F(ScannerTest, SymlinkRetargetIsAModification) {
  symlink("a", L("link").c_str());
  symlink("b", U("link").c_str());
  symlink("same", L("keep").c_str());
  symlink("same", U("keep").c_str());
  EXPECT_EQ(Scan(), "M link symlink->symlink 777->777\n");
}

TEST_F(ScannerTest, OpaqueDirectoryHidesLowerChildren) {
  mkdir(L("d").c_str(), 0755);
  WriteFile(L("d/kept-same"), "same");
  WriteFile(L("d/kept-other"), "old");
  WriteFile(L("d/removed"), "r");
  mkdir(L("d/nested").c_str(), 0755);
  WriteFile(L("d/nested/deep"), "deep");
  mkdir(U("d").c_str(), 0755);
  Opaque("d");
  WriteFile(U("d/kept-same"), "same");
  WriteFile(U("d/kept-other"), "new");
  mkdir(U("d/nested").c_str(), 0755);  // recreated empty below the opaque dir: hides "deep" too
  EXPECT_EQ(Scan(),
            "M d/kept-other file->file 644->644\n"
            "D d/nested/deep file->none 644->0\n"
            "D d/removed file->none 644->0\n");
}

// The live side is read with the owner's eyes (changeset_scanner.h): root's 0700 directory
// under an opaque one shows nothing beneath it, a guess written over root's 0600 file is
// modified whether it is right or wrong, and root's own eyes (the daemon's before) saw both.
TEST_F(ScannerTest, TheLiveSideIsReadAsTheOwnerSeesIt) {
  UserCredentials nobody;
  nobody.uid = nobody.gid = 65534;
  nobody.groups = {65534};
  mkdir(L("d").c_str(), 0755);
  ASSERT_EQ(chown(L("d").c_str(), 65534, 65534), 0);
  mkdir(L("d/vault").c_str(), 0700);
  WriteFile(L("d/vault/payroll"), "SALARY", 0600);
  mkdir(L("d/vault/inner").c_str(), 0755);
  WriteFile(L("pin-right"), "hunter2", 0600);
  WriteFile(L("pin-wrong"), "hunter3", 0600);
  mkdir(U("d").c_str(), 0755);
  Opaque("d");
  mkdir(U("d/vault").c_str(), 0700);
  WriteFile(U("d/vault/key"), "k", 0644);
  WriteFile(U("pin-right"), "hunter2", 0644);
  WriteFile(U("pin-wrong"), "hunter2", 0644);
  // The upper's copy of root's file (a job renamed it over hers): not read as root either.
  WriteFile(L("mine"), "hunter2", 0644);
  ASSERT_EQ(chown(L("mine").c_str(), 65534, 65534), 0);
  WriteFile(U("mine"), "hunter2", 0600);
  // Her job's own file made unreadable (chmod 000): hers to read, so compared by content.
  WriteFile(L("own"), "abc", 0644);
  WriteFile(U("own"), "abc", 0);
  ASSERT_EQ(chown(L("own").c_str(), 65534, 65534), 0);
  for (const char* path : {"d", "d/vault", "d/vault/key", "pin-right", "pin-wrong", "own"}) ASSERT_EQ(lchown(U(path).c_str(), 65534, 65534), 0);
  UniqueFd lower(open((dir_ / "lower").c_str(), O_PATH | O_DIRECTORY));
  UniqueFd upper(open((dir_ / "upper").c_str(), O_PATH | O_DIRECTORY));

  EXPECT_EQ(Describe(ScanChanges(lower.get(), upper.get(), nobody)),
            "A d/vault/key none->file 0->644\n"
            "M mine file->file 644->600\n"
            "P own file->file 644->0\n"
            "M pin-right file->file 600->644\n"
            "M pin-wrong file->file 600->644\n");
  EXPECT_EQ(Describe(ScanDeletions(lower.get(), upper.get(), nobody)), "");
  // The one path the live feed looks at, the same way.
  auto key = ScanOnePath(lower.get(), upper.get(), nobody, "d/vault/key", 1024);
  ASSERT_TRUE(key);
  EXPECT_EQ(key->kind, ChangeKind::kAdded);
  // What root sees: the names beneath, and which guess is right.
  EXPECT_EQ(Describe(ScanChanges(lower.get(), upper.get(), testing::Myself())),
            "D d/vault/inner directory->none 755->0\n"
            "A d/vault/key none->file 0->644\n"
            "D d/vault/payroll file->none 600->0\n"
            "P mine file->file 644->600\n"
            "P own file->file 644->0\n"
            "P pin-right file->file 600->644\n"
            "M pin-wrong file->file 600->644\n");
}

TEST_F(ScannerTest, LowerSymlinkComponentIsNeverFollowed) {
  ScopedTempDir outside;
  WriteFile(outside / "f", "content");
  symlink(outside.path().c_str(), L("a").c_str());
  mkdir(U("a").c_str(), 0755);
  WriteFile(U("a/f"), "content");
  EXPECT_EQ(Scan(),
            "T a symlink->directory 777->755\n"
            "A a/f none->file 0->644\n");
}

TEST_F(ScannerTest, ParentsSortBeforeChildren) {
  mkdir(U("a").c_str(), 0755);
  WriteFile(U("a/z"), "1");
  WriteFile(U("a.txt"), "1");
  WriteFile(U("-dash"), "1");
  chmod((dir_ / "upper").c_str(), 0711);
  std::string scan = Scan();
  EXPECT_EQ(scan.substr(0, 4), "P . ");
  EXPECT_LT(scan.find("A a "), scan.find("A a/z"));
}

/// Through a real overlay mount, the kernel's own whiteouts, opaque dirs and copy-ups.
TEST_F(ScannerTest, RealOverlay) {
  WriteFile(L("edit.txt"), "one\n");
  WriteFile(L("touch.txt"), "same\n");
  WriteFile(L("chmod.sh"), "x\n");
  WriteFile(L("rm.txt"), "bye\n");
  mkdir(L("tree").c_str(), 0755);
  WriteFile(L("tree/a"), "a\n");
  WriteFile(L("tree/b"), "b\n");
  WriteFile(L("mv-src"), "moved\n");
  mkdir((dir_ / "work").c_str(), 0700);
  mkdir((dir_ / "merged").c_str(), 0755);
  std::string options = "lowerdir=" + (dir_ / "lower") + ",upperdir=" + (dir_ / "upper") + ",workdir=" + (dir_ / "work") +
                        ",index=on,redirect_dir=off,metacopy=off";
  if (mount("overlay", (dir_ / "merged").c_str(), "overlay", 0, options.c_str()) != 0)
    GTEST_SKIP() << "cannot mount overlayfs here";
  std::string m = dir_ / "merged";
  std::string script = "cd '" + m + "' && echo two >> edit.txt && touch touch.txt && chmod 755 chmod.sh && rm rm.txt"
                       " && rm -rf tree && mkdir tree && echo a > tree/a && mv mv-src mv-dst && echo n > new.txt";
  int status = std::system(script.c_str());
  umount2(m.c_str(), MNT_DETACH);
  ASSERT_EQ(status, 0);
  EXPECT_EQ(Scan(),
            "P chmod.sh file->file 644->755\n"
            "M edit.txt file->file 644->644\n"
            "A mv-dst none->file 0->644\n"
            "D mv-src file->none 644->0\n"
            "A new.txt none->file 0->644\n"
            "D rm.txt file->none 644->0\n"
            "D tree/b file->none 644->0\n");
}

}  // namespace
}  // namespace sandboxd

namespace sandboxd {
namespace {

// The streaming scan hands out every change in the byte order of its path ("." first), so
// that readers can merge it with records kept in that order without holding the change set:
// names with bytes below '/' ("a-b", "a.c", "a b") come before a directory's children
// ("a/x"), which a plain depth-first walk would not give. Random trees of such names, with
// deletions, opaque directories and type changes, against the sorted list.
TEST_F(ScannerTest, TheStreamComesInByteOrderOfPath) {
  const std::vector<std::string> names = {"a", "a-b", "a.c", "a b", "a!", "a0", "b", "ab", "a.c.d"};
  size_t total = 0, deleted = 0;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::filesystem::remove_all(dir_ / "lower");
    std::filesystem::remove_all(dir_ / "upper");
    mkdir(L("").c_str(), 0755);
    mkdir(U("").c_str(), 0755);
    std::mt19937 random(seed);
    // Up to three levels of the names above in each tree: directories, files, whiteouts.
    std::function<void(const std::string&, int)> fill = [&](const std::string& dir, int depth) {
      for (const auto& name : names) {
        std::string path = dir.empty() ? name : dir + "/" + name;
        int pick = static_cast<int>(random() % 6);
        bool in_lower = std::filesystem::exists(L(dir.empty() ? "." : dir));
        if (in_lower && random() % 2) {
          if (random() % 3 == 0 && depth < 2) mkdir(L(path).c_str(), 0755);
          else WriteFile(L(path), "live");
        }
        if (pick == 0 && depth < 2) {
          mkdir(U(path).c_str(), 0755);
          if (random() % 4 == 0) Opaque(path);
          fill(path, depth + 1);
        } else if (pick == 1) {
          WriteFile(U(path), "sandbox " + path);
        } else if (pick == 2) {
          Whiteout(path);
        }
      }
    };
    fill("", 0);
    if (random() % 2) chmod(U("").c_str(), 0700);
    UniqueFd lower(open(L("").c_str(), O_PATH | O_DIRECTORY));
    UniqueFd upper(open(U("").c_str(), O_PATH | O_DIRECTORY));
    std::vector<Change> streamed;
    ScanChanges(lower.get(), upper.get(), testing::Myself(), [&](Change&& change) { streamed.push_back(std::move(change)); });
    std::vector<Change> sorted = streamed;
    std::stable_sort(sorted.begin(), sorted.end(), [](const Change& a, const Change& b) {
      if ((a.path == ".") != (b.path == ".")) return a.path == ".";
      return a.path < b.path;
    });
    EXPECT_EQ(Describe(streamed), Describe(sorted));
    EXPECT_EQ(Describe(streamed), Describe(ScanChanges(lower.get(), upper.get(), testing::Myself())));
    // The cheap walk for deletions alone finds exactly the scan's deletions.
    std::vector<Change> deletions;
    for (const auto& change : streamed)
      if (change.kind == ChangeKind::kDeleted) deletions.push_back(change);
    EXPECT_EQ(Describe(ScanDeletions(lower.get(), upper.get(), testing::Myself())), Describe(deletions));
    deleted += deletions.size();
    total += streamed.size();
  }
  EXPECT_GT(total, 400u) << "the trees are too small to tell";
  EXPECT_GT(deleted, 20u);
}

}  // namespace
}  // namespace sandboxd
