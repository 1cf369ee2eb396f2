#include "commit_apply.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>

#include "beneath.h"
#include "errors.h"
#include "fd.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::ReadFile;
using testing::ScopedTempDir;
using testing::WriteFile;

Change Add(const std::string& path, EntryType type, mode_t mode) {
  return {path, ChangeKind::kAdded, EntryType::kNone, type, 0, mode};
}
Change Modify(const std::string& path, EntryType type, mode_t mode) {
  return {path, ChangeKind::kModified, type, type, mode, mode};
}
Change Delete(const std::string& path, EntryType type) { return {path, ChangeKind::kDeleted, type, EntryType::kNone, 0755, 0}; }
Change Retype(const std::string& path, EntryType from, EntryType to, mode_t mode) {
  return {path, ChangeKind::kTypeChanged, from, to, 0644, mode};
}
Change Chmod(const std::string& path, EntryType type, mode_t from, mode_t to) {
  return {path, ChangeKind::kModeChanged, type, type, from, to};
}

class CommitApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mkdir((dir_ / "live").c_str(), 0755);
    mkdir((dir_ / "upper").c_str(), 0755);
  }
  std::string L(const std::string& p) { return dir_ / ("live/" + p); }
  std::string U(const std::string& p) { return dir_ / ("upper/" + p); }
  ApplyResult Apply(const std::vector<Change>& changes) {
    UniqueFd live(open((dir_ / "live").c_str(), O_PATH | O_DIRECTORY));
    UniqueFd upper(open((dir_ / "upper").c_str(), O_PATH | O_DIRECTORY));
    return ApplyChanges(changes, live.get(), upper.get());
  }
  mode_t Mode(const std::string& path) {
    struct stat st;
    lstat(path.c_str(), &st);
    return st.st_mode;
  }
  bool Exists(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0;
  }
  size_t TempFilesLeft() {
    size_t count = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_ / "live"))
      count += entry.path().filename().string().rfind(".#sandboxd.", 0) == 0;
    return count;
  }
  ScopedTempDir dir_;
};

TEST_F(CommitApplyTest, FilesAddedModifiedDeleted) {
  WriteFile(U("new.txt"), "new\n");
  WriteFile(L("mod.txt"), "old\n");
  WriteFile(U("mod.txt"), "new content\n", 0600);
  WriteFile(L("gone.txt"), "bye\n");
  auto result = Apply({Add("new.txt", EntryType::kFile, 0644), Delete("gone.txt", EntryType::kFile),
                       Modify("mod.txt", EntryType::kFile, 0600)});
  EXPECT_EQ(result.applied, 3u);
  EXPECT_EQ(ReadFile(L("new.txt")), "new\n");
  EXPECT_EQ(ReadFile(L("mod.txt")), "new content\n");
  EXPECT_EQ(Mode(L("mod.txt")) & 07777, 0600u);
  EXPECT_FALSE(Exists(L("gone.txt")));
  EXPECT_EQ(TempFilesLeft(), 0u);
}

TEST_F(CommitApplyTest, DirectoriesAddedEmptyAndWithFilesAndDeletedTrees) {
  mkdir(U("empty").c_str(), 0750);
  mkdir(U("d").c_str(), 0755);
  WriteFile(U("d/f"), "f");
  mkdir(L("old").c_str(), 0755);
  mkdir(L("old/deeper").c_str(), 0755);
  WriteFile(L("old/deeper/x"), "x");
  symlink("/etc/passwd", L("old/link").c_str());
  Apply({Add("d", EntryType::kDirectory, 0755), Add("d/f", EntryType::kFile, 0644),
         Add("empty", EntryType::kDirectory, 0750), Delete("old", EntryType::kDirectory)});
  EXPECT_EQ(Mode(L("empty")) & 07777, 0750u);
  EXPECT_TRUE(S_ISDIR(Mode(L("empty"))));
  EXPECT_EQ(ReadFile(L("d/f")), "f");
  EXPECT_FALSE(Exists(L("old")));
  EXPECT_TRUE(Exists("/etc/passwd"));
}

TEST_F(CommitApplyTest, ModeChangesKeepSetuidAndCoverTheRoot) {
  WriteFile(L("tool"), "#!/bin/sh\n", 0755);
  mkdir(L("sub").c_str(), 0755);
  Apply({Chmod(".", EntryType::kDirectory, 0755, 0750), Chmod("sub", EntryType::kDirectory, 0755, 0700),
         Chmod("tool", EntryType::kFile, 0755, 04755)});
  EXPECT_EQ(Mode(L("tool")) & 07777, 04755u);
  EXPECT_EQ(Mode(L("sub")) & 07777, 0700u);
  EXPECT_EQ(Mode(dir_ / "live") & 07777, 0750u);
}

TEST_F(CommitApplyTest, SetuidBitArrivesWithNewContent) {
  WriteFile(U("suid"), "binary", 04711);
  Apply({Add("suid", EntryType::kFile, 04711)});
  EXPECT_EQ(Mode(L("suid")) & 07777, 04711u);
}

TEST_F(CommitApplyTest, SymlinksFifosAndSkippedSockets) {
  symlink("target-a", U("link").c_str());
  symlink("old-target", L("retarget").c_str());
  symlink("new-target", U("retarget").c_str());
  mkfifo(U("pipe").c_str(), 0640);
  int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", U("sock").c_str());
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  close(sock);
  auto result = Apply({Add("link", EntryType::kSymlink, 0777), Add("pipe", EntryType::kFifo, 0640),
                       Modify("retarget", EntryType::kSymlink, 0777), Add("sock", EntryType::kSocket, 0755)});
  EXPECT_EQ(std::filesystem::read_symlink(L("link")), "target-a");
  EXPECT_EQ(std::filesystem::read_symlink(L("retarget")), "new-target");
  EXPECT_TRUE(S_ISFIFO(Mode(L("pipe"))));
  EXPECT_EQ(Mode(L("pipe")) & 07777, 0640u);
  EXPECT_FALSE(Exists(L("sock")));
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_NE(result.skipped[0].find("sock"), std::string::npos);
  EXPECT_EQ(result.applied, 3u);
}

TEST_F(CommitApplyTest, TypeChanges) {
  WriteFile(L("f2d"), "file");
  mkdir(U("f2d").c_str(), 0755);
  WriteFile(U("f2d/inner"), "inner");
  mkdir(L("d2f").c_str(), 0755);
  WriteFile(L("d2f/old"), "old");
  WriteFile(U("d2f"), "now a file");
  WriteFile(L("f2l"), "file");
  symlink("elsewhere", U("f2l").c_str());
  symlink("somewhere", L("l2d").c_str());
  mkdir(U("l2d").c_str(), 0700);
  Apply({Retype("d2f", EntryType::kDirectory, EntryType::kFile, 0644), Retype("f2d", EntryType::kFile, EntryType::kDirectory, 0755),
         Add("f2d/inner", EntryType::kFile, 0644), Retype("f2l", EntryType::kFile, EntryType::kSymlink, 0777),
         Retype("l2d", EntryType::kSymlink, EntryType::kDirectory, 0700)});
  EXPECT_EQ(ReadFile(L("d2f")), "now a file");
  EXPECT_EQ(ReadFile(L("f2d/inner")), "inner");
  EXPECT_EQ(std::filesystem::read_symlink(L("f2l")), "elsewhere");
  EXPECT_TRUE(S_ISDIR(Mode(L("l2d"))));
  EXPECT_EQ(Mode(L("l2d")) & 07777, 0700u);
}

TEST_F(CommitApplyTest, MtimeIsKept) {
  WriteFile(U("old.txt"), "x");
  timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
  utimensat(AT_FDCWD, U("old.txt").c_str(), times, 0);
  Apply({Add("old.txt", EntryType::kFile, 0644)});
  struct stat st;
  stat(L("old.txt").c_str(), &st);
  EXPECT_EQ(st.st_mtim.tv_sec, 1000000000);
}

TEST_F(CommitApplyTest, LargeFileStreams) {
  {
    UniqueFd fd(open(U("big").c_str(), O_WRONLY | O_CREAT, 0644));
    std::string block(1 << 20, 'x');
    for (int i = 0; i < 64; ++i) {
      block[0] = static_cast<char>('a' + i % 26);
      ASSERT_EQ(write(fd.get(), block.data(), block.size()), static_cast<ssize_t>(block.size()));
    }
  }
  Apply({Add("big", EntryType::kFile, 0644)});
  EXPECT_EQ(std::filesystem::file_size(L("big")), 64u << 20);
  EXPECT_EQ(ReadFile(L("big")), ReadFile(U("big")));
}

TEST_F(CommitApplyTest, NeverWritesThroughALiveSymlinkedParent) {
  ScopedTempDir outside;
  symlink(outside.path().c_str(), L("a").c_str());
  mkdir(U("a").c_str(), 0755);
  WriteFile(U("a/x"), "escape");
  try {
    Apply({Add("a/x", EntryType::kFile, 0644)});
    FAIL() << "wrote through a symlink";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidPath);
    EXPECT_NE(std::string(e.what()).find("symlink"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(Exists(outside / "x"));
}

TEST_F(CommitApplyTest, ReplacesAFinalSymlinkInsteadOfWritingToItsTarget) {
  ScopedTempDir outside;
  WriteFile(outside / "secret", "untouched");
  symlink((outside / "secret").c_str(), L("f").c_str());
  WriteFile(U("f"), "replacement");
  Apply({Retype("f", EntryType::kSymlink, EntryType::kFile, 0644)});
  EXPECT_EQ(ReadFile(outside / "secret"), "untouched");
  EXPECT_TRUE(S_ISREG(Mode(L("f"))));
  EXPECT_EQ(ReadFile(L("f")), "replacement");
}

TEST_F(CommitApplyTest, RefusesDotDotAndAbsolutePaths) {
  for (const char* bad : {"../x", "a/../../x", "/etc/passwd", "a//b", ""}) {
    EXPECT_THROW(Apply({Add(bad, EntryType::kFile, 0644)}), Error) << bad;
  }
}

TEST_F(CommitApplyTest, NoTempFileLeftAfterAFailure) {
  mkdir(L("ro").c_str(), 0755);
  WriteFile(U("missing-in-upper-is-an-error"), "x");
  EXPECT_THROW(Apply({Add("not-there", EntryType::kFile, 0644)}), Error);
  EXPECT_EQ(TempFilesLeft(), 0u);
}

TEST(BeneathTest, OpensNestedPathsAndRefusesSymlinksAndDotDot) {
  ScopedTempDir dir;
  mkdir((dir / "a").c_str(), 0755);
  mkdir((dir / "a/b").c_str(), 0755);
  WriteFile(dir / "a/b/f", "x");
  symlink("b", (dir / "a/link").c_str());
  UniqueFd root(open(dir.path().c_str(), O_PATH | O_DIRECTORY));
  EXPECT_TRUE(OpenBeneath(root.get(), "a/b/f", O_RDONLY));
  EXPECT_TRUE(OpenBeneath(root.get(), ".", O_RDONLY | O_DIRECTORY));
  EXPECT_FALSE(OpenBeneath(root.get(), "a/link/f", O_RDONLY));
  EXPECT_EQ(errno, ELOOP);
  EXPECT_FALSE(OpenBeneath(root.get(), "../etc/passwd", O_RDONLY));
  EXPECT_THROW(CheckRelativePath("a/../b"), Error);
  EXPECT_THROW(CheckRelativePath("/abs"), Error);
  EXPECT_NO_THROW(CheckRelativePath("a/b.c"));
  EXPECT_EQ(SplitParent("a/b/c"), (std::pair<std::string, std::string>{"a/b", "c"}));
  EXPECT_EQ(SplitParent("c"), (std::pair<std::string, std::string>{".", "c"}));
}

}  // namespace
}  // namespace sandboxd
