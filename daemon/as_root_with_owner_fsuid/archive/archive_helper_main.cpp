// sandboxd-archive-helper: suspend's and resume's archiving (upper_archive.h) in a process of
// its own. libarchive and what it loads (libxml2, ICU, nettle, four compressors) then never
// enter the daemon, which stays small and quick to start for D-Bus activation; an archive is
// written or read in one go anyway, so a process per archive costs nothing that matters.
//
//   sandboxd-archive-helper write UPPER ARCHIVE LEVEL OWNER
//   sandboxd-archive-helper extract ARCHIVE UPPER OWNER      OWNER: UID:GID:[GROUP[,GROUP]...]
//
// Prints "ENTRIES BYTES" on success; the error's message on stderr and exit status 1 otherwise,
// 3 when a write found no room (ENOSPC, EDQUOT). Started by sandboxd as root, on its own
// directories only. When fd 3 is open (a pipe of sandboxd's), it gets a line
// "ENTRIES_DONE ENTRIES_TOTAL BYTES_DONE BYTES_TOTAL" at most every 100 ms while the work goes
// on (upper_archive.h ArchiveProgress); a line the pipe has no room for is dropped, never
// waited for.
//
// An archive is written, and a layer restored, as the sandbox's owner would write them (the
// DESIGN's "its writes are charged to the owner"): before it opens anything the helper takes
// OWNER's file-system identity and keeps only the capabilities its work needs
// (files_as_owner.h). Written and restored as root, they took the blocks ext4 keeps for root
// and passed the owner's disk quota: she could fill the file system as far as she might, then
// suspend a sandbox into root's half or resume it there; and an archive charged to root let
// her leave her quota behind by suspending.

#include <fcntl.h>
#include <linux/capability.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "base/errors.h"
#include "base/files_as_owner.h"
#include "archive/upper_archive.h"

namespace {

constexpr int kProgressFd = 3;
constexpr int kNoRoomStatus = 3;

/// What restoring a layer needs of root's capabilities, with the owner's file-system identity:
/// to make entries in directories that are not hers (the layer's top is root's, copied-up
/// directories may be anyone's) and give each its archived owner, mode (setuid and setgid
/// bits kept), times, attributes and hard links (CAP_DAC_OVERRIDE, CAP_CHOWN, CAP_FOWNER,
/// CAP_FSETID); devices a copy-up brought up (CAP_MKNOD); file capabilities a metadata copy-up
/// kept (CAP_SETFCAP); overlayfs's trusted.* attributes (CAP_SYS_ADMIN). Never
/// CAP_SYS_RESOURCE, nor anything else.
constexpr uint64_t kRestoreCapabilities = sandboxd::CapabilityBit(CAP_CHOWN) | sandboxd::CapabilityBit(CAP_DAC_OVERRIDE) |
                                          sandboxd::CapabilityBit(CAP_FOWNER) | sandboxd::CapabilityBit(CAP_FSETID) |
                                          sandboxd::CapabilityBit(CAP_MKNOD) | sandboxd::CapabilityBit(CAP_SETFCAP) |
                                          sandboxd::CapabilityBit(CAP_SYS_ADMIN);

/// What archiving a layer needs of root's capabilities, with the owner's file-system identity:
/// to read every entry whoever's it is and make the archive in the daemon's directory
/// (CAP_DAC_OVERRIDE), and to read overlayfs's trusted.* attributes (CAP_SYS_ADMIN). The
/// archive is the owner's file then, in a directory only root can reach.
constexpr uint64_t kArchiveCapabilities = sandboxd::CapabilityBit(CAP_DAC_OVERRIDE) | sandboxd::CapabilityBit(CAP_SYS_ADMIN);

/// A decimal id, all of `text`; throws otherwise.
uint32_t ParseId(const std::string& text, const std::string& owner) {
  if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos)
    throw sandboxd::Error(sandboxd::Code::kInvalidArgument, "owner '" + owner + "' is not UID:GID:[GROUP[,GROUP]...]");
  unsigned long long id = std::stoull(text);
  if (id >= 0xffffffffull) throw sandboxd::Error(sandboxd::Code::kInvalidArgument, "owner '" + owner + "' names an id out of range");
  return static_cast<uint32_t>(id);
}

/// OWNER (UID:GID:[GROUP[,GROUP]...]) as credentials.
sandboxd::UserCredentials ParseOwner(const std::string& owner) {
  size_t first = owner.find(':');
  size_t second = first == std::string::npos ? std::string::npos : owner.find(':', first + 1);
  if (second == std::string::npos) throw sandboxd::Error(sandboxd::Code::kInvalidArgument, "owner '" + owner + "' is not UID:GID:[GROUP[,GROUP]...]");
  sandboxd::UserCredentials user;
  user.uid = ParseId(owner.substr(0, first), owner);
  user.gid = ParseId(owner.substr(first + 1, second - first - 1), owner);
  if (owner.back() == ',') throw sandboxd::Error(sandboxd::Code::kInvalidArgument, "owner '" + owner + "' is not UID:GID:[GROUP[,GROUP]...]");
  for (size_t start = second + 1; start < owner.size();) {
    size_t end = owner.find(',', start);
    if (end == std::string::npos) end = owner.size();
    user.groups.push_back(ParseId(owner.substr(start, end - start), owner));
    start = end + 1;
  }
  return user;
}

/// Takes `owner`'s file-system identity with the capabilities `keep` for the rest of the
/// helper (it has one thread: the kernel keeps credentials per thread). Unprivileged (sandboxd
/// --user), the helper is the owner already, and may only be asked to be itself.
void TakeOwnersIdentity(const sandboxd::UserCredentials& owner, uint64_t keep) {
  if (geteuid() != 0) {
    if (owner.uid != geteuid())
      throw sandboxd::Error(sandboxd::Code::kAccessDenied, "cannot act for uid " + std::to_string(owner.uid) + " unprivileged");
    return;
  }
  if (int err = sandboxd::ActForFilesAs(owner, keep); err != 0)
    sandboxd::ThrowErrno(err, "cannot take the file-system identity of uid " + std::to_string(owner.uid));
}

/// The progress lines on fd 3, at most one per 100 ms; none when fd 3 is not open.
sandboxd::ArchiveProgressSink ProgressLines() {
  if (fcntl(kProgressFd, F_GETFD) < 0) return {};
  fcntl(kProgressFd, F_SETFL, fcntl(kProgressFd, F_GETFL) | O_NONBLOCK);
  auto last = std::chrono::steady_clock::now();
  return [last](const sandboxd::ArchiveProgress& p) mutable {
    auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::milliseconds(100)) return;
    last = now;
    char line[128];
    int length = std::snprintf(line, sizeof line, "%llu %llu %llu %llu\n", static_cast<unsigned long long>(p.entries_done),
                               static_cast<unsigned long long>(p.entries_total), static_cast<unsigned long long>(p.bytes_done),
                               static_cast<unsigned long long>(p.bytes_total));
    if (write(kProgressFd, line, static_cast<size_t>(length)) < 0) {
      // EAGAIN (no room: the reader is behind) or EPIPE: this line is not needed.
    }
  };
}

}  // namespace

int main(int argc, char** argv) {
  try {
    sandboxd::ArchiveStats stats;
    if (argc == 6 && std::strcmp(argv[1], "write") == 0) {
      TakeOwnersIdentity(ParseOwner(argv[5]), kArchiveCapabilities);
      stats = sandboxd::WriteUpperArchive(argv[2], argv[3], std::stoi(argv[4]), ProgressLines());
    } else if (argc == 5 && std::strcmp(argv[1], "extract") == 0) {
      TakeOwnersIdentity(ParseOwner(argv[4]), kRestoreCapabilities);
      stats = sandboxd::ExtractUpperArchive(argv[2], argv[3], ProgressLines());
    } else {
      std::fprintf(stderr,
                   "usage: sandboxd-archive-helper write UPPER ARCHIVE LEVEL OWNER | extract ARCHIVE UPPER OWNER "
                   "(OWNER: UID:GID:[GROUP[,GROUP]...]; started by sandboxd only)\n");
      return 2;
    }
    std::printf("%llu %llu\n", static_cast<unsigned long long>(stats.entries), static_cast<unsigned long long>(stats.bytes));
    return 0;
  } catch (const sandboxd::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.code() == sandboxd::Code::kQuotaExceeded ? kNoRoomStatus : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
