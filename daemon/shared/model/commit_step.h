#pragma once
/// One step of a journaled commit: what happens to one path of one root, with the identities
/// (inode numbers) of the entry that is live before and of the entry that goes live after.
/// Those identities make every step idempotent in both directions: whether a step has been
/// done is read from the live tree itself, so a commit cut off at any instant can be finished
/// or undone from its journal alone. Pure data, shared by sandboxd (which plans and journals)
/// and sandboxd-helper (which moves the files as the owner).

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <vector>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace sandboxd {

enum class StepAction {
  /// A non-directory from the upper layer goes live at the path: renamed in where nothing was,
  /// exchanged (RENAME_EXCHANGE) with what was there, which then sits in the upper as backup.
  kPlace,
  /// A directory is made at the path; what was there (a non-directory) moves to the removed
  /// area. Its children are steps of their own.
  kMakeDirectory,
  /// What is at the path moves to the removed area (a directory with all below it).
  kRemove,
  /// Only the permission bits change.
  kChmod,
  /// A rename: the live entry at `from` moves to the path (where nothing was), keeping its
  /// inode; the sandbox's copy of it stays behind with the backups.
  kMove,
};

std::string_view ToString(StepAction action);
std::optional<StepAction> StepActionFromString(std::string_view text);

/// Which way a commit's steps are carried out (sandboxd-helper "steps"): forward, every step
/// brought to its after state in order, or back, every step to its before state in reverse.
enum class StepDirection { kForward, kBack };
std::string_view ToString(StepDirection direction);  ///< "forward", "back": the helper protocol's words
std::optional<StepDirection> StepDirectionFromString(std::string_view text);

struct CommitStep {
  size_t seq = 0;          ///< position in the commit; names the removed-area entry "e<seq>"
  size_t root = 0;
  std::string path;        ///< relative to the root; "." for the root itself (kChmod only)
  StepAction action = StepAction::kPlace;
  ino_t old_ino = 0;       ///< live entry before the commit; 0 when there was none
  ino_t new_ino = 0;       ///< upper entry that goes live (kPlace); 0 otherwise
  mode_t old_mode = 0;     ///< permission bits before (kChmod)
  mode_t new_mode = 0;     ///< permission bits after (kChmod, kMakeDirectory)
  std::string from;        ///< kMove: the live path the entry comes from, relative to the root

  bool operator==(const CommitStep&) const = default;
  std::string RemovedName() const {
    std::string name = std::to_string(seq);
    name.insert(name.begin(), 'e');  // ("e" + ... trips a GCC 12 -Wrestrict false alarm)
    return name;
  }
};

/// An entry an undo put back live as a copy (through a landing area, landing_area.h): at `path`
/// of `root`, inode `restored` now stands for inode `original`, which the sandbox's earlier
/// commits recorded.
struct InodeAlias {
  size_t root = 0;
  std::string path;
  ino_t original = 0;
  ino_t restored = 0;
  bool operator==(const InodeAlias&) const = default;
};

/// The live inodes, per root, that work on `steps` took a name from (removed, replaced or moved)
/// or, run back, gave one back to, or changed the mode of: their ctime (and that of their other
/// names, hard links, which see their link count) moves with the sandbox's own work.
using InodesByRoot = std::map<size_t, std::set<ino_t>>;
InodesByRoot InodesNamedBy(const std::vector<CommitStep>& steps);

/// Steps as the helper receives them: one byte string for a page of thousands, each step its
/// fields in a fixed order (seq, root, action, old_ino, new_ino, old_mode, new_mode as fixed-size
/// integers in host byte order, then path and from, each a 32-bit length and its bytes). A
/// commit of a million files sends a step per file; as JSON values the daemon built, encoded,
/// and the helper decoded and freed a tree of nine values each (5% of a commit's time). Both
/// ends are one build on one machine.
std::string PackSteps(const std::vector<CommitStep>& steps);
/// Throws Error(kInvalidArgument) on bytes that are not whole, valid steps.
std::vector<CommitStep> UnpackSteps(std::string_view packed);

}  // namespace sandboxd
