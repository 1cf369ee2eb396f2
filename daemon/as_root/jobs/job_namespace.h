#pragma once
/// The first process of a job's pid namespace, as bwrap reports it ({"child-pid": N} on its
/// JSON status pipe). That pipe is written by bwrap, which runs as the owner, so the owner can
/// write into it too (a second process of theirs opening /proc/<bwrap>/fd/N): the number is a
/// claim, never a fact. It is trusted only once checked against what the daemon made itself:
/// the process must be a child of the bwrap the daemon spawned (whose pid cannot be reused while
/// the daemon has not reaped it), pid 1 of a pid namespace other than the daemon's, and still
/// alive after it was looked at through a pidfd opened before (so pid reuse cannot swap it).

#include <sys/types.h>

#include <optional>
#include <string>

#include "unique_fd.h"

namespace sandboxd {

/// Identity of a namespace (its nsfs inode), comparable across processes.
struct NamespaceId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const NamespaceId& other) const { return dev == other.dev && ino == other.ino; }
  bool operator<(const NamespaceId& other) const { return dev != other.dev ? dev < other.dev : ino < other.ino; }
};

struct NamespaceInit {
  UniqueFd pidfd;          ///< of the verified process, for signals without a pid-reuse race
  NamespaceId pid_namespace;
};

/// Verifies `reported` as described above; nullopt when any check fails (the claim is then
/// ignored: the job is still ended through its cgroup and bwrap's own pidfd).
std::optional<NamespaceInit> VerifyNamespaceInit(pid_t reported, pid_t bwrap_pid);

/// The pid namespace of this process (the daemon's).
std::optional<NamespaceId> OwnPidNamespace();

/// The "child-pid" a line of bwrap's status output claims; nullopt when it claims none.
std::optional<pid_t> ReportedChildPid(const std::string& line);

}  // namespace sandboxd
