#pragma once
/// Overlays are mounted with nfs_export=on, under which overlayfs merges an upper directory only
/// with the lower directory whose file handle it recorded (trusted.overlay.origin) when it first
/// merged them: a directory swapped into the live tree is not merged (issue 16, attack 4). But
/// sandboxd itself replaces live directories: an undo removes a directory a commit made, and a
/// later commit makes it anew. The sandbox's directory of that name still names the first one,
/// and the files the second commit took live would vanish from every job's view. So after a
/// commit or undo (unmounted), each directory on its paths whose recorded origin is not the live
/// directory there now forgets it; overlayfs records the live one at the next lookup.

#include <string>
#include <vector>

namespace sandboxd {

/// For `paths` (relative to both roots) and their parent directories: removes the origin of
/// each upper directory whose live counterpart is a directory with another file handle, and
/// the overlay's index entry named by that origin from `index_fd` (-1: none). Needs
/// CAP_SYS_ADMIN (trusted.* attributes). Returns how many it removed.
size_t ForgetStaleOrigins(int live_root_fd, int upper_root_fd, int index_fd, const std::vector<std::string>& paths);

/// The name of overlayfs's index entry for an object of origin `origin` (its bytes in hex).
std::string IndexName(const std::string& origin);

/// Whether an overlay origin attribute (`origin`, as stored: version, magic 0xfb, length, flags,
/// handle type, the lower file system's uuid, the handle) names the handle `type`/`handle`.
bool OriginNamesHandle(const std::string& origin, int type, const std::string& handle);

}  // namespace sandboxd
