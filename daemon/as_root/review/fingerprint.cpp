#include "review/fingerprint.h"

#include "git_data.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <exception>
#include <string>

#include "base/beneath.h"

namespace sandboxd {
namespace {

std::string Time(const struct timespec& t) { return std::to_string(t.tv_sec) + "." + std::to_string(t.tv_nsec); }

/// overlayfs makes whiteouts as links to one shared inode, whose times move whenever any
/// whiteout comes or goes: a whiteout is identified by being one. A directory's times move with
/// its entries, which are changes of their own: only its identity and mode count.
std::optional<std::string> Special(const struct stat& st, bool with_identity) {
  if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) return "whiteout";
  if (S_ISDIR(st.st_mode)) return "dir:" + (with_identity ? std::to_string(st.st_ino) + ":" : "") + std::to_string(st.st_mode);
  return std::nullopt;
}

constexpr const char* kSeparator = "|l";

}  // namespace

std::string EntryStamp(int root_fd, const std::string& path) {
  auto found = StatBeneath(root_fd, path);
  if (!found) return "-";
  const struct stat& st = *found;
  if (auto special = Special(st, true)) return *special;
  return std::to_string(st.st_ino) + ":" + std::to_string(st.st_mode) + ":" + std::to_string(st.st_size) + ":" +
         Time(st.st_mtim) + ":" + Time(st.st_ctim);
}

std::string ArchivedStamp(int root_fd, const std::string& path) {
  auto found = StatBeneath(root_fd, path);
  if (!found) return "-";
  const struct stat& st = *found;
  if (auto special = Special(st, false)) return *special;
  return std::to_string(st.st_mode) + ":" + std::to_string(st.st_size) + ":" + Time(st.st_mtim);
}

bool SameSandboxSide(const std::string& then, const std::string& now) {
  auto absent = [](const std::string& stamp) { return stamp == "-" || stamp == "whiteout"; };
  return then == now || (absent(then) && absent(now));
}

bool MovedOnlyByLinkWork(const std::string& then, const std::string& now, const std::set<ino_t>& inodes) {
  // "ino:mode:size:mtime:ctime"; the specials ("-", "whiteout", "dir:…") have no ctime.
  size_t then_ctime = then.rfind(':'), now_ctime = now.rfind(':'), ino_end = now.find(':');
  if (then == now || then_ctime == std::string::npos || now_ctime == std::string::npos || then.compare(0, 4, "dir:") == 0 ||
      then.compare(0, then_ctime, now, 0, now_ctime) != 0)
    return false;
  try {
    return inodes.count(static_cast<ino_t>(std::stoull(now.substr(0, ino_end)))) > 0;
  } catch (const std::exception&) {
    return false;
  }
}

std::string LiveSideStamp(int live_root_fd, const std::string& path) {
  return api::GitDataOf(path) ? "git-data" : EntryStamp(live_root_fd, path);
}

std::string ChangeFingerprint(int live_root_fd, int upper_root_fd, const std::string& path) {
  return JoinFingerprint({'u', EntryStamp(upper_root_fd, path), LiveSideStamp(live_root_fd, path)});
}

std::optional<FingerprintParts> SplitFingerprint(const std::string& fingerprint) {
  if (fingerprint.empty() || (fingerprint[0] != 'u' && fingerprint[0] != 's')) return std::nullopt;
  size_t separator = fingerprint.find(kSeparator);
  if (separator == std::string::npos) return std::nullopt;
  return FingerprintParts{fingerprint[0], fingerprint.substr(1, separator - 1), fingerprint.substr(separator + 2)};
}

std::string JoinFingerprint(const FingerprintParts& parts) {
  std::string joined(1, parts.kind);
  joined += parts.upper;
  joined += kSeparator;
  joined += parts.live;
  return joined;
}

}  // namespace sandboxd
