#pragma once
/// The digest a decision made while a job ran is bound to (approval.h): SHA-256 of a file's
/// bytes as the owner reads them now, page cache included, so bytes a job wrote through a
/// mapping count although they moved no time stamp. Run by sandboxd-helper as the owner; the
/// file is opened beneath its root without following a symlink, and never as root.

#include <string>

namespace sandboxd {

/// "sha256:<hex>" of the regular file at `path` beneath `dirfd`; "none" when there is no regular
/// file there (a deletion, a symlink, a directory: nothing a mapping can change); "unreadable:
/// <why>" when the owner cannot read it (it then matches only itself, unreadable for the same
/// reason).
std::string ContentDigest(int dirfd, const std::string& path);

}  // namespace sandboxd
