#pragma once
/// Approvals in the daemon's SQLite database (the same connection as the sandbox records), so
/// that they survive a restart and go with their sandbox (ON DELETE CASCADE).

#include <string>
#include <vector>

#include "approval.h"
#include "store.h"

namespace sandboxd {

class ApprovalStore {
 public:
  explicit ApprovalStore(Store& store);

  std::vector<Approval> Load(const std::string& sandbox_id);
  /// Writes `approvals` (replacing earlier rows of the same paths); a pending whole decision
  /// deletes its row. One transaction.
  void Save(const std::string& sandbox_id, const std::vector<Approval>& approvals);
  /// Forgets the decisions of `paths` (after a commit took them).
  void Forget(const std::string& sandbox_id, const std::vector<std::pair<size_t, std::string>>& paths);
  void Clear(const std::string& sandbox_id);

 private:
  Store& store_;
};

}  // namespace sandboxd
