#pragma once
/// Keeping the sandboxes' overlays to the daemon: no other process may ever hold a copy of one.
///
/// overlayfs lets one superblock at a time use an upper and work dir (index=on), and a copy of
/// a mount in another mount namespace keeps its superblock alive for as long as that namespace
/// lives. Every namespace made while an overlay is mounted copies it (clone or unshare with
/// CLONE_NEWNS copies every mount, unbindable ones too, and on this kernel the copies are no
/// longer unbindable, so bwrap's recursive bind of / takes them as well): another user's job,
/// or root's `unshare -m`, kept a sandbox's layers busy, and the remount that ends a commit or an
/// undo was refused. So:
///  - the daemon mounts its overlays in a mount namespace of its own (EnterOwnMountNamespace),
///    which no process outside copies: the host's namespace never holds one;
///  - they are mounted beneath one private mount tree (MakePrivateMountTree, the run dir);
///  - every child that makes namespaces of its own (bwrap) starts in a namespace where that
///    tree is gone but for its own sandbox's overlays (PruneMountsInChild).
/// Nothing here may unmount what it did not find below the daemon's run dir.

#include <sys/types.h>

#include <string>
#include <vector>

namespace sandboxd {

/// Detaches (MNT_DETACH) every mount below `dir` in the calling process's namespace, deepest
/// first: the overlays a sandboxd that still mounted them in the host's namespace left there,
/// which would keep their layers busy for the remounts of this one. Not `dir` itself.
void DetachMountsBelow(const std::string& dir);

/// Gives this process a mount namespace of its own, which receives the host's mounts (a slave)
/// and gives none back. Only while the process has one thread: unshare moves the calling thread
/// alone. Returns whether a file system the host mounts later is seen in it: when the host's /
/// is a shared mount (as systemd makes it at boot, and this does where nothing did); where it
/// stays private, nothing propagates.
/// Keeps the host's root directory for HostSeesTheSame. Throws Error(kFailed) saying what failed.
bool EnterOwnMountNamespace();

/// Whether the host's namespace finds, at the canonical path `canonical`, the directory this
/// process found there (`dev`, `ino`): not so for a root on a file system the host mounted
/// after EnterOwnMountNamespace where its mounts do not propagate, whose path names the
/// directory beneath it here. True when the daemon has no namespace of its own.
bool HostSeesTheSame(const std::string& canonical, dev_t dev, ino_t ino);

/// Binds `dir` onto itself as a private mount (mounts below it propagate nowhere): the tree
/// that a child's namespace leaves out whole. Once per start. Throws Error(kFailed).
void MakePrivateMountTree(const std::string& dir);

/// What a child's mount namespace leaves out: the mount tree at `tree` (a private tree of the
/// daemon's), all but the mounts at `kept` (paths below it), which stay where they were.
struct MountPruning {
  std::string tree;
  std::vector<std::string> kept;
};

/// In a child process only, as root, before it drops privilege (raw syscalls): moves the child
/// into a mount namespace of its own, a slave of the daemon's, and prunes it as `pruning` says.
/// `scratch` holds pruning.kept.size() ints. Returns 0 or an errno.
int PruneMountsInChild(const MountPruning& pruning, int* scratch);

}  // namespace sandboxd
