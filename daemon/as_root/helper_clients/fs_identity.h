#pragma once
/// ScopedFileSystemIdentity: for as long as it lives, the calling thread looks paths up (and
/// opens files) with a user's file-system identity (fsuid, fsgid and supplementary groups)
/// instead of root's, so that what it finds is exactly what that user could find: a path the
/// user cannot reach answers EACCES, whether or not it exists. Only the calling thread changes:
/// the kernel keeps credentials per thread, and the raw system calls used here (unlike glibc's
/// setgroups, which changes every thread of the process) leave the daemon's other threads as
/// root. Changing the fsuid from 0 drops the file capabilities (CAP_DAC_OVERRIDE and others)
/// from the thread's effective set; changing it back restores them.

#include <sys/types.h>

#include <vector>

#include "base/credentials.h"

namespace sandboxd {

class ScopedFileSystemIdentity {
 public:
  /// Throws Error(kFailed) when the identity cannot be taken (then nothing changed).
  explicit ScopedFileSystemIdentity(const UserCredentials& user);
  /// Back to the identity the thread had.
  ~ScopedFileSystemIdentity();
  ScopedFileSystemIdentity(const ScopedFileSystemIdentity&) = delete;
  ScopedFileSystemIdentity& operator=(const ScopedFileSystemIdentity&) = delete;

 private:
  uid_t previous_uid_;
  gid_t previous_gid_;
  std::vector<gid_t> previous_groups_;
  /// False for an unprivileged daemon (user mode) asked to be itself: nothing to take or give back.
  bool changed_ = true;
};

}  // namespace sandboxd
