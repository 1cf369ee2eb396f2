#pragma once
/// Storage areas: where a root on another file system than the state directory keeps its
/// upper layer, work directory and commit areas. An area is AREA = TOP/.sandboxd (root-only,
/// 0700), TOP being the top directory of the root's file system, in the manner of the
/// freedesktop trash's per-volume directories. On the root's own file system every commit
/// moves entries by rename, journaled and crash-safe, instead of copying them across.
///
/// An area is used only where root may safely work in it: TOP is a directory owned by root that
/// no one else may write (else its owner could swap .sandboxd for a symlink), and TOP is not
/// the root itself (overlayfs refuses an upper layer inside its own lower). Otherwise the root
/// stays in the state directory and its commits copy, as across file systems they must.

#include <string>

namespace sandboxd {

struct StoreChoice {
  std::string store;    ///< the area, or "" for the state directory
  std::string why_not;  ///< why a root on another file system stays in the state directory
};

/// For the canonical directory `root`: "" when it shares the file system of `state_dir`, else
/// the area of its file system, made (with its sandboxes/ and trash/) when missing.
StoreChoice ChooseStore(const std::string& root, const std::string& state_dir);

}  // namespace sandboxd
