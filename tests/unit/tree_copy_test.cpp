// Copying and removing whole trees between directory fds (for commits through a landing area):
// what is copied and how faithfully, what is left out, what is never overwritten or followed,
// and what a removal takes with it.

#include "base/tree_copy.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/errors.h"
#include "unique_fd.h"
#include "base/tree_count.h"
#include "deep_tree.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::ScopedTempDir;
using testing::Exists;
using testing::Lstat;
using testing::TrustedXattrsWork;
using testing::WriteFile;

constexpr uid_t kNobody = 65534;

UniqueFd OpenDir(const std::string& path, int flags = O_RDONLY) {
  return UniqueFd(open(path.c_str(), flags | O_DIRECTORY | O_CLOEXEC));
}

mode_t ModeOf(const std::string& path) { return Lstat(path).st_mode & 07777; }

/// Gives the whole tree at `path` (the top included) to `uid`:`uid`, without following symlinks.
void ChownTree(const std::string& path, uid_t uid) {
  ASSERT_EQ(lchown(path.c_str(), uid, uid), 0);
  for (const auto& entry : fs::recursive_directory_iterator(path))
    ASSERT_EQ(lchown(entry.path().c_str(), uid, uid), 0) << entry.path();
}

/// Runs `body` in a child process that is uid and gid 65534 with no supplementary groups, and
/// returns its exit status: `body`'s return value (0 for success), 100 when the credentials
/// could not be dropped, 101 when `body` threw (the message goes to stderr).
int RunAsNobody(const std::function<int()>& body) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int code = 100;
    if (setgroups(0, nullptr) == 0 && setresgid(kNobody, kNobody, kNobody) == 0 &&
        setresuid(kNobody, kNobody, kNobody) == 0) {
      // A uid change makes the process non-dumpable; the helper (after its exec) is not.
      prctl(PR_SET_DUMPABLE, 1);
      try {
        code = body();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "as uid %u: %s\n", kNobody, e.what());
        code = 101;
      }
    }
    std::fflush(nullptr);
    _exit(code);
  }
  if (pid < 0) return 102;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 103;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 104;
}

/// A temp dir with "src" and "dst" beside each other, and fds to both.
class TreeCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    src_ = temp_ / "src";
    dst_ = temp_ / "dst";
    ASSERT_EQ(mkdir(src_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(dst_.c_str(), 0755), 0);
  }

  void Copy(const TreeCopyOptions& options = {}) {
    UniqueFd from = OpenDir(src_), to = OpenDir(dst_);
    ASSERT_TRUE(from && to);
    CopyTree(from.get(), to.get(), options);
  }

  ScopedTempDir temp_;
  std::string src_, dst_;
};

TEST_F(TreeCopyTest, CopiesNestedDirectoriesFilesSymlinksAndFifos) {
  ASSERT_EQ(mkdir((src_ + "/a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((src_ + "/a/b").c_str(), 0750), 0);
  WriteFile(src_ + "/top.txt", "top\n");
  WriteFile(src_ + "/a/b/deep.txt", "deep\n", 0640);
  ASSERT_EQ(mkdir((src_ + "/empty").c_str(), 0755), 0);
  ASSERT_EQ(symlink("/etc/passwd", (src_ + "/a/passwd").c_str()), 0);
  ASSERT_EQ(symlink("b/deep.txt", (src_ + "/a/rel").c_str()), 0);
  ASSERT_EQ(symlink("/nonexistent/dangling", (src_ + "/dangling").c_str()), 0);
  ASSERT_EQ(mkfifo((src_ + "/a/pipe").c_str(), 0600), 0);
  ASSERT_EQ(chmod((src_ + "/a/pipe").c_str(), 0620), 0);  // past the umask

  Copy();

  EXPECT_EQ(ReadFile(dst_ + "/top.txt"), "top\n");
  EXPECT_EQ(ReadFile(dst_ + "/a/b/deep.txt"), "deep\n");
  EXPECT_TRUE(S_ISDIR(Lstat(dst_ + "/a/b").st_mode));
  EXPECT_TRUE(S_ISDIR(Lstat(dst_ + "/empty").st_mode));
  // Symlinks are copied as symlinks with their targets, never followed.
  for (const auto& [name, target] : std::vector<std::pair<std::string, std::string>>{
           {"a/passwd", "/etc/passwd"}, {"a/rel", "b/deep.txt"}, {"dangling", "/nonexistent/dangling"}}) {
    ASSERT_TRUE(S_ISLNK(Lstat(dst_ + "/" + name).st_mode)) << name;
    std::error_code ec;
    EXPECT_EQ(fs::read_symlink(dst_ + "/" + name, ec).string(), target) << name;
  }
  struct stat pipe = Lstat(dst_ + "/a/pipe");
  EXPECT_TRUE(S_ISFIFO(pipe.st_mode));
  EXPECT_EQ(pipe.st_mode & 07777, 0620u);
  // The copy is a copy: a different inode.
  EXPECT_NE(Lstat(dst_ + "/top.txt").st_ino, Lstat(src_ + "/top.txt").st_ino);
}

TEST_F(TreeCopyTest, KeepsPermissionBitsIncludingSetuid) {
  WriteFile(src_ + "/suid", "#!/bin/sh\n", 04755);
  WriteFile(src_ + "/sgid", "x", 02750);
  WriteFile(src_ + "/private", "secret", 0600);
  ASSERT_EQ(mkdir((src_ + "/sticky").c_str(), 0755), 0);
  ASSERT_EQ(chmod((src_ + "/sticky").c_str(), 01777), 0);
  ASSERT_EQ(ModeOf(src_ + "/suid"), 04755u);

  Copy();

  EXPECT_EQ(ModeOf(dst_ + "/suid"), 04755u);
  EXPECT_EQ(ModeOf(dst_ + "/sgid"), 02750u);
  EXPECT_EQ(ModeOf(dst_ + "/private"), 0600u);
  EXPECT_EQ(ModeOf(dst_ + "/sticky"), 01777u);
}

TEST_F(TreeCopyTest, ReadOnlyDirectoryStillReceivesItsChildren) {
  ASSERT_EQ(mkdir((src_ + "/ro").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((src_ + "/ro/inner").c_str(), 0755), 0);
  WriteFile(src_ + "/ro/inner/f", "f\n");
  WriteFile(src_ + "/ro/g", "g\n");
  ASSERT_EQ(chmod((src_ + "/ro/inner").c_str(), 0555), 0);
  ASSERT_EQ(chmod((src_ + "/ro").c_str(), 0555), 0);

  Copy();

  EXPECT_EQ(ModeOf(dst_ + "/ro"), 0555u);
  EXPECT_EQ(ModeOf(dst_ + "/ro/inner"), 0555u);
  EXPECT_EQ(ReadFile(dst_ + "/ro/g"), "g\n");
  EXPECT_EQ(ReadFile(dst_ + "/ro/inner/f"), "f\n");
}

TEST_F(TreeCopyTest, KeepsModificationTimesOfFilesDirectoriesAndSymlinks) {
  ASSERT_EQ(mkdir((src_ + "/d").c_str(), 0755), 0);
  WriteFile(src_ + "/d/f", "content\n");
  ASSERT_EQ(symlink("f", (src_ + "/d/l").c_str()), 0);
  const timespec file_time{1000000000, 123456789}, link_time{1100000000, 5}, dir_time{1200000000, 987654321};
  timespec times[2] = {file_time, file_time};
  ASSERT_EQ(utimensat(AT_FDCWD, (src_ + "/d/f").c_str(), times, 0), 0);
  times[0] = times[1] = link_time;
  ASSERT_EQ(utimensat(AT_FDCWD, (src_ + "/d/l").c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
  // Last: the directory's time must survive its children being added in the copy.
  times[0] = times[1] = dir_time;
  ASSERT_EQ(utimensat(AT_FDCWD, (src_ + "/d").c_str(), times, 0), 0);

  Copy();

  struct stat file = Lstat(dst_ + "/d/f"), link = Lstat(dst_ + "/d/l"), dir = Lstat(dst_ + "/d");
  EXPECT_EQ(file.st_mtim.tv_sec, file_time.tv_sec);
  EXPECT_EQ(file.st_mtim.tv_nsec, file_time.tv_nsec);
  EXPECT_EQ(link.st_mtim.tv_sec, link_time.tv_sec);
  EXPECT_EQ(link.st_mtim.tv_nsec, link_time.tv_nsec);
  EXPECT_EQ(dir.st_mtim.tv_sec, dir_time.tv_sec);
  EXPECT_EQ(dir.st_mtim.tv_nsec, dir_time.tv_nsec);
}

TEST_F(TreeCopyTest, KeepsTwoNamesOfOneFileOneInode) {
  ASSERT_EQ(mkdir((src_ + "/sub").c_str(), 0755), 0);
  WriteFile(src_ + "/first", "shared\n");
  ASSERT_EQ(link((src_ + "/first").c_str(), (src_ + "/sub/second").c_str()), 0);
  WriteFile(src_ + "/alone", "alone\n");

  Copy();

  struct stat first = Lstat(dst_ + "/first"), second = Lstat(dst_ + "/sub/second");
  EXPECT_EQ(first.st_ino, second.st_ino);
  EXPECT_EQ(first.st_nlink, 2u);
  EXPECT_NE(first.st_ino, Lstat(src_ + "/first").st_ino);
  EXPECT_EQ(ReadFile(dst_ + "/sub/second"), "shared\n");
  EXPECT_EQ(Lstat(dst_ + "/alone").st_nlink, 1u);
}

// A commit's replaced and removed entries are two trees that may hold names of one file: one
// copy of both keeps them one file (the model test found an undo splitting such a file).
// A tree deeper than one syscall takes (30 levels of 200 bytes), with two names of one file at
// its bottom: copied whole, the names still one inode (the second is linked to the first copy
// by the first's directory, never by its whole path); and counted whole.
TEST_F(TreeCopyTest, CopiesAndCountsATreeDeeperThanPathMax) {
  constexpr int kDeep = 30;
  UniqueFd src = OpenDir(src_, O_PATH);
  UniqueFd bottom = testing::MakeDeepDirs(src.get(), kDeep);
  ASSERT_TRUE(bottom);
  {
    UniqueFd file(openat(bottom.get(), "one", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    ASSERT_EQ(write(file.get(), "deep\n", 5), 5);
  }
  ASSERT_EQ(linkat(bottom.get(), "one", bottom.get(), "two", 0), 0);

  TreeCount count = CountTree(src_);
  EXPECT_EQ(count.entries, static_cast<uint64_t>(1 + kDeep + 2));
  EXPECT_EQ(count.bytes, 10u);
  ASSERT_NO_FATAL_FAILURE(Copy());
  UniqueFd dst = OpenDir(dst_, O_PATH);
  UniqueFd copied = testing::OpenDeepDirs(dst.get(), kDeep);
  ASSERT_TRUE(copied) << "the levels were not all copied";
  EXPECT_EQ(testing::ReadAt(copied.get(), "two"), "deep\n");
  struct stat one, two;
  ASSERT_EQ(fstatat(copied.get(), "one", &one, AT_SYMLINK_NOFOLLOW), 0);
  ASSERT_EQ(fstatat(copied.get(), "two", &two, AT_SYMLINK_NOFOLLOW), 0);
  EXPECT_EQ(one.st_ino, two.st_ino);
}

TEST_F(TreeCopyTest, SeveralTreesCopiedAsOneKeepNamesOfOneFileAcrossThemOneInode) {
  std::string src2 = temp_ / "src2", dst2 = temp_ / "dst2";
  ASSERT_EQ(mkdir(src2.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(dst2.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((src2 + "/sub").c_str(), 0755), 0);
  WriteFile(src_ + "/replaced", "shared\n");
  ASSERT_EQ(link((src_ + "/replaced").c_str(), (src2 + "/sub/removed").c_str()), 0);
  UniqueFd from = OpenDir(src_), to = OpenDir(dst_), from2 = OpenDir(src2), to2 = OpenDir(dst2);
  ASSERT_TRUE(from && to && from2 && to2);
  CopyTrees({{from.get(), to.get()}, {from2.get(), to2.get()}});
  struct stat replaced = Lstat(dst_ + "/replaced"), removed = Lstat(dst2 + "/sub/removed");
  EXPECT_EQ(replaced.st_ino, removed.st_ino) << "one file became two copies";
  EXPECT_EQ(ReadFile(dst2 + "/sub/removed"), "shared\n");
}

TEST_F(TreeCopyTest, LeavesOutWhiteoutsSocketsAndDeviceNodes) {
  if (geteuid() != 0) GTEST_SKIP() << "device nodes need root";
  WriteFile(src_ + "/kept", "kept\n");
  ASSERT_EQ(mknod((src_ + "/whiteout").c_str(), S_IFCHR | 0, makedev(0, 0)), 0);
  ASSERT_EQ(mknod((src_ + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  ASSERT_EQ(mknod((src_ + "/loop").c_str(), S_IFBLK | 0660, makedev(7, 0)), 0);
  UniqueFd sock(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(sock);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::string sock_path = src_ + "/sock";
  ASSERT_LT(sock_path.size(), sizeof address.sun_path);
  std::strcpy(address.sun_path, sock_path.c_str());
  ASSERT_EQ(bind(sock.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_TRUE(S_ISSOCK(Lstat(sock_path).st_mode));

  Copy();

  EXPECT_EQ(ReadFile(dst_ + "/kept"), "kept\n");
  for (const char* name : {"whiteout", "null", "loop", "sock"}) EXPECT_FALSE(Exists(dst_ + "/" + name)) << name;
}

TEST_F(TreeCopyTest, CopiesOwnUnreadableFileAsNonRootAndKeepsItUnreadable) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to uid 65534";
  WriteFile(src_ + "/locked", "not for anyone's eyes\n", 0644);
  ASSERT_EQ(chmod((src_ + "/locked").c_str(), 0), 0);
  ChownTree(temp_.path(), kNobody);

  const std::string src = src_, dst = dst_;
  int status = RunAsNobody([&] {
    // First make sure the file is really unreadable to this uid.
    if (UniqueFd(open((src + "/locked").c_str(), O_RDONLY | O_CLOEXEC)) || errno != EACCES) return 1;
    UniqueFd from = OpenDir(src), to = OpenDir(dst);
    if (!from || !to) return 2;
    CopyTree(from.get(), to.get());
    return 0;
  });
  ASSERT_EQ(status, 0);

  EXPECT_EQ(ReadFile(dst_ + "/locked"), "not for anyone's eyes\n");
  EXPECT_EQ(ModeOf(dst_ + "/locked"), 0u);
  EXPECT_EQ(ModeOf(src_ + "/locked"), 0u) << "the original must get its mode back";
  EXPECT_EQ(Lstat(dst_ + "/locked").st_uid, kNobody);
}

// A job may chmod 000 a directory of its own with files in it, and the helper copies stages
// and backups as the owner (LandingArea::Fill, Import): the directory must stay searchable
// until its children are copied, not only while it is opened, and get its mode back after.
TEST_F(TreeCopyTest, CopiesOwnUnsearchableDirectoryWithChildrenAsNonRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to uid 65534";
  ASSERT_EQ(mkdir((src_ + "/closed").c_str(), 0755), 0);
  WriteFile(src_ + "/closed/inside", "inside\n");
  ASSERT_EQ(chmod((src_ + "/closed").c_str(), 0), 0);
  ChownTree(temp_.path(), kNobody);

  const std::string src = src_, dst = dst_;
  int status = RunAsNobody([&] {
    UniqueFd from = OpenDir(src), to = OpenDir(dst);
    if (!from || !to) return 2;
    CopyTree(from.get(), to.get());
    return 0;
  });
  ASSERT_EQ(status, 0) << "CopyTree as the owner failed (101: it threw, see stderr)";

  EXPECT_EQ(ReadFile(dst_ + "/closed/inside"), "inside\n");
  EXPECT_EQ(ModeOf(dst_ + "/closed"), 0u);
  EXPECT_EQ(ModeOf(src_ + "/closed"), 0u);
}

TEST_F(TreeCopyTest, KeepOwnerGivesCopiesTheirOriginalsOwners) {
  if (geteuid() != 0) GTEST_SKIP() << "chown needs root";
  ASSERT_EQ(mkdir((src_ + "/d").c_str(), 0755), 0);
  WriteFile(src_ + "/d/f", "f\n");
  WriteFile(src_ + "/suid", "s\n");
  ASSERT_EQ(symlink("d/f", (src_ + "/l").c_str()), 0);
  ASSERT_EQ(mkfifo((src_ + "/p").c_str(), 0600), 0);
  for (const char* name : {"d", "d/f", "suid", "l", "p"}) ASSERT_EQ(lchown((src_ + "/" + name).c_str(), 1234, 5678), 0);
  ASSERT_EQ(chmod((src_ + "/suid").c_str(), 04755), 0);

  Copy({.keep_owner = true});

  for (const char* name : {"d", "d/f", "suid", "l", "p"}) {
    struct stat st = Lstat(dst_ + "/" + name);
    EXPECT_EQ(st.st_uid, 1234u) << name;
    EXPECT_EQ(st.st_gid, 5678u) << name;
  }
  // chown clears setuid: the mode must be set after the owner.
  EXPECT_EQ(ModeOf(dst_ + "/suid"), 04755u);
}

TEST_F(TreeCopyTest, WithoutKeepOwnerCopiesBelongToTheCaller) {
  if (geteuid() != 0) GTEST_SKIP() << "chown needs root";
  ASSERT_EQ(mkdir((src_ + "/d").c_str(), 0755), 0);
  WriteFile(src_ + "/d/f", "f\n");
  ASSERT_EQ(symlink("d/f", (src_ + "/l").c_str()), 0);
  for (const char* name : {"d", "d/f", "l"}) ASSERT_EQ(lchown((src_ + "/" + name).c_str(), 1234, 5678), 0);

  Copy();

  for (const char* name : {"d", "d/f", "l"}) {
    struct stat st = Lstat(dst_ + "/" + name);
    EXPECT_EQ(st.st_uid, geteuid()) << name;
    EXPECT_EQ(st.st_gid, getegid()) << name;
  }
}

std::string OriginOf(const std::string& path) {
  char value[64];
  ssize_t size = lgetxattr(path.c_str(), kOriginAttribute, value, sizeof value);
  if (size < 0) return std::string("<") + strerror(errno) + ">";
  return std::string(value, static_cast<size_t>(size));
}

TEST_F(TreeCopyTest, RecordOriginMarksEachCopyWithItsOriginalsInode) {
  if (geteuid() != 0) GTEST_SKIP() << "trusted xattrs need root";
  if (!TrustedXattrsWork(temp_.path())) GTEST_SKIP() << "no trusted xattrs on this file system";
  ASSERT_EQ(mkdir((src_ + "/d").c_str(), 0755), 0);
  WriteFile(src_ + "/d/f", "f\n");
  WriteFile(src_ + "/suid", "s\n", 04755);
  ASSERT_EQ(symlink("d", (src_ + "/l").c_str()), 0);

  Copy({.record_origin = true});

  for (const char* name : {"d", "d/f", "suid", "l"})
    EXPECT_EQ(OriginOf(dst_ + "/" + name), std::to_string(Lstat(src_ + "/" + name).st_ino)) << name;
  // Setting the attribute must not cost the file its setuid bit.
  EXPECT_EQ(ModeOf(dst_ + "/suid"), 04755u);
}

TEST_F(TreeCopyTest, WithoutRecordOriginCopiesCarryNoOrigin) {
  if (geteuid() != 0) GTEST_SKIP() << "trusted xattrs need root";
  if (!TrustedXattrsWork(temp_.path())) GTEST_SKIP() << "no trusted xattrs on this file system";
  WriteFile(src_ + "/f", "f\n");

  Copy();

  char value[64];
  EXPECT_LT(lgetxattr((dst_ + "/f").c_str(), kOriginAttribute, value, sizeof value), 0);
  EXPECT_EQ(errno, ENODATA);
}

TEST_F(TreeCopyTest, CopiesLargeSparseFileWithIdenticalContent) {
  constexpr off_t kSize = off_t{64} << 20;
  {
    UniqueFd big(open((src_ + "/big").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    ASSERT_TRUE(big);
    ASSERT_EQ(ftruncate(big.get(), kSize), 0);
    const std::string pieces[] = {"start", "a bit past one MiB", "the middle", "the end"};
    const off_t offsets[] = {0, (off_t{1} << 20) + 7, off_t{33} << 20, kSize - 7};
    for (size_t i = 0; i < 4; ++i) {
      std::string piece = pieces[i].substr(0, static_cast<size_t>(std::min<off_t>(pieces[i].size(), kSize - offsets[i])));
      ASSERT_EQ(pwrite(big.get(), piece.data(), piece.size(), offsets[i]), static_cast<ssize_t>(piece.size()));
    }
  }

  Copy();

  ASSERT_EQ(Lstat(dst_ + "/big").st_size, kSize);
  UniqueFd a(open((src_ + "/big").c_str(), O_RDONLY | O_CLOEXEC)), b(open((dst_ + "/big").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(a && b);
  std::vector<char> chunk_a(1 << 20), chunk_b(1 << 20);
  off_t offset = 0;
  for (;;) {
    ssize_t got_a = pread(a.get(), chunk_a.data(), chunk_a.size(), offset);
    ssize_t got_b = pread(b.get(), chunk_b.data(), chunk_b.size(), offset);
    ASSERT_EQ(got_a, got_b) << "at offset " << offset;
    ASSERT_GE(got_a, 0);
    if (got_a == 0) break;
    ASSERT_EQ(std::memcmp(chunk_a.data(), chunk_b.data(), static_cast<size_t>(got_a)), 0) << "at offset " << offset;
    offset += got_a;
  }
  EXPECT_EQ(offset, kSize);
}

TEST_F(TreeCopyTest, RefusesToOverwriteANameInTheTarget) {
  WriteFile(src_ + "/a.txt", "new\n");
  WriteFile(dst_ + "/a.txt", "old\n");

  EXPECT_THROW(Copy(), Error);
  EXPECT_EQ(ReadFile(dst_ + "/a.txt"), "old\n");
}

TEST_F(TreeCopyTest, RefusesToMergeIntoAnExistingDirectory) {
  ASSERT_EQ(mkdir((src_ + "/d").c_str(), 0755), 0);
  WriteFile(src_ + "/d/f", "new\n");
  ASSERT_EQ(mkdir((dst_ + "/d").c_str(), 0755), 0);

  EXPECT_THROW(Copy(), Error);
  EXPECT_FALSE(Exists(dst_ + "/d/f"));
}

TEST_F(TreeCopyTest, NeverWritesThroughASymlinkAtATargetName) {
  WriteFile(src_ + "/a.txt", "new\n");
  WriteFile(temp_ / "outside.txt", "outside\n");
  ASSERT_EQ(symlink((temp_ / "outside.txt").c_str(), (dst_ + "/a.txt").c_str()), 0);

  EXPECT_THROW(Copy(), Error);
  EXPECT_EQ(ReadFile(temp_ / "outside.txt"), "outside\n");
  EXPECT_TRUE(S_ISLNK(Lstat(dst_ + "/a.txt").st_mode));
}

TEST_F(TreeCopyTest, CopyFileContentCopiesFromCurrentOffsets) {
  WriteFile(src_ + "/f", std::string(200000, 'x') + "tail");
  UniqueFd from(open((src_ + "/f").c_str(), O_RDONLY | O_CLOEXEC));
  UniqueFd to(open((dst_ + "/f").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  ASSERT_TRUE(from && to);
  CopyFileContent(from.get(), to.get(), "f");
  EXPECT_EQ(ReadFile(dst_ + "/f"), std::string(200000, 'x') + "tail");
}

class RemoveTreeAtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    parent_ = OpenDir(temp_.path());
    ASSERT_TRUE(parent_);
  }

  ScopedTempDir temp_;
  UniqueFd parent_;
};

TEST_F(RemoveTreeAtTest, RemovesNestedTreeWithUnreadableDirectory) {
  std::string top = temp_ / "top";
  ASSERT_EQ(mkdir(top.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((top + "/a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((top + "/a/closed").c_str(), 0755), 0);
  WriteFile(top + "/a/closed/f", "f\n");
  ASSERT_EQ(mkdir((top + "/a/closed/inner").c_str(), 0755), 0);
  WriteFile(top + "/a/g", "g\n", 0);
  ASSERT_EQ(symlink("g", (top + "/a/l").c_str()), 0);
  ASSERT_EQ(mkfifo((top + "/p").c_str(), 0600), 0);
  ASSERT_EQ(chmod((top + "/a/closed/inner").c_str(), 0), 0);
  ASSERT_EQ(chmod((top + "/a/closed").c_str(), 0), 0);
  ASSERT_EQ(chmod((top + "/a").c_str(), 0555), 0);

  RemoveTreeAt(parent_.get(), "top", "top");

  EXPECT_FALSE(Exists(top));
}

TEST_F(RemoveTreeAtTest, RemovesOwnUnreadableDirectoriesAsNonRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to uid 65534";
  std::string top = temp_ / "top";
  ASSERT_EQ(mkdir(top.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((top + "/closed").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((top + "/closed/inner").c_str(), 0755), 0);
  WriteFile(top + "/closed/inner/f", "f\n", 0);
  ASSERT_EQ(mkdir((top + "/readonly").c_str(), 0755), 0);
  WriteFile(top + "/readonly/g", "g\n");
  ChownTree(temp_.path(), kNobody);
  ASSERT_EQ(chmod((top + "/closed/inner").c_str(), 0), 0);
  ASSERT_EQ(chmod((top + "/closed").c_str(), 0), 0);
  ASSERT_EQ(chmod((top + "/readonly").c_str(), 0555), 0);

  const std::string path = temp_.path();
  int status = RunAsNobody([&] {
    UniqueFd parent = OpenDir(path);
    if (!parent) return 2;
    RemoveTreeAt(parent.get(), "top", "top");
    return 0;
  });
  ASSERT_EQ(status, 0);
  EXPECT_FALSE(Exists(top));
}

TEST_F(RemoveTreeAtTest, MissingNameIsFine) {
  EXPECT_NO_THROW(RemoveTreeAt(parent_.get(), "not-there", "not-there"));
}

TEST_F(RemoveTreeAtTest, RemovesRegularFileAndFifo) {
  WriteFile(temp_ / "f", "f\n");
  ASSERT_EQ(mkfifo((temp_ / "p").c_str(), 0600), 0);
  RemoveTreeAt(parent_.get(), "f", "f");
  RemoveTreeAt(parent_.get(), "p", "p");
  EXPECT_FALSE(Exists(temp_ / "f"));
  EXPECT_FALSE(Exists(temp_ / "p"));
}

TEST_F(RemoveTreeAtTest, RemovesSymlinkItselfNotTheDirectoryItPointsTo) {
  std::string outside = temp_ / "outside";
  ASSERT_EQ(mkdir(outside.c_str(), 0755), 0);
  WriteFile(outside + "/keep.txt", "keep\n");
  ASSERT_EQ(mkdir((outside + "/sub").c_str(), 0755), 0);
  std::string tree = temp_ / "tree";
  ASSERT_EQ(mkdir(tree.c_str(), 0755), 0);
  ASSERT_EQ(symlink(outside.c_str(), (tree + "/escape").c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), (temp_ / "direct").c_str()), 0);

  // Both as the top name and inside a tree being removed.
  RemoveTreeAt(parent_.get(), "direct", "direct");
  RemoveTreeAt(parent_.get(), "tree", "tree");

  EXPECT_FALSE(Exists(temp_ / "direct"));
  EXPECT_FALSE(Exists(tree));
  EXPECT_EQ(ReadFile(outside + "/keep.txt"), "keep\n");
  EXPECT_TRUE(Exists(outside + "/sub"));
  EXPECT_EQ(ModeOf(outside), 0755u);
}

}  // namespace
}  // namespace sandboxd
