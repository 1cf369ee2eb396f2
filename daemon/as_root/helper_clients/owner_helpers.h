#pragma once
/// Where the daemon's owner-side work runs: every read or write in a user's tree that must be
/// checked against the owner's rights rather than root's (a commit's moves, diffs, content
/// comparisons, landing areas). In sandboxd it is HelperPrograms (helper_client.h):
/// sandboxd-helper and sandboxd-text-helper, started with the owner's credentials. Unit tests
/// run the same operations (helpers/helper_operations.h) in a child of their own process as
/// their own user (tests/unit/forked_helpers.h), so that the code around them runs
/// unprivileged and fast.

#include <nlohmann/json.hpp>

#include <vector>

#include "base/credentials.h"
#include "model/helper_request.h"

namespace sandboxd {

class OwnerHelpers {
 public:
  virtual ~OwnerHelpers() = default;
  /// Runs `op` as `user` with `request`, `fds` given to it as fds 3, 4, ... (the request names
  /// them by those numbers); returns its answer. An error it reports comes back as the same
  /// Error code; one that ends it otherwise, as Error(kFailed) naming the op.
  virtual nlohmann::json Run(HelperOp op, const UserCredentials& user, const nlohmann::json& request, const std::vector<int>& fds) = 0;
};

}  // namespace sandboxd
