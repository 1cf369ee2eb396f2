#pragma once
/// One change of a sandbox's change set with the decision that holds for it now.

#include <cstdint>
#include <string>

#include "changes/approval.h"
#include "model/change.h"

namespace sandboxd {

struct ReviewedChange {
  size_t root = 0;
  Change change;
  Approval approval;  ///< the decision that holds now (pending when none does)
  /// The two halves of a rename (renames.h) name each other; they are decided and committed
  /// together and always hold the same decision.
  std::string renamed_from;  ///< set on the added half
  std::string renamed_to;    ///< set on the deleted half
  /// The sizes of a file's or symlink's two sides (st_size), 0 for a side that does not exist
  /// or is of another type: what `changes` shows beside each file.
  uint64_t old_size = 0;
  uint64_t new_size = 0;
};

}  // namespace sandboxd
