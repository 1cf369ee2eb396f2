// An upper layer as one tar.zst archive (suspend and resume): every kind of entry an overlay
// upper can hold comes back exactly (types, modes, owners, times, attributes, hard links,
// sparse data), the archive is private and never overwrites anything, and an archive that
// tries to write outside the layer (absolute names, "..", paths through symlinks) is refused
// without writing there.

#include "archive/upper_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/errors.h"
#include "unique_fd.h"
#include "base/process.h"
#include "deep_tree.h"
#include "temp_dir.h"
#include "built_program.h"

namespace sandboxd {
namespace {

using testing::MakeDeepDirs;
using testing::OpenDeepDirs;
using testing::ReadAt;
using testing::ReadFile;
using testing::ScopedTempDir;
using testing::Exists;
using testing::Lstat;
using testing::TrustedXattrsWork;
using testing::WriteFile;

/// The names in directory `path`, without "." and "..", sorted.
std::vector<std::string> Children(const std::string& path) {
  std::vector<std::string> names;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(path.c_str()), closedir);
  if (!dir) {
    ADD_FAILURE() << "cannot open directory " << path << ": " << strerror(errno);
    return names;
  }
  while (struct dirent* entry = readdir(dir.get())) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// Printable bytes: anything outside printable ASCII (a NUL included) as \xNN.
std::string Escape(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

/// All extended attributes of `path` (not followed), sorted by name: "name=value;...".
std::string XattrsOf(const std::string& path) {
  ssize_t size = llistxattr(path.c_str(), nullptr, 0);
  if (size < 0) return std::string("<llistxattr: ") + strerror(errno) + ">";
  std::string names(static_cast<size_t>(size), '\0');
  size = llistxattr(path.c_str(), names.data(), names.size());
  if (size < 0) return std::string("<llistxattr: ") + strerror(errno) + ">";
  names.resize(static_cast<size_t>(size));
  std::vector<std::string> sorted;
  for (size_t start = 0; start < names.size();) {
    size_t end = names.find('\0', start);
    if (end == std::string::npos) end = names.size();
    if (end > start) sorted.push_back(names.substr(start, end - start));
    start = end + 1;
  }
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (const std::string& name : sorted) {
    ssize_t length = lgetxattr(path.c_str(), name.c_str(), nullptr, 0);
    std::string value(length > 0 ? static_cast<size_t>(length) : 0, '\0');
    if (length > 0) length = lgetxattr(path.c_str(), name.c_str(), value.data(), value.size());
    if (length < 0) {
      out += name + "=<" + strerror(errno) + ">;";
      continue;
    }
    value.resize(static_cast<size_t>(length));
    out += name + "=" + Escape(value) + ";";
  }
  return out;
}

/// A regular file's content, read in chunks: its length, an FNV-1a hash of all of it, and the
/// bytes themselves when there are few (so a 32 MiB file does not end up in a failure message).
std::string ContentOf(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return std::string("<open: ") + strerror(errno) + ">";
  uint64_t hash = 14695981039346656037ull;
  uint64_t length = 0;
  std::string head;
  std::vector<char> chunk(1 << 16);
  for (;;) {
    ssize_t got = read(fd.get(), chunk.data(), chunk.size());
    if (got < 0) return std::string("<read: ") + strerror(errno) + ">";
    if (got == 0) break;
    for (ssize_t i = 0; i < got; ++i) {
      hash ^= static_cast<unsigned char>(chunk[i]);
      hash *= 1099511628211ull;
    }
    if (head.size() < 64) head.append(chunk.data(), std::min<size_t>(static_cast<size_t>(got), 64 - head.size()));
    length += static_cast<uint64_t>(got);
  }
  return "length=" + std::to_string(length) + " fnv=" + std::to_string(hash) + (length <= 64 ? " data=" + Escape(head) : "");
}

void Collect(const std::string& root, const std::string& relative, std::map<std::string, struct stat>& out) {
  const std::string path = relative == "." ? root : root + "/" + relative;
  struct stat st = Lstat(path);
  out[relative] = st;
  if (!S_ISDIR(st.st_mode)) return;
  for (const std::string& name : Children(path)) Collect(root, relative == "." ? name : relative + "/" + name, out);
}

/// Relative path ("." for the top) -> everything a round trip must keep about that entry. Hard
/// links are described by the other names of the same inode within the tree (inode numbers
/// themselves differ between two trees).
std::map<std::string, std::string> DescribeTree(const std::string& root) {
  std::map<std::string, struct stat> entries;
  Collect(root, ".", entries);
  std::map<std::pair<dev_t, ino_t>, std::vector<std::string>> names_of_inode;
  for (const auto& [relative, st] : entries)
    if (!S_ISDIR(st.st_mode)) names_of_inode[{st.st_dev, st.st_ino}].push_back(relative);

  std::map<std::string, std::string> description;
  for (const auto& [relative, st] : entries) {
    const std::string path = relative == "." ? root : root + "/" + relative;
    std::string d;
    switch (st.st_mode & S_IFMT) {
      case S_IFDIR: d = "dir"; break;
      case S_IFREG: d = "file"; break;
      case S_IFLNK: d = "symlink"; break;
      case S_IFIFO: d = "fifo"; break;
      case S_IFCHR: d = "chardev"; break;
      case S_IFBLK: d = "blockdev"; break;
      case S_IFSOCK: d = "socket"; break;
      default: d = "unknown"; break;
    }
    char mode[16];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    d += std::string(" mode=") + mode + " uid=" + std::to_string(st.st_uid) + " gid=" + std::to_string(st.st_gid);
    if (S_ISREG(st.st_mode)) d += " size=" + std::to_string(st.st_size) + " " + ContentOf(path);
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t length = readlink(path.c_str(), target, sizeof target);
      d += " target=" + (length < 0 ? std::string("<error>") : std::string(target, static_cast<size_t>(length)));
    }
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
      d += " rdev=" + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
      d += " mtime=" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
    if (!S_ISDIR(st.st_mode)) {
      // nlink as well: a name outside the tree would show as a count above the names listed.
      d += " nlink=" + std::to_string(st.st_nlink);
      const auto& names = names_of_inode[{st.st_dev, st.st_ino}];
      if (names.size() > 1) {
        d += " same-inode-as=";
        for (const std::string& name : names) d += name + ",";
      }
    }
    d += " xattrs=" + XattrsOf(path);
    description[relative] = d;
  }
  return description;
}

void SetTimes(const std::string& path, time_t seconds, long nanoseconds) {
  const timespec times[2] = {{seconds, nanoseconds}, {seconds, nanoseconds}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path << ": " << strerror(errno);
}

void SetXattr(const std::string& path, const std::string& name, const std::string& value) {
  ASSERT_EQ(lsetxattr(path.c_str(), name.c_str(), value.data(), value.size(), 0), 0)
      << name << " on " << path << ": " << strerror(errno);
}

void Pwrite(const std::string& path, const std::string& data, off_t offset) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  ASSERT_TRUE(fd) << path << ": " << strerror(errno);
  ASSERT_EQ(pwrite(fd.get(), data.data(), data.size(), offset), static_cast<ssize_t>(data.size()));
}

/// `sandboxd-archive-helper ARGS...`, run to its end.
RunResult RunArchiveHelper(const std::vector<std::string>& args) {
  SpawnOptions options;
  options.path = testing::ArchiveHelperProgram();
  options.argv = {options.path};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.umask = 077;  // as sandboxd starts it
  return RunAndCapture(options, "");
}

/// A security.capability value (VFS_CAP_REVISION_2) granting `capability`, permitted.
std::string FileCapability(int capability) {
  uint32_t words[5] = {VFS_CAP_REVISION_2, uint32_t{1} << capability, 0, 0, 0};
  return std::string(reinterpret_cast<const char*>(words), sizeof words);
}

/// One entry of an archive built by hand, as a hostile or broken archive would hold it.
struct RawEntry {
  std::string name;
  mode_t type = AE_IFREG;
  std::string content;   ///< regular files
  std::string symlink;   ///< AE_IFLNK: its target
  std::string hardlink;  ///< a hard link to this earlier name instead
};

RawEntry File(const std::string& name, const std::string& content) {
  RawEntry entry;
  entry.name = name;
  entry.content = content;
  return entry;
}
RawEntry Dir(const std::string& name) {
  RawEntry entry;
  entry.name = name;
  entry.type = AE_IFDIR;
  return entry;
}
RawEntry Symlink(const std::string& name, const std::string& target) {
  RawEntry entry;
  entry.name = name;
  entry.type = AE_IFLNK;
  entry.symlink = target;
  return entry;
}
RawEntry HardLink(const std::string& name, const std::string& target) {
  RawEntry entry;
  entry.name = name;
  entry.hardlink = target;
  return entry;
}

/// Writes `entries` as a pax tar.zst at `path`, the format WriteUpperArchive writes.
void WriteRawArchive(const std::string& path, const std::vector<RawEntry>& entries) {
  std::unique_ptr<struct archive, int (*)(struct archive*)> out(archive_write_new(), archive_write_free);
  ASSERT_TRUE(out);
  ASSERT_EQ(archive_write_add_filter_zstd(out.get()), ARCHIVE_OK) << archive_error_string(out.get());
  ASSERT_EQ(archive_write_set_format_pax_restricted(out.get()), ARCHIVE_OK);
  ASSERT_EQ(archive_write_open_filename(out.get(), path.c_str()), ARCHIVE_OK) << archive_error_string(out.get());
  for (const RawEntry& raw : entries) {
    std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)> entry(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(entry.get(), raw.name.c_str());
    archive_entry_set_filetype(entry.get(), raw.type);
    archive_entry_set_perm(entry.get(), raw.type == AE_IFDIR ? 0755 : 0644);
    archive_entry_set_mtime(entry.get(), 1600000000, 0);
    // Owned by whoever runs the test, so that a restore as any user gets as far as the entry
    // each test is about (only root may restore another owner's entry).
    archive_entry_set_uid(entry.get(), geteuid());
    archive_entry_set_gid(entry.get(), getegid());
    if (!raw.hardlink.empty()) archive_entry_set_hardlink(entry.get(), raw.hardlink.c_str());
    if (raw.type == AE_IFLNK) archive_entry_set_symlink(entry.get(), raw.symlink.c_str());
    if (raw.type == AE_IFREG && raw.hardlink.empty()) archive_entry_set_size(entry.get(), static_cast<la_int64_t>(raw.content.size()));
    ASSERT_EQ(archive_write_header(out.get(), entry.get()), ARCHIVE_OK) << raw.name << ": " << archive_error_string(out.get());
    if (!raw.content.empty() && raw.hardlink.empty()) {
      ASSERT_EQ(archive_write_data(out.get(), raw.content.data(), raw.content.size()), static_cast<la_ssize_t>(raw.content.size()));
    }
  }
  ASSERT_EQ(archive_write_close(out.get()), ARCHIVE_OK) << archive_error_string(out.get());
}

/// Expects ExtractUpperArchive to throw Error with a message naming `entry`.
void ExpectExtractRefused(const std::string& archive, const std::string& upper, const std::string& entry) {
  try {
    ExtractUpperArchive(archive, upper);
    ADD_FAILURE() << "extracting " << archive << " did not throw (entry " << entry << ")";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(entry), std::string::npos) << "the message does not name the entry: " << e.what();
  }
}

/// A temp dir with "src" (an upper to archive), "dst" (an empty directory to restore into) and
/// "archives" beside each other.
class UpperArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    src_ = temp_ / "src";
    dst_ = temp_ / "dst";
    archives_ = temp_ / "archives";
    ASSERT_EQ(mkdir(src_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(dst_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(archives_.c_str(), 0755), 0);
    archive_ = archives_ + "/upper.tar.zst";
  }

  /// Fills src_ with every kind of entry an upper layer holds (root only): odd modes and
  /// owners, setuid and setgid, overlayfs's trusted.* marks, whiteouts, a fifo, a dangling
  /// symlink, hard links, a sparse file, times with nanoseconds.
  void MakeEveryKindOfEntry() {
    // Directories with odd modes; the setgid one gets children (which inherit its group on
    // creation, so the restored owner must be set explicitly).
    ASSERT_EQ(mkdir((src_ + "/private").c_str(), 0700), 0);
    ASSERT_EQ(mkdir((src_ + "/sticky").c_str(), 0755), 0);
    ASSERT_EQ(chmod((src_ + "/sticky").c_str(), 01777), 0);
    ASSERT_EQ(mkdir((src_ + "/setgid").c_str(), 0750), 0);
    ASSERT_EQ(lchown((src_ + "/setgid").c_str(), 0, 4321), 0);
    ASSERT_EQ(chmod((src_ + "/setgid").c_str(), 02750), 0);
    ASSERT_EQ(mkdir((src_ + "/private/nested").c_str(), 0755), 0);
    WriteFile(src_ + "/private/nested/deep.txt", "deep\n", 0640);
    ASSERT_EQ(mkdir((src_ + "/empty").c_str(), 0755), 0);

    // An opaque directory (it hides the lower's) and a redirected one, as overlayfs marks them.
    ASSERT_EQ(mkdir((src_ + "/opaque").c_str(), 0755), 0);
    SetXattr(src_ + "/opaque", "trusted.overlay.opaque", "y");
    WriteFile(src_ + "/opaque/inside", "inside\n");
    ASSERT_EQ(mkdir((src_ + "/renamed").c_str(), 0755), 0);
    SetXattr(src_ + "/renamed", "trusted.overlay.redirect", "/old-name");

    // A setuid file with another owner, a user attribute and a binary origin (a NUL inside).
    WriteFile(src_ + "/suid", "#!/bin/sh\necho hi\n", 0644);
    ASSERT_EQ(lchown((src_ + "/suid").c_str(), 1234, 5678), 0);
    ASSERT_EQ(chmod((src_ + "/suid").c_str(), 04755), 0);  // after chown, which clears setuid
    SetXattr(src_ + "/suid", "user.note", "hi");
    const std::string origin("\x00\xfb\x21\x01\x00\xff\x7f\x80 binary\x00", 17);
    SetXattr(src_ + "/suid", "trusted.overlay.origin", origin);

    WriteFile(src_ + "/empty-file", "", 0600);
    ASSERT_EQ(symlink("../elsewhere", (src_ + "/dangling").c_str()), 0);
    ASSERT_EQ(lchown((src_ + "/dangling").c_str(), 1234, 5678), 0);
    ASSERT_EQ(mkfifo((src_ + "/pipe").c_str(), 0640), 0);
    ASSERT_EQ(chmod((src_ + "/pipe").c_str(), 0640), 0);  // past the umask
    // A whiteout: a character device 0/0 (a deleted lower file).
    ASSERT_EQ(mknod((src_ + "/whiteout").c_str(), S_IFCHR | 0, makedev(0, 0)), 0);
    ASSERT_EQ(mknod((src_ + "/opaque/gone").c_str(), S_IFCHR | 0, makedev(0, 0)), 0);

    // Three names of one inode, one of them in another (setgid) directory.
    WriteFile(src_ + "/linked", "shared content\n", 0664);
    ASSERT_EQ(lchown((src_ + "/linked").c_str(), 2000, 2001), 0);
    ASSERT_EQ(link((src_ + "/linked").c_str(), (src_ + "/linked-too").c_str()), 0);
    ASSERT_EQ(link((src_ + "/linked").c_str(), (src_ + "/setgid/third-name").c_str()), 0);
    WriteFile(src_ + "/setgid/own", "own\n");

    // 32 MiB, mostly holes, with data at the start, in the middle (across a block boundary) and
    // in its very last bytes.
    const std::string big = src_ + "/big.img";
    {
      UniqueFd fd(open(big.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
      ASSERT_TRUE(fd);
      ASSERT_EQ(ftruncate(fd.get(), 32 << 20), 0);
    }
    Pwrite(big, "start of the image", 0);
    Pwrite(big, std::string(10000, 'm'), (13 << 20) + 4090);
    Pwrite(big, "the end", (32 << 20) - 7);

    // Times last (children change their directory's), with nanoseconds that a seconds-only
    // format would lose.
    SetTimes(big, 1500000000, 111111111);
    SetTimes(src_ + "/suid", 1500000001, 222222222);
    SetTimes(src_ + "/linked", 1500000002, 333333333);
    SetTimes(src_ + "/private/nested/deep.txt", 1500000003, 444444444);
    SetTimes(src_ + "/private/nested", 1500000004, 555555555);
    SetTimes(src_ + "/private", 1500000005, 666666666);
    SetTimes(src_ + "/setgid", 1500000006, 777777777);
    SetTimes(src_ + "/opaque", 1500000007, 888888888);
    SetTimes(src_ + "/empty", 1500000008, 999999999);

    // The top: the sandbox root's mode and owner, kept as entry ".".
    ASSERT_EQ(chmod(src_.c_str(), 0750), 0);
    ASSERT_EQ(lchown(src_.c_str(), 1000, 1000), 0);
    SetTimes(src_, 1500000009, 123456789);
  }

  /// Expects dst_ to be `before`, entry by entry.
  void ExpectRestoredAs(const std::map<std::string, std::string>& before) {
    const auto after = DescribeTree(dst_);
    EXPECT_EQ(after.size(), before.size());
    for (const auto& [relative, description] : before) {
      auto found = after.find(relative);
      if (found == after.end()) {
        ADD_FAILURE() << "missing after the round trip: " << relative << " (" << description << ")";
        continue;
      }
      EXPECT_EQ(found->second, description) << relative;
    }
    for (const auto& [relative, description] : after)
      if (!before.count(relative)) ADD_FAILURE() << "appeared in the round trip: " << relative << " (" << description << ")";
  }

  ScopedTempDir temp_;
  std::string src_, dst_, archives_, archive_;
};

TEST_F(UpperArchiveTest, RoundTripKeepsEveryKindOfUpperEntryExactly) {
  if (geteuid() != 0) GTEST_SKIP() << "owners, whiteouts and trusted xattrs need root";
  if (!TrustedXattrsWork(temp_.path())) GTEST_SKIP() << "no trusted xattrs on this file system";

  MakeEveryKindOfEntry();
  const auto before = DescribeTree(src_);
  ASSERT_EQ(Lstat(src_ + "/big.img").st_size, 32 << 20);

  ArchiveStats written, extracted;
  ASSERT_NO_THROW(written = WriteUpperArchive(src_, archive_, 3));
  ASSERT_NO_THROW(extracted = ExtractUpperArchive(archive_, dst_));

  ExpectRestoredAs(before);

  // One archive entry per name (the top and every hard link name included).
  EXPECT_EQ(written.entries, before.size());
  EXPECT_EQ(extracted.entries, written.entries);
  struct stat archive = Lstat(archive_);
  EXPECT_EQ(written.bytes, static_cast<uint64_t>(archive.st_size));
  EXPECT_EQ(extracted.bytes, written.bytes);
  // The holes stay holes in the archive: far below the 32 MiB the file claims.
  EXPECT_LT(archive.st_size, 1 << 20);
}

// Suspend archives a layer and resume restores it as its owner writes (archive_helper_main.cpp):
// with the owner's file-system identity and a few of root's capabilities, never
// CAP_SYS_RESOURCE, so that the blocks they take are the owner's. Those few must still read and
// bring back every kind of entry exactly: others' files and directories, setuid and setgid
// bits, trusted.* marks, whiteouts, and what copy-ups bring up besides (a device, a file with
// capabilities).
TEST_F(UpperArchiveTest, TheHelperArchivesAndRestoresEveryKindOfEntryExactlyAsTheOwner) {
  if (geteuid() != 0) GTEST_SKIP() << "owners, whiteouts and trusted xattrs need root";
  if (!TrustedXattrsWork(temp_.path())) GTEST_SKIP() << "no trusted xattrs on this file system";
  if (access(testing::ArchiveHelperProgram().c_str(), X_OK) != 0) GTEST_SKIP() << "no sandboxd-archive-helper at " << testing::ArchiveHelperProgram();
  MakeEveryKindOfEntry();
  if (mknod((src_ + "/device").c_str(), S_IFCHR | 0600, makedev(1, 3)) != 0) {
    ASSERT_EQ(errno, EPERM) << strerror(errno);  // a container's device rules: no device then
  }
  WriteFile(src_ + "/capable", "#!/bin/sh\n", 0755);
  SetXattr(src_ + "/capable", "security.capability", FileCapability(CAP_NET_RAW));
  // Archived into and restored into directories as the daemon makes them (root's, 0700); the
  // layer's top (owned by 1000, as MakeEveryKindOfEntry leaves it) is its owner's.
  ASSERT_EQ(chmod(dst_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(archives_.c_str(), 0700), 0);
  const auto before = DescribeTree(src_);

  RunResult written = RunArchiveHelper({"write", src_, archive_, "3", "1000:1000:4321"});
  ASSERT_EQ(written.status, 0) << written.err;
  struct stat archive = Lstat(archive_);
  EXPECT_EQ(archive.st_uid, 1000u) << "the archive is not charged to the layer's owner";
  EXPECT_EQ(archive.st_mode & 07777, 0600u);
  RunResult restored = RunArchiveHelper({"extract", archive_, dst_, "1000:1000:4321"});
  ASSERT_EQ(restored.status, 0) << restored.err;
  ExpectRestoredAs(before);
  EXPECT_EQ(restored.out, written.out) << "entries and bytes";
}

TEST_F(UpperArchiveTest, TheHelperRefusesAnOwnerItCannotRead) {
  if (access(testing::ArchiveHelperProgram().c_str(), X_OK) != 0) GTEST_SKIP() << "no sandboxd-archive-helper at " << testing::ArchiveHelperProgram();
  WriteFile(src_ + "/f", "f\n");
  ASSERT_NO_THROW(WriteUpperArchive(src_, archive_, 3));
  for (const std::string owner : {"", "1000", "1000:1000", "alice:1000:", "1000:1000:5,", "1000:-1:", "4294967295:0:"}) {
    RunResult restored = RunArchiveHelper({"extract", archive_, dst_, owner});
    EXPECT_EQ(ExitStatusFromWaitStatus(restored.status), 1) << "owner '" << owner << "'";
    EXPECT_NE(restored.err.find("owner '" + owner + "'"), std::string::npos) << restored.err;
    RunResult written = RunArchiveHelper({"write", src_, archives_ + "/other.tar.zst", "3", owner});
    EXPECT_EQ(ExitStatusFromWaitStatus(written.status), 1) << "owner '" << owner << "'";
    EXPECT_NE(written.err.find("owner '" + owner + "'"), std::string::npos) << written.err;
  }
  EXPECT_FALSE(Exists(dst_ + "/f")) << "restored with an owner it could not read";
  EXPECT_FALSE(Exists(archives_ + "/other.tar.zst")) << "archived with an owner it could not read";
}

TEST_F(UpperArchiveTest, RoundTripOfAnEmptyUpperKeepsTheTopDirectory) {
  ASSERT_EQ(chmod(src_.c_str(), 0711), 0);
  if (geteuid() == 0) {
    ASSERT_EQ(lchown(src_.c_str(), 1000, 1000), 0);
  }
  // Whole seconds: subsecond times have a test of their own.
  SetTimes(src_, 1400000000, 0);

  ArchiveStats written, extracted;
  ASSERT_NO_THROW(written = WriteUpperArchive(src_, archive_, 1));
  ASSERT_NO_THROW(extracted = ExtractUpperArchive(archive_, dst_));

  EXPECT_EQ(written.entries, 1u);  // "." only
  EXPECT_EQ(extracted.entries, 1u);
  EXPECT_TRUE(Children(dst_).empty());
  EXPECT_EQ(DescribeTree(dst_), DescribeTree(src_));
  EXPECT_EQ(Lstat(dst_).st_mode & 07777, 0711u);
  EXPECT_EQ(written.bytes, static_cast<uint64_t>(Lstat(archive_).st_size));
}

/// `length` bytes of the file at `path` from `offset`.
std::string BytesAt(const std::string& path, off_t offset, size_t length) {
  UniqueFd file(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  std::string bytes(length, '\0');
  ssize_t got = file.valid() ? pread(file.get(), bytes.data(), length, offset) : -1;
  bytes.resize(got < 0 ? 0 : static_cast<size_t>(got));
  return bytes;
}

// Holes stay holes (issue 40, item 3): a 1 GiB file with 4 KiB of data costs a few blocks
// before suspend and after resume alike. Read with holes filled, it came back as 1 GiB of real
// blocks, written by root: past quotas and root's reserve.
TEST_F(UpperArchiveTest, RoundTripKeepsHolesHoles) {
  const std::string sparse = src_ + "/sparse";
  {
    UniqueFd file(open(sparse.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    ASSERT_TRUE(file.valid());
    ASSERT_EQ(pwrite(file.get(), "middle", 6, 512ll << 20), 6);
    ASSERT_EQ(ftruncate(file.get(), 1ll << 30), 0);
  }
  ASSERT_LT(Lstat(sparse).st_blocks, 1024) << "this file system keeps no holes";
  ASSERT_NO_THROW(WriteUpperArchive(src_, archive_, 1));
  ASSERT_NO_THROW(ExtractUpperArchive(archive_, dst_));
  const struct stat back = Lstat(dst_ + "/sparse");
  EXPECT_EQ(back.st_size, 1ll << 30);
  EXPECT_LT(back.st_blocks, 1024) << "the holes came back as " << back.st_blocks * 512 << " bytes of blocks";
  EXPECT_EQ(BytesAt(dst_ + "/sparse", 512ll << 20, 6), "middle");
  EXPECT_EQ(BytesAt(dst_ + "/sparse", (512ll << 20) - 3, 3), std::string(3, '\0'));
  EXPECT_LT(Lstat(archive_).st_size, 1 << 20);
}

// Times keep their nanoseconds, also for entries without extended attributes (a "restricted"
// pax archive gives those no header of their own, where a subsecond time travels).
TEST_F(UpperArchiveTest, RoundTripKeepsSubsecondTimesOfPlainFilesAndDirectories) {
  ASSERT_EQ(mkdir((src_ + "/d").c_str(), 0755), 0);
  WriteFile(src_ + "/d/plain", "no attributes\n");
  SetTimes(src_ + "/d/plain", 1500000000, 123456789);
  SetTimes(src_ + "/d", 1500000001, 987654321);

  ASSERT_NO_THROW(WriteUpperArchive(src_, archive_, 3));
  ASSERT_NO_THROW(ExtractUpperArchive(archive_, dst_));

  struct stat file = Lstat(dst_ + "/d/plain"), dir = Lstat(dst_ + "/d");
  EXPECT_EQ(file.st_mtim.tv_sec, 1500000000);
  EXPECT_EQ(file.st_mtim.tv_nsec, 123456789);
  EXPECT_EQ(dir.st_mtim.tv_sec, 1500000001);
  EXPECT_EQ(dir.st_mtim.tv_nsec, 987654321);
}

// The top is restored into a directory that exists already, and gets children after its own
// entry: its time must still be the archived one at the end.
TEST_F(UpperArchiveTest, RoundTripKeepsTheTopDirectoryTimeWhenItHasChildren) {
  WriteFile(src_ + "/f", "f\n");
  ASSERT_EQ(mkdir((src_ + "/d").c_str(), 0755), 0);
  SetTimes(src_, 1300000000, 0);  // whole seconds: only the top's time is checked here

  ASSERT_NO_THROW(WriteUpperArchive(src_, archive_, 3));
  ASSERT_NO_THROW(ExtractUpperArchive(archive_, dst_));

  EXPECT_EQ(Lstat(dst_).st_mtim.tv_sec, 1300000000);
}

TEST_F(UpperArchiveTest, ArchiveIsPrivateToItsOwner) {
  WriteFile(src_ + "/f", "data\n", 0644);
  // A permissive umask must not widen it.
  mode_t old_umask = umask(0);
  ArchiveStats written;
  EXPECT_NO_THROW(written = WriteUpperArchive(src_, archive_, 3));
  umask(old_umask);
  struct stat st = Lstat(archive_);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(written.bytes, static_cast<uint64_t>(st.st_size));
  EXPECT_GT(st.st_size, 0);
}

TEST_F(UpperArchiveTest, WriteRefusesAnExistingFileAndLeavesItAlone) {
  WriteFile(src_ + "/f", "data\n");
  WriteFile(archive_, "an earlier archive", 0640);
  struct stat before = Lstat(archive_);

  EXPECT_THROW(WriteUpperArchive(src_, archive_, 3), Error);

  EXPECT_EQ(ReadFile(archive_), "an earlier archive");
  struct stat after = Lstat(archive_);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_mode & 07777, 0640u);
}

TEST_F(UpperArchiveTest, WriteRefusesASymlinkAtTheArchivePathAndDoesNotFollowIt) {
  WriteFile(src_ + "/f", "data\n");
  const std::string target = temp_ / "target-of-link";
  ASSERT_EQ(symlink(target.c_str(), archive_.c_str()), 0);

  EXPECT_THROW(WriteUpperArchive(src_, archive_, 3), Error);

  EXPECT_FALSE(Exists(target)) << "the archive was written through the symlink";
  EXPECT_TRUE(S_ISLNK(Lstat(archive_).st_mode));
}

TEST_F(UpperArchiveTest, ExtractRefusesDotDotNamesAndWritesNothingOutside) {
  // dst is temp/dst: "a/../../escape" would land at temp/escape.
  const std::string escape = temp_ / "escape";
  WriteRawArchive(archive_, {Dir("a"), File("a/../../escape", "out\n")});

  ExpectExtractRefused(archive_, dst_, "a/../../escape");

  EXPECT_FALSE(Exists(escape));
}

TEST_F(UpperArchiveTest, ExtractRefusesALeadingDotDot) {
  const std::string escape = temp_ / "escape";
  WriteRawArchive(archive_, {File("../escape", "out\n")});

  ExpectExtractRefused(archive_, dst_, "../escape");

  EXPECT_FALSE(Exists(escape));
  EXPECT_TRUE(Children(dst_).empty());
}

TEST_F(UpperArchiveTest, ExtractRefusesAbsoluteNamesAndWritesNothingThere) {
  const std::string outside = temp_ / "outside";
  ASSERT_EQ(mkdir(outside.c_str(), 0755), 0);
  const std::string escape = outside + "/escape";
  ASSERT_EQ(escape.front(), '/');
  WriteRawArchive(archive_, {File(escape, "out\n")});

  ExpectExtractRefused(archive_, dst_, escape);

  EXPECT_FALSE(Exists(escape));
  EXPECT_TRUE(Children(outside).empty());
  // Nor under the layer with the slash dropped, as tar does by default.
  EXPECT_TRUE(Children(dst_).empty());
}

TEST_F(UpperArchiveTest, ExtractRefusesAHardLinkToAFileOutside) {
  // A hard link named "../secret" would give the layer a second name of a host file.
  const std::string secret = temp_ / "secret";
  WriteFile(secret, "host secret\n", 0600);
  WriteRawArchive(archive_, {HardLink("grab", "../secret")});

  ExpectExtractRefused(archive_, dst_, "../secret");

  EXPECT_FALSE(Exists(dst_ + "/grab"));
  EXPECT_EQ(Lstat(secret).st_nlink, 1u);
}

TEST_F(UpperArchiveTest, ExtractDoesNotWriteThroughAnArchivedAbsoluteSymlink) {
  const std::string outside = temp_ / "outside";
  ASSERT_EQ(mkdir(outside.c_str(), 0755), 0);
  WriteRawArchive(archive_, {Symlink("link", outside),
                             File("link/file", "through the link\n")});

  ExpectExtractRefused(archive_, dst_, "link/file");

  EXPECT_TRUE(Children(outside).empty());
}

TEST_F(UpperArchiveTest, ExtractDoesNotWriteThroughAnArchivedRelativeSymlink) {
  const std::string outside = temp_ / "outside";
  ASSERT_EQ(mkdir(outside.c_str(), 0755), 0);
  WriteRawArchive(archive_, {Dir("dir"),
                             Symlink("dir/link", "../../outside"),
                             File("dir/link/file", "through the link\n")});

  ExpectExtractRefused(archive_, dst_, "dir/link/file");

  EXPECT_TRUE(Children(outside).empty());
}

TEST_F(UpperArchiveTest, ExtractDoesNotHardLinkThroughAnArchivedSymlink) {
  // "link" -> outside, then a hard link to "link/secret": link(2) would follow the symlink
  // and give the layer a second name of the host file.
  const std::string outside = temp_ / "outside";
  ASSERT_EQ(mkdir(outside.c_str(), 0755), 0);
  WriteFile(outside + "/secret", "host secret\n", 0600);
  WriteRawArchive(archive_, {Symlink("link", outside),
                             HardLink("grab", "link/secret")});

  ExpectExtractRefused(archive_, dst_, "grab");

  EXPECT_FALSE(Exists(dst_ + "/grab"));
  EXPECT_EQ(Lstat(outside + "/secret").st_nlink, 1u);
}

TEST_F(UpperArchiveTest, ExtractRefusesATopEntryThatIsNotADirectory) {
  // The top may only ever be the layer's own directory: a "." symlink would replace the
  // (empty) layer directory with a link to anywhere.
  const std::string outside = temp_ / "outside";
  ASSERT_EQ(mkdir(outside.c_str(), 0755), 0);
  WriteRawArchive(archive_, {Symlink(".", outside)});

  ExpectExtractRefused(archive_, dst_, ".");

  EXPECT_TRUE(S_ISDIR(Lstat(dst_).st_mode)) << "the layer directory was replaced";
  EXPECT_TRUE(Children(outside).empty());
}

// A layer deeper than one syscall takes (30 levels of 200 bytes: 6 KB of path) comes back
// whole: every level, and at the bottom a file (with an attribute where the file system takes
// one), a read-only directory with its time, a symlink, a whiteout and a second name of a file
// at the top.
TEST_F(UpperArchiveTest, RoundTripKeepsALayerDeeperThanPathMax) {
  constexpr int kDeep = 30;
  UniqueFd src(open(src_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  UniqueFd bottom = MakeDeepDirs(src.get(), kDeep);
  ASSERT_TRUE(bottom);
  WriteFile(src_ + "/top", "two names\n");
  ASSERT_EQ(linkat(AT_FDCWD, (src_ + "/top").c_str(), bottom.get(), "second", 0), 0) << strerror(errno);
  {
    UniqueFd file(openat(bottom.get(), "deep.txt", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640));
    ASSERT_TRUE(file);
    ASSERT_EQ(write(file.get(), "deep down\n", 10), 10);
    bool root = geteuid() == 0 && TrustedXattrsWork(temp_.path());
    if (root) ASSERT_EQ(fsetxattr(file.get(), "trusted.overlay.origin", "o", 1, 0), 0) << strerror(errno);
  }
  ASSERT_EQ(symlinkat("../elsewhere", bottom.get(), "link"), 0);
  if (geteuid() == 0) ASSERT_EQ(mknodat(bottom.get(), "whiteout", S_IFCHR | 0, makedev(0, 0)), 0);
  ASSERT_EQ(mkdirat(bottom.get(), "ro", 0755), 0);
  const timespec times[2] = {{1500000000, 123}, {1500000001, 456}};
  ASSERT_EQ(utimensat(bottom.get(), "ro", times, 0), 0);
  ASSERT_EQ(fchmodat(bottom.get(), "ro", 0555, 0), 0);

  ArchiveStats written, extracted;
  ASSERT_NO_THROW(written = WriteUpperArchive(src_, archive_, 3));
  ASSERT_NO_THROW(extracted = ExtractUpperArchive(archive_, dst_));
  EXPECT_EQ(extracted.entries, written.entries);
  EXPECT_EQ(written.entries, static_cast<uint64_t>(1 + kDeep + 5 + (geteuid() == 0 ? 1 : 0)));

  UniqueFd dst(open(dst_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  UniqueFd restored = OpenDeepDirs(dst.get(), kDeep);
  ASSERT_TRUE(restored) << "the levels did not all come back";
  EXPECT_EQ(ReadAt(restored.get(), "deep.txt"), "deep down\n");
  struct stat st;
  ASSERT_EQ(fstatat(restored.get(), "deep.txt", &st, AT_SYMLINK_NOFOLLOW), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  if (geteuid() == 0 && TrustedXattrsWork(temp_.path())) {
    UniqueFd file(openat(restored.get(), "deep.txt", O_RDONLY | O_CLOEXEC));
    char value[4] = {};
    EXPECT_EQ(fgetxattr(file.get(), "trusted.overlay.origin", value, sizeof value), 1) << strerror(errno);
    EXPECT_EQ(value[0], 'o');
  }
  ASSERT_EQ(fstatat(restored.get(), "ro", &st, AT_SYMLINK_NOFOLLOW), 0);
  EXPECT_EQ(st.st_mode & 07777, 0555u);
  EXPECT_EQ(st.st_mtim.tv_sec, 1500000001);
  EXPECT_EQ(st.st_mtim.tv_nsec, 456);
  char target[64] = {};
  EXPECT_EQ(readlinkat(restored.get(), "link", target, sizeof target), 12);
  EXPECT_STREQ(target, "../elsewhere");
  if (geteuid() == 0) {
    ASSERT_EQ(fstatat(restored.get(), "whiteout", &st, AT_SYMLINK_NOFOLLOW), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0));
  }
  struct stat second, top;
  ASSERT_EQ(fstatat(restored.get(), "second", &second, AT_SYMLINK_NOFOLLOW), 0);
  ASSERT_EQ(lstat((dst_ + "/top").c_str(), &top), 0);
  EXPECT_EQ(second.st_ino, top.st_ino) << "the two names are two files now";
  EXPECT_EQ(top.st_nlink, 2u);
}

}  // namespace
}  // namespace sandboxd
