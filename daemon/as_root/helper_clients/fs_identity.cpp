#include "helper_clients/fs_identity.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "base/errors.h"

namespace sandboxd {
namespace {

/// setfsuid/setfsgid answer the previous id and cannot fail loudly: asking with an invalid id
/// (-1) changes nothing and tells the current one.
uid_t CurrentFsuid() { return static_cast<uid_t>(syscall(SYS_setfsuid, static_cast<uid_t>(-1))); }
gid_t CurrentFsgid() { return static_cast<gid_t>(syscall(SYS_setfsgid, static_cast<gid_t>(-1))); }

std::vector<gid_t> CurrentGroups() {
  long count = syscall(SYS_getgroups, 0, nullptr);
  if (count < 0) ThrowErrno("cannot read the thread's groups");
  std::vector<gid_t> groups(static_cast<size_t>(count));
  if (count > 0 && syscall(SYS_getgroups, count, groups.data()) != count) ThrowErrno("cannot read the thread's groups");
  return groups;
}

}  // namespace

ScopedFileSystemIdentity::ScopedFileSystemIdentity(const UserCredentials& user)
    : previous_uid_(CurrentFsuid()), previous_gid_(CurrentFsgid()), previous_groups_(CurrentGroups()) {
  if (geteuid() != 0) {
    if (user.uid != geteuid()) throw Error(Code::kFailed, "cannot take the file-system identity of uid " + std::to_string(user.uid));
    changed_ = false;
    return;
  }
  // Groups first, while the thread may still change them; the uid last, and checked.
  if (syscall(SYS_setgroups, user.groups.size(), user.groups.data()) != 0) ThrowErrno("cannot take the groups of uid " + std::to_string(user.uid));
  syscall(SYS_setfsgid, user.gid);
  syscall(SYS_setfsuid, user.uid);
  if (CurrentFsuid() != user.uid || CurrentFsgid() != user.gid) {
    syscall(SYS_setfsuid, previous_uid_);
    syscall(SYS_setfsgid, previous_gid_);
    syscall(SYS_setgroups, previous_groups_.size(), previous_groups_.data());
    throw Error(Code::kFailed, "cannot take the file-system identity of uid " + std::to_string(user.uid));
  }
}

ScopedFileSystemIdentity::~ScopedFileSystemIdentity() {
  if (!changed_) return;
  syscall(SYS_setfsuid, previous_uid_);
  syscall(SYS_setfsgid, previous_gid_);
  // Why abort: a worker thread left with a user's groups (or fsuid) would do the next
  // request's root work with that user's rights, or worse another user's with these.
  if (syscall(SYS_setgroups, previous_groups_.size(), previous_groups_.data()) != 0 || CurrentFsuid() != previous_uid_)
    std::abort();
}

}  // namespace sandboxd
