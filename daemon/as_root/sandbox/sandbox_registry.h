#pragma once
/// Every sandbox the daemon knows, by id: creating them (validation, overlap, record, mounts),
/// finding them by id or name for a caller, listing a caller's, forgetting destroyed ones and
/// recovering all of them at start-up. Thread-safe. No D-Bus here.

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/credentials.h"
#include "sandbox/layout.h"
#include "sandbox/root_validation.h"
#include "sandbox/sandbox.h"
#include "store/store.h"

namespace sandboxd {

struct CreateRequest {
  std::vector<std::string> roots;  ///< as the caller gave them
  std::string name;                ///< may be empty: derived from the first root
  bool network = false;            ///< its jobs have the network (asked of polkit by the caller)
  /// Its roots may overlap those of other shared sandboxes (each then sees the other's commits
  /// as live changes, and so as conflicts).
  bool shared = false;
  /// sandboxctl try made it (and only try may offer to reuse or drop it).
  bool made_by_try = false;
  /// Its jobs write the owner's home into a layer of its own (Sandbox::ScratchHomeUpper).
  bool scratch_home = false;
  uint64_t quota_bytes = 0;  ///< bytes its upper layers may hold; 0: no limit
  uint64_t ttl_sec = 0;      ///< idle this long, garbage collection removes it; 0: never
  std::vector<std::string> hide;  ///< absolute paths every job sees empty (create --hide)
  /// Host sockets every job may reach (create --allow-socket): canonical, checked as the owner.
  std::vector<std::string> allow_sockets;
  /// Hosts every job may reach by name (create --allow-host; asked of polkit by the caller).
  std::vector<network::HostRule> allow_hosts;
  /// The fine file clock (FileClockFineNowNs) when the call came in; 0: when Create begins. A
  /// live change stamped before it is before the sandbox (its creation time is a file-clock tick
  /// past it); taken at the call's arrival, the wait for that tick overlaps more of the set-up.
  int64_t asked_ns = 0;
};

class SandboxRegistry {
 public:
  SandboxRegistry(const Layout& layout, Store& store);

  /// Whether a sandbox created with a quota gets a file system of that size (quota_layer.h),
  /// as probed at start-up; else its jobs are stopped when they outgrow it.
  void SetHardQuotas(bool hard) { hard_quotas_ = hard; }
  /// Given to every sandbox it makes or loads from then on (Sandbox::SetLinkedUp).
  void SetLinkedUp(Sandbox::LinkedUp linked_up) { linked_up_ = std::move(linked_up); }
  bool hard_quotas() const { return hard_quotas_; }
  /// [Limits] MaxSandboxesPerUser= (root is not held to it) and MaxRootsPerSandbox=: Create
  /// refuses past them, naming the limit.
  void SetLimits(size_t max_sandboxes_per_user, size_t max_roots_per_sandbox) {
    max_sandboxes_per_user_ = max_sandboxes_per_user;
    max_roots_per_sandbox_ = max_roots_per_sandbox;
  }

  /// Called with the validated, canonical roots before anything is made: throws to refuse.
  using Authorize = std::function<void(const std::vector<std::string>& roots)>;
  /// Validates, authorizes and creates; on any failure nothing is left behind. Validation comes
  /// first so that bad input is answered without a password prompt, and the prompt shows the
  /// canonical paths.
  std::shared_ptr<Sandbox> Create(const CreateRequest& request, const UserCredentials& owner, const Authorize& authorize);
  /// The sandbox with this id, or this name among `uid`'s; nullptr if none. Root sees all.
  std::shared_ptr<Sandbox> Find(const std::string& id_or_name, uid_t uid) const;
  std::shared_ptr<Sandbox> FindById(const std::string& id) const;
  /// `uid`'s sandboxes (all of them for root), oldest first.
  std::vector<std::shared_ptr<Sandbox>> List(uid_t uid) const;
  /// Forgets the sandbox for good: its database row, then its map entry.
  void Forget(const std::string& id);
  /// Moves a forgotten sandbox's layers to the trash of each store it used ("" is the state
  /// directory; storage_area.h) and removes its (unmounted) run dir.
  void RemoveFiles(const std::string& id, const std::vector<std::string>& stores);
  /// At start-up, after Recover: takes down the mounts and files of sandboxes that have no
  /// record. Returns their ids, for logging.
  std::vector<std::string> SweepOrphans();
  /// Loads every record and sets each sandbox up again (remounting what is gone), after
  /// `before_setup` (finishing cut-off commits) has run on it. Returns the sandboxes that could
  /// not be set up, with the reason, for logging: among them any whose record this daemon
  /// cannot read, which is left as it is (not loaded, never swept).
  std::vector<std::pair<std::string, std::string>> Recover(const std::function<void(Sandbox&)>& before_setup = {});
  /// Deletes whatever is in the trash of the state directory and of every storage area (slow;
  /// call off the caller's time).
  void EmptyTrash();
  size_t size() const;

 private:
  /// Every Sandbox object is made here: it gets what the registry gives each (SetLinkedUp).
  std::shared_ptr<Sandbox> MakeSandbox(const SandboxRecord& record) const;
  std::string UniqueName(const std::string& wanted, uid_t owner) const;
  /// Refuses roots that nest in or hold another sandbox's, unless both are shared; naming that
  /// sandbox only when it is `caller`'s own (DescribeOverlap).
  void CheckOverlap(const std::vector<std::string>& roots, bool shared, uid_t caller) const;
  /// "" (the state directory) and every storage area ever used.
  std::vector<std::string> Stores();

  const Layout& layout_;
  Store& store_;
  bool hard_quotas_ = false;
  size_t max_sandboxes_per_user_ = 256;
  size_t max_roots_per_sandbox_ = 64;
  Sandbox::LinkedUp linked_up_;
  ForbiddenAreas forbidden_;
  mutable std::mutex mutex_;
  std::mutex trash_mutex_;  ///< held by EmptyTrash
  /// Under mutex_: records Recover could not read (store.h); their remains are never swept.
  std::set<std::string> unreadable_;
  std::map<std::string, std::shared_ptr<Sandbox>> sandboxes_;
  std::map<std::string, std::shared_ptr<Sandbox>> creating_;  ///< reserved, not yet made
};

/// Sandbox names: 1–64 of [A-Za-z0-9._-], not starting with '-' or '.', and not shaped like an
/// id (16 hex digits), so that a name can never shadow an id. Throws Error(kInvalidArgument).
void CheckSandboxName(const std::string& name);

}  // namespace sandboxd
