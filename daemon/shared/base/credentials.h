#pragma once
/// Who a sandbox's owner is: uid, primary gid, supplementary groups, home, shell, read from the
/// user database for a uid the bus reported. Never built from a caller's arguments.

#include <sys/types.h>

#include <string>
#include <vector>

namespace sandboxd {

struct UserCredentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  ///< supplementary groups from the group database (getgrouplist)
  std::string name;
  std::string home;
  std::string shell;
};

/// Looks `uid` up with getpwuid_r + getgrouplist (an answer is reused for 2 seconds). Throws
/// Error(kAccessDenied) for a uid with no user entry: we cannot run anything for an identity we
/// cannot name.
UserCredentials LookupUser(uid_t uid);

}  // namespace sandboxd
