// Issue 16, attack 4: "the overlay works with root's credentials". overlayfs reads the lower
// and writes the upper with the credentials of whoever mounted it; a sandbox mounted by root
// showed its owner a root-owned directory swapped into the live tree, and wrote into the
// blocks ext4 keeps for root. Each attack is made as alice would make it: sandboxctl, jobs,
// and renames in her own directory.

#include <dirent.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pwd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <random>
#include <string>

#include "attack_tools.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

/// Whether directory `path` has no entries but "." and ".." (false when it cannot be read).
bool EmptyDirectory(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (!dir) return false;
  bool empty = true;
  while (struct dirent* entry = readdir(dir))
    if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) empty = false;
  closedir(dir);
  return empty;
}

long long Number(const std::string& text) {
  try {
    return std::stoll(text);
  } catch (...) {
    return -1;
  }
}

// The owner lets a job copy up a directory of hers, so that it is a merge directory in the
// upper layer, then swaps a root-owned 0700 directory into its place in the live tree and has
// the overlay look the name up again (`look_again`): the merge directory takes its permissions
// from her upper directory, and the lower beneath it must still be read as she would read it.
void SwapRootsDirectoryUnderACopiedUpDirectory(const std::function<void(const std::string& id)>& look_again) {
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", "mkdir -p d && touch d/f"}, {.cwd = project}).status, 0);
  Result created = Ctl({"create", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  Result copied = Ctl({"run", id, "--", "sh", "-c", "echo mine > d/new"});
  ASSERT_EQ(copied.status, 0) << copied.err;

  // Root's directory, made in her project by root (any root-owned directory she can rename
  // into place would do: a rename needs only her own directory's write permission).
  std::string secret_dir = project + "/rootdir";
  ASSERT_EQ(mkdir(secret_dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(secret_dir.c_str(), 0700), 0);
  WriteWhole(secret_dir + "/secret", "TOPSECRET\n");
  ASSERT_EQ(chmod((secret_dir + "/secret").c_str(), 0644), 0);
  // The control: on the host she can neither list it nor read the file in it.
  EXPECT_NE(w.RunAs(kAlice, {"ls", secret_dir}).status, 0);
  EXPECT_EQ(w.RunAs(kAlice, {"cat", secret_dir + "/secret"}).out.find("TOPSECRET"), std::string::npos);

  Result swapped = w.RunAs(kAlice, {"sh", "-c", "mv d d.old && mv rootdir d"}, {.cwd = project});
  ASSERT_EQ(swapped.status, 0) << swapped.err;
  look_again(id);

  Result listed = Ctl({"run", id, "--", "sh", "-c", "ls -a d; cat d/secret"});
  EXPECT_EQ(listed.out.find("secret"), std::string::npos) << "the job listed root's directory:\n" << listed.out;
  EXPECT_EQ(listed.out.find("TOPSECRET"), std::string::npos) << "the job read a file in root's 0700 directory";
  // What is hers stays hers: the file the job wrote is there.
  Result own = Ctl({"run", id, "--", "cat", "d/new"});
  EXPECT_EQ(own.out, "mine\n") << own.err;

  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

// Suspend and resume mount the overlay again: every name is looked up afresh.
TEST(OverlayCredentialsTest, ARootDirectorySwappedUnderACopiedUpDirectoryIsNeitherListedNorRead) {
  SANDBOXD_REQUIRE_WORLD();
  SwapRootsDirectoryUnderACopiedUpDirectory([](const std::string& id) {
    Result suspended = Ctl({"suspend", id});
    ASSERT_EQ(suspended.status, 0) << suspended.err;
    Result resumed = Ctl({"resume", id});
    ASSERT_EQ(resumed.status, 0) << resumed.err;
  });
}

// The same overlay, still mounted: once the kernel forgets its cached names (memory pressure
// does it; here drop_caches), the next lookup finds root's directory under the name.
TEST(OverlayCredentialsTest, ARootDirectorySwappedUnderAMountedSandboxIsNeitherListedNorRead) {
  SANDBOXD_REQUIRE_WORLD();
  SwapRootsDirectoryUnderACopiedUpDirectory([](const std::string&) {
    sync();
    WriteWhole("/proc/sys/vm/drop_caches", "2\n");
  });
}

// The whole root swapped: the owner renames her project away and a root-owned 0700 directory
// into its name while the sandbox is suspended. The overlay's root takes her old directory's
// owner and mode, so a mount over root's directory would list it to her jobs.
TEST(OverlayCredentialsTest, ARootDirectorySwappedInPlaceOfTheWholeRootIsNeitherListedNorRead) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", "echo hers > f"}, {.cwd = project}).status, 0);
  Result created = Ctl({"create", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "echo mine > new"}).status, 0);
  ASSERT_EQ(Ctl({"suspend", id}).status, 0);

  std::string secret_dir = project + ".root";
  ASSERT_EQ(mkdir(secret_dir.c_str(), 0700), 0);
  WriteWhole(secret_dir + "/secret", "TOPSECRET\n");
  ASSERT_EQ(chmod((secret_dir + "/secret").c_str(), 0644), 0);
  ASSERT_EQ(rename(project.c_str(), (project + ".old").c_str()), 0);
  ASSERT_EQ(rename(secret_dir.c_str(), project.c_str()), 0);

  Result resumed = Ctl({"resume", id});
  Result listed = Ctl({"run", id, "--", "sh", "-c", "ls -a; cat secret"});
  EXPECT_EQ(listed.out.find("secret"), std::string::npos) << "the job listed root's directory:\n" << listed.out;
  EXPECT_EQ(listed.out.find("TOPSECRET"), std::string::npos) << "the job read a file in root's 0700 directory";
  // Refused, saying which root and why; nothing of the sandbox is lost for it.
  EXPECT_EQ(resumed.status, 1);
  EXPECT_NE(resumed.err.find("root " + project + " of sandbox " + id + " is no longer the directory"), std::string::npos)
      << resumed.err;

  ASSERT_EQ(rename(project.c_str(), secret_dir.c_str()), 0);
  ASSERT_EQ(rename((project + ".old").c_str(), project.c_str()), 0);
  Result again = Ctl({"resume", id});
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(Ctl({"run", id, "--", "cat", "new"}).out, "mine\n");
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
  w.RunAs("root", {"rm", "-rf", secret_dir});
}

/// A small ext4 of its own, loop-mounted at /mnt/sandboxd-it-N with half its blocks reserved
/// for root (mkfs -m 50), its top owned by root, holding alice's project proj/.
class SmallExt4 {
 public:
  SmallExt4() {
    static std::mt19937_64 random{std::random_device{}()};
    std::string tag = std::to_string(random() % 1000000000);
    image_ = World().dir() + "/ext4-" + tag + ".img";
    top_ = "/mnt/sandboxd-it-" + tag;
    Result made = World().RunAs("root", {"sh", "-c", "truncate -s 64M '" + image_ + "' && mkfs.ext4 -q -F -m 50 '" + image_ + "'"});
    if (made.status != 0) {
      error_ = "cannot make an ext4 image: " + made.err;
      return;
    }
    if (mkdir(top_.c_str(), 0755) != 0) {
      error_ = "cannot make " + top_ + ": " + strerror(errno);
      return;
    }
    Result mounted = World().RunAs("root", {"mount", "-o", "loop", image_, top_});
    if (mounted.status != 0) {
      error_ = "cannot loop-mount an ext4 image: " + mounted.err;
      return;
    }
    mounted_ = true;
    World().LetDaemonSeeNewMounts();  // sandboxd's namespace sees it only so where / is private
    chmod(top_.c_str(), 0755);
    passwd* alice = getpwnam(kAlice);
    project_ = top_ + "/proj";
    if (mkdir(project_.c_str(), 0755) != 0 || chown(project_.c_str(), alice->pw_uid, alice->pw_gid) != 0)
      error_ = "cannot make " + project_;
  }
  ~SmallExt4() {
    if (mounted_) World().RunAs("root", {"umount", "-l", top_});
    rmdir(top_.c_str());
    unlink(image_.c_str());
  }
  const std::string& error() const { return error_; }
  const std::string& top() const { return top_; }
  const std::string& project() const { return project_; }

 private:
  std::string image_, top_, project_, error_;
  bool mounted_ = false;
};

// ext4 keeps blocks for root (resuid=0); quotas are charged to the writer's fsuid. A job's
// writes through the overlay must be charged to its owner: no more room than she has herself.
TEST(OverlayCredentialsTest, AJobWritesNoMoreThanItsOwnerCouldIntoRootsReservedBlocks) {
  SANDBOXD_REQUIRE_WORLD();
  if (access("/dev/loop-control", F_OK) != 0) GTEST_SKIP() << "no loop devices here (/dev/loop-control is missing)";
  SmallExt4 fs;
  if (fs.error().find("loop") != std::string::npos) GTEST_SKIP() << fs.error();
  ASSERT_EQ(fs.error(), "");
  const std::string fill = "dd if=/dev/zero of=fill bs=1M 2>/dev/null; stat -c %s fill";

  Result direct = World().RunAs(kAlice, {"sh", "-c", fill}, {.cwd = fs.project()});
  long long direct_bytes = Number(direct.out);
  ASSERT_GT(direct_bytes, 0) << direct.err;
  ASSERT_EQ(unlink((fs.project() + "/fill").c_str()), 0);

  Result created = Ctl({"create", fs.project()});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  // The upper layer is on this file system (its storage area), so the job's writes land here.
  struct stat area;
  ASSERT_EQ(stat((fs.top() + "/.sandboxd/sandboxes/" + id).c_str(), &area), 0) << "the layers are not on the small file system";

  Result job = Ctl({"run", id, "--", "sh", "-c", fill});
  long long job_bytes = Number(job.out);
  EXPECT_GT(job_bytes, 0) << job.err;
  constexpr long long kSlack = 2 << 20;  // metadata of the layers (directories, the work dir)
  EXPECT_LE(job_bytes, direct_bytes + kSlack) << "alice could write " << direct_bytes << " bytes herself, her job wrote "
                                              << job_bytes << " through the overlay";
  std::printf("[ measured ] alice directly: %lld bytes; her job through the overlay: %lld bytes\n", direct_bytes, job_bytes);
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}


/// Issue 40, item 3: a sandbox of alice's whose layers live on a small ext4 file system, with
/// 8 MiB of random bytes (no compressor shrinks them: an archive is as large as the layer), and
/// the file system then filled by alice as far as she may write: what is left is root's reserve.
class OwnerOutOfRoomTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    if (access("/dev/loop-control", F_OK) != 0) GTEST_SKIP() << "no loop devices here (/dev/loop-control is missing)";
    if (fs_.error().find("loop") != std::string::npos) GTEST_SKIP() << fs_.error();
    ASSERT_EQ(fs_.error(), "");
    Result created = Ctl({"create", fs_.project()});
    ASSERT_EQ(created.status, 0) << created.err;
    id_ = Trim(created.out);
    storage_ = fs_.top() + "/.sandboxd/sandboxes/" + id_;
    ASSERT_EQ(access(storage_.c_str(), F_OK), 0) << "the layers are not on the small file system";
    Result job = Ctl({"run", id_, "--", "sh", "-c", "head -c 8M /dev/urandom > big && sha256sum big"});
    ASSERT_EQ(job.status, 0) << job.err;
    checksum_ = job.out;
  }

  /// Alice writes all she may herself, and then cannot write a MiB more.
  void FillAsAlice() {
    Result filled = World().RunAs(kAlice, {"sh", "-c", "dd if=/dev/zero of=fill bs=64k 2>/dev/null; sync; stat -c %s fill"},
                                  {.cwd = fs_.project()});
    ASSERT_GT(Number(filled.out), 0) << filled.err;
    ASSERT_NE(World().RunAs(kAlice, {"sh", "-c", "head -c 1M /dev/zero > more"}, {.cwd = fs_.project()}).status, 0)
        << "alice could still write after the fill";
  }
  void MakeRoom() { ASSERT_EQ(unlink((fs_.project() + "/fill").c_str()), 0); }

  /// The refusal of a verb that had no room: exit 1, naming the sandbox and the room; the
  /// sandbox left in `state`, its big file as it was (when active).
  void ExpectRefusedForRoom(const Result& refused, const std::string& state) {
    EXPECT_EQ(refused.status, 1) << "it wrote 8 MiB where its owner had no room left (into root's reserve)";
    std::printf("[ refused  ] %s", refused.err.c_str());
    EXPECT_NE(refused.err.find("sandbox " + id_), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("room"), std::string::npos) << refused.err;
    auto shown = nlohmann::json::parse(Ctl({"--json", "show", id_}).out, nullptr, false);
    EXPECT_EQ(shown.is_object() ? shown.value("state", "") : "", state);
  }

  SmallExt4 fs_;
  std::string id_, storage_, checksum_;
};

// Resume restores the upper layer from its archive. Restored as root, it took the blocks ext4
// keeps for root, past all its owner may write: she suspended a sandbox, filled the file system
// as far as she could, and resumed it into root's half. Restored as her, the resume is refused,
// naming the sandbox and the room, and the sandbox stays suspended and whole until there is room.
TEST_F(OwnerOutOfRoomTest, AResumeWritesNoMoreThanItsOwnerCouldIntoRootsReservedBlocks) {
  ASSERT_EQ(Ctl({"suspend", id_}).status, 0);
  // The layer's blocks are free again once its trash is emptied (after the reply).
  const std::string trash = fs_.top() + "/.sandboxd/trash";
  ASSERT_TRUE(WaitUntil([&] { return access(trash.c_str(), F_OK) != 0 || EmptyDirectory(trash); }, std::chrono::seconds(30)))
      << "the suspended layer stayed in " << trash;
  FillAsAlice();
  Result resumed = Ctl({"resume", id_});
  ExpectRefusedForRoom(resumed, "suspended");
  // With room again, the resume brings back the layer as it was.
  MakeRoom();
  if (resumed.status != 0) {
    Result again = Ctl({"resume", id_});
    EXPECT_EQ(again.status, 0) << again.err;
  }
  EXPECT_EQ(Ctl({"run", id_, "--", "sha256sum", "big"}).out, checksum_);
  EXPECT_EQ(Ctl({"destroy", id_}).status, 0);
}

// Suspend's half: the layer is archived beside it before it goes. Written as root, the archive
// took the blocks ext4 keeps for root, and was charged to root: its owner could leave her quota
// behind by suspending. Written as her, a suspend she has no room for is refused, naming the
// sandbox and the room, and the sandbox stays active as it was; with room, the archive is hers.
TEST_F(OwnerOutOfRoomTest, ASuspendWritesNoMoreThanItsOwnerCouldIntoRootsReservedBlocks) {
  FillAsAlice();
  ExpectRefusedForRoom(Ctl({"suspend", id_}), "active");
  EXPECT_EQ(Ctl({"run", id_, "--", "sha256sum", "big"}).out, checksum_);
  MakeRoom();
  Result again = Ctl({"suspend", id_});
  ASSERT_EQ(again.status, 0) << again.err;
  struct stat archive;
  ASSERT_EQ(stat((storage_ + "/archive/0.tar.zst").c_str(), &archive), 0) << strerror(errno);
  EXPECT_EQ(archive.st_uid, getpwnam(kAlice)->pw_uid) << "the archive is not charged to the sandbox's owner";
  EXPECT_EQ(archive.st_mode & 07777, 0600u);
  ASSERT_EQ(Ctl({"resume", id_}).status, 0);
  EXPECT_EQ(Ctl({"run", id_, "--", "sha256sum", "big"}).out, checksum_);
  EXPECT_EQ(Ctl({"destroy", id_}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
