#include "base/files_as_owner.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace sandboxd {
namespace {

uint64_t Mask(const __user_cap_data_struct (&sets)[_LINUX_CAPABILITY_U32S_3], __u32 __user_cap_data_struct::*set) {
  return uint64_t{sets[0].*set} | uint64_t{sets[1].*set} << 32;
}

}  // namespace

int ActForFilesAs(const UserCredentials& user, uint64_t keep) {
  // Not dumpable, whatever fs.suid_dumpable says: a thread with capabilities working on a
  // user's files must never be traced by that user (see DropPrivilegesInChild).
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return errno;
  // Raw calls: glibc's setgroups changes every thread of the process (and takes locks).
  if (syscall(SYS_setgroups, user.groups.size(), user.groups.data()) != 0) return errno;
  syscall(SYS_setfsgid, user.gid);
  syscall(SYS_setfsuid, user.uid);
  // setfs[ug]id report the previous value and no error: ask again to know it took.
  if (static_cast<uid_t>(syscall(SYS_setfsuid, -1)) != user.uid) return EPERM;
  if (static_cast<gid_t>(syscall(SYS_setfsgid, -1)) != user.gid) return EPERM;
  // The change of fsuid from 0 dropped the file capabilities (CAP_DAC_OVERRIDE, CAP_CHOWN, ...)
  // from the effective set; what is kept of them is put back here, from the permitted set.
  // CAP_SYS_RESOURCE never: with it ext4 hands out the blocks it keeps for root and quotas
  // are not enforced, whoever the writes are charged to.
  keep &= ~CapabilityBit(CAP_SYS_RESOURCE);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, caps) != 0) return errno;
  uint64_t wanted = Mask(caps, &__user_cap_data_struct::permitted) & keep;
  for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; ++i) {
    caps[i].permitted = caps[i].effective = static_cast<__u32>(wanted >> (32 * i));
    caps[i].inheritable = 0;
  }
  if (syscall(SYS_capset, &header, caps) != 0) return errno;
  __user_cap_data_struct now[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, now) != 0) return errno;
  if (Mask(now, &__user_cap_data_struct::effective) != wanted || Mask(now, &__user_cap_data_struct::permitted) != wanted) return EPERM;
  return 0;
}

}  // namespace sandboxd
