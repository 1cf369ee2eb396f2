#pragma once
/// Durable record of every sandbox (id, name, owner, state, roots) in SQLite (WAL) under the
/// state directory, so that a restarted daemon recovers them all. Thread-safe: one mutex
/// serialises the single connection. Holds no users' file data.

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "network/host_rules.h"
#include "store/sandbox_state.h"
#include "store/sqlite.h"

namespace sandboxd {

struct SandboxRecord {
  std::string id;
  std::string name;
  uid_t owner = 0;
  SandboxState state = SandboxState::kActive;
  int64_t created_usec = 0;
  std::vector<std::string> roots;
  /// Per root, the storage area holding its layers and commit areas (storage_area.h); "" for
  /// the state directory.
  std::vector<std::string> stores = {};
  /// Per root, the file handle of the directory the sandbox was made over (file_handle.h, as
  /// text): a root opened by its path again must still be that directory (Sandbox::OpenLiveRoot).
  /// "" where unknown: its file system gives no handles, or an earlier version made the record.
  std::vector<std::string> root_handles = {};
  /// Its jobs have the network (polkit's network action was asked when it was created).
  bool network = false;
  /// Its roots may overlap those of other shared sandboxes (create --shared).
  bool shared = false;
  /// sandboxctl try made it: try may offer to reuse it, or to drop it, for its directory.
  bool made_by_try = false;
  /// Its jobs see the owner's home writable, their writes kept in a layer of the sandbox's own
  /// that is never a change (create --scratch-home).
  bool scratch_home = false;
  /// Bytes its upper layers may hold (create --quota); 0: no limit.
  uint64_t quota_bytes = 0;
  /// Its quota is a hard limit: its layers live in a file system of its own, of that size
  /// (quota_layer.h). Else a job that outgrows the quota is stopped. Decided at create, by what
  /// the host allowed then, and kept: the layers are where they were made.
  bool hard_quota = false;
  /// Idle this long, it expires and garbage collection removes it (create --ttl); 0: never.
  uint64_t ttl_sec = 0;
  /// The end of its last job or operation (microseconds since the epoch).
  int64_t last_used_usec = 0;
  /// Absolute paths every job of it sees empty and unreadable, besides the configured ones
  /// (create --hide).
  std::vector<std::string> hide = {};
  /// Host sockets every job of it may reach (create --allow-socket), canonical when created.
  std::vector<std::string> allow_sockets = {};
  /// The hosts every job of it may reach by name (create --allow-host); none: no network, or
  /// all of it (`network`).
  std::vector<network::HostRule> allow_hosts = {};

  bool operator==(const SandboxRecord&) const = default;
};

class Store {
 public:
  explicit Store(const std::string& path);

  void Insert(const SandboxRecord& record);
  void Remove(const std::string& id);
  /// Records the roots' handles of a sandbox made before records kept them (SandboxRecord).
  void SetRootHandles(const std::string& id, const std::vector<std::string>& handles);
  /// Gives the file space of removed records back to the file system: what a sandbox of a
  /// million changes leaves (its sights, decisions and commit steps) would otherwise stay in the
  /// database file for good. Slow for much; call off the caller's time.
  void GiveBackSpace();
  void SetState(const std::string& id, SandboxState state);
  /// Records when each sandbox was last used ({id, usec}), where later than what is recorded,
  /// in one transaction (one sync for all).
  void SetLastUsed(const std::vector<std::pair<std::string, int64_t>>& used);
  /// Every record. Throws Error(kFailed) naming the first one this daemon cannot read (a state
  /// it does not know: a newer sandboxd's store, or edited by hand).
  std::vector<SandboxRecord> LoadAll();
  /// Every record it can read; each it cannot is left out and named in `refused` with why
  /// ({id, sentence}), never guessed at.
  std::vector<SandboxRecord> LoadAll(std::vector<std::pair<std::string, std::string>>& refused);
  /// Every storage area ever used, so that leftovers there are found after a crash.
  void RememberArea(const std::string& area);
  std::vector<std::string> Areas();

  /// Runs `work` on the database under the store's lock: for the other records that live in
  /// the same database (the commit journal), so that one connection serves all.
  template <typename Work>
  auto WithDatabase(Work&& work) {
    std::lock_guard lock(mutex_);
    return work(db_);
  }

 private:
  void AddColumnIfMissing(const std::string& table, const std::string& column, const std::string& declaration);

  std::mutex mutex_;
  Database db_;
};

}  // namespace sandboxd
