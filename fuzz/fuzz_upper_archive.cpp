// Hostile input: a tar.zst handed to ExtractUpperArchive in place of one WriteUpperArchive wrote
// (a suspended sandbox's archive, corrupt or tampered with in the state directory): absolute
// names, ".." components, symlinks and hard links that lead out, devices, setuid files, huge and
// bogus headers, zstd bombs. Each input is extracted, as root, into a fresh /tmp/work/upper beside
// /tmp/work/outside, which holds one file, victim; the seeds (fuzz/make-archive-seeds) aim links
// at both, relatively and by absolute path. Beyond not crashing: nothing outside upper changes
// (outside holds exactly its victim, unchanged and with one link; /tmp and /tmp/work nothing
// new), no write is attempted on the read-only rest of the system (see Confine), and upper stays
// a directory: a symlink there would become a sandbox's upper layer.

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include "base/errors.h"
#include "unique_fd.h"
#include "base/fs_util.h"
#include "check.h"
#include "archive/upper_archive.h"

namespace sandboxd::fuzz {
namespace {

const std::string kTmp = "/tmp";
const std::string kWork = "/tmp/work";
const std::string kArchive = kWork + "/archive.tar.zst";
const std::string kUpper = kWork + "/upper";
const std::string kOutside = kWork + "/outside";
const std::string kVictim = kOutside + "/victim";
constexpr std::string_view kVictimText = "outside the upper layer\n";

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "fuzz_upper_archive: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

/// A bug in extraction, run as root, could write anywhere; so the process gets a mount
/// namespace of its own in which every mount is read-only but a fresh tmpfs at /tmp (the work
/// directory; capped, for zstd bombs) and the directory it started in (libFuzzer's corpus and
/// crash files: tests/fuzz starts each target in a scratch directory). A write that reaches the
/// read-only rest fails with EROFS, which no extraction into /tmp can meet: a finding as well.
void Confine() {
  // Unprivileged, extraction could not restore owners, so nearly every input would stop early.
  if (geteuid() != 0) {
    std::fprintf(stderr, "fuzz_upper_archive: must run as root\n");
    std::exit(1);
  }
  std::string cwd = std::filesystem::current_path();
  struct mount_attr read_only = {.attr_set = MOUNT_ATTR_RDONLY};
  struct mount_attr writable = {.attr_clr = MOUNT_ATTR_RDONLY};
  if (unshare(CLONE_NEWNS) != 0) Die("cannot get a mount namespace of its own (needed to extract hostile archives as root)");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) Die("cannot make the mounts private");
  if (mount(cwd.c_str(), cwd.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) Die("cannot bind " + cwd);
  if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &read_only, sizeof read_only) != 0) Die("cannot make / read-only");
  if (mount_setattr(AT_FDCWD, cwd.c_str(), AT_RECURSIVE, &writable, sizeof writable) != 0) Die("cannot keep " + cwd + " writable");
  // The working directory still points into the mount below the new one, now read-only.
  if (chdir(cwd.c_str()) != 0) Die("cannot enter " + cwd);
  if (mount("sandboxd-fuzz", kTmp.c_str(), "tmpfs", 0, "size=256m,mode=1777") != 0) Die("cannot mount a tmpfs on /tmp");
}

std::set<std::string> Names(const std::string& dir) {
  auto names = ListDirectory(dir);
  return {names.begin(), names.end()};
}

struct stat Stat(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) st.st_ino = 0;
  return st;
}

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_ino == b.st_ino && a.st_mode == b.st_mode && a.st_uid == b.st_uid && a.st_gid == b.st_gid &&
         a.st_nlink == b.st_nlink && a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

std::string Content(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  std::string text(kVictimText.size() + 1, '\0');
  ssize_t got = fd ? read(fd.get(), text.data(), text.size()) : -1;
  text.resize(got < 0 ? 0 : static_cast<size_t>(got));
  return text;
}

void WriteFile(const std::string& path, std::string_view data, mode_t mode) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (!fd || write(fd.get(), data.data(), data.size()) != static_cast<ssize_t>(data.size())) Die("cannot write " + path);
}

void MakeDirectory(const std::string& path) {
  if (mkdir(path.c_str(), 0755) != 0) Die("cannot create " + path);
}

}  // namespace
}  // namespace sandboxd::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  sandboxd::fuzz::Confine();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sandboxd;
  using namespace sandboxd::fuzz;
  std::filesystem::remove_all(kWork);
  MakeDirectory(kWork);
  MakeDirectory(kUpper);
  MakeDirectory(kOutside);
  WriteFile(kVictim, kVictimText, 0644);
  WriteFile(kArchive, std::string_view(reinterpret_cast<const char*>(data), size), 0600);
  struct stat victim = Stat(kVictim);
  std::set<std::string> tmp = Names(kTmp), work = Names(kWork);

  try {
    ExtractUpperArchive(kArchive, kUpper);
  } catch (const Error& e) {
    Require(std::strstr(e.what(), std::strerror(EROFS)) == nullptr, "extraction never writes outside /tmp");
  }
  Require(S_ISDIR(Stat(kUpper).st_mode), "upper stays a directory");
  Require(Names(kTmp) == tmp && Names(kWork) == work, "extraction creates nothing beside upper");
  Require(Names(kOutside) == std::set<std::string>{"victim"}, "extraction creates nothing in a directory outside");
  Require(SameFile(Stat(kVictim), victim) && Content(kVictim) == kVictimText, "extraction changes no file outside");
  return 0;
}
