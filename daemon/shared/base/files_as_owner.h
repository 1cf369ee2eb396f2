#pragma once
/// ActForFilesAs: a thread of root's that writes a user's files on the user's account. It takes
/// the user's file-system identity (fsuid, fsgid, supplementary groups) and keeps of root's
/// capabilities only those it is given, never CAP_SYS_RESOURCE, so that what it writes is the
/// user's: new inodes are the user's until chowned, disk quotas apply, and the blocks ext4 keeps
/// for root (resuid 0, or CAP_SYS_RESOURCE) stay out of reach. The real and saved uids stay
/// root's, so that the user can neither signal nor trace it. It must never run anything the
/// user controls (it keeps capabilities). Raw system calls only: callable in a child of
/// CloneSharingMemory (process.h), which may not allocate or lock.

#include <cstdint>

#include "base/credentials.h"

namespace sandboxd {

/// A set of capabilities as a mask, bit N for capability N (linux/capability.h's numbers).
constexpr uint64_t CapabilityBit(int capability) { return uint64_t{1} << capability; }
inline constexpr uint64_t kEveryCapability = ~uint64_t{0};

/// Makes the calling thread act for files as `user`, its effective and permitted capabilities
/// those of `keep` it has, less CAP_SYS_RESOURCE, and not dumpable. Read back before it
/// returns. Returns 0 or the errno of the step that failed (EPERM: it did not take).
int ActForFilesAs(const UserCredentials& user, uint64_t keep);

}  // namespace sandboxd
