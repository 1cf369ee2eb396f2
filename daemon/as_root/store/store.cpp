#include "store/store.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/errors.h"

namespace sandboxd {
namespace {

constexpr const char* kStoreSchema = R"sql(
CREATE TABLE IF NOT EXISTS sandboxes (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  owner INTEGER NOT NULL,
  state TEXT NOT NULL,
  created_usec INTEGER NOT NULL,
  network INTEGER NOT NULL DEFAULT 0,
  shared INTEGER NOT NULL DEFAULT 0,
  quota_bytes INTEGER NOT NULL DEFAULT 0,
  ttl_sec INTEGER NOT NULL DEFAULT 0,
  last_used_usec INTEGER NOT NULL DEFAULT 0,
  hide TEXT NOT NULL DEFAULT '[]',
  hard_quota INTEGER NOT NULL DEFAULT 0,
  allow_sockets TEXT NOT NULL DEFAULT '[]',
  made_by_try INTEGER NOT NULL DEFAULT 0,
  scratch_home INTEGER NOT NULL DEFAULT 0,
  allow_hosts TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS roots (
  sandbox_id TEXT NOT NULL REFERENCES sandboxes(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  path TEXT NOT NULL,
  store TEXT NOT NULL DEFAULT '',
  handle TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (sandbox_id, idx)
);
CREATE TABLE IF NOT EXISTS storage_areas (
  path TEXT PRIMARY KEY
);
)sql";

/// A JSON array of strings as the store keeps a list of paths; what is not a string is skipped.
std::vector<std::string> StringList(const std::string& json) {
  std::vector<std::string> list;
  auto parsed = nlohmann::json::parse(json, nullptr, false);
  if (parsed.is_array())
    for (const auto& item : parsed)
      if (item.is_string()) list.push_back(item.get<std::string>());
  return list;
}

}  // namespace

Store::Store(const std::string& path) : db_(path) {
  // Free pages can be handed back (GiveBackSpace). Takes effect in a new database only: one an
  // earlier version made keeps its free pages for reuse.
  db_.Exec("PRAGMA auto_vacuum=INCREMENTAL");
  db_.Exec("PRAGMA journal_mode=WAL");
  // The write-ahead log shrinks back to this after a checkpoint (it grows with the largest
  // transaction: a page of a million-change commit's steps).
  db_.Exec("PRAGMA journal_size_limit=" + std::to_string(16 << 20));
  db_.Exec("PRAGMA synchronous=FULL");
  db_.Exec("PRAGMA foreign_keys=ON");
  db_.Exec(kStoreSchema);
  // Databases written by earlier versions lack the columns added since.
  AddColumnIfMissing("roots", "store", "TEXT NOT NULL DEFAULT ''");
  AddColumnIfMissing("roots", "handle", "TEXT NOT NULL DEFAULT ''");
  AddColumnIfMissing("sandboxes", "network", "INTEGER NOT NULL DEFAULT 0");
  AddColumnIfMissing("sandboxes", "shared", "INTEGER NOT NULL DEFAULT 0");
  AddColumnIfMissing("sandboxes", "quota_bytes", "INTEGER NOT NULL DEFAULT 0");
  AddColumnIfMissing("sandboxes", "ttl_sec", "INTEGER NOT NULL DEFAULT 0");
  AddColumnIfMissing("sandboxes", "last_used_usec", "INTEGER NOT NULL DEFAULT 0");
  AddColumnIfMissing("sandboxes", "hide", "TEXT NOT NULL DEFAULT '[]'");
  AddColumnIfMissing("sandboxes", "hard_quota", "INTEGER NOT NULL DEFAULT 0");
  AddColumnIfMissing("sandboxes", "allow_sockets", "TEXT NOT NULL DEFAULT '[]'");
  AddColumnIfMissing("sandboxes", "made_by_try", "INTEGER NOT NULL DEFAULT 0");
  AddColumnIfMissing("sandboxes", "scratch_home", "INTEGER NOT NULL DEFAULT 0");
  AddColumnIfMissing("sandboxes", "allow_hosts", "TEXT NOT NULL DEFAULT ''");
}

void Store::AddColumnIfMissing(const std::string& table, const std::string& column, const std::string& declaration) {
  Statement info(db_, "SELECT name FROM pragma_table_info(?)");
  info.Bind(1, table);
  while (info.Step())
    if (info.ColumnText(0) == column) return;
  db_.Exec("ALTER TABLE " + table + " ADD COLUMN " + column + " " + declaration);
}

void Store::Insert(const SandboxRecord& record) {
  std::lock_guard lock(mutex_);
  Transaction tx(db_);
  Statement(db_,
            "INSERT INTO sandboxes(id, name, owner, state, created_usec, network, shared, quota_bytes, ttl_sec, last_used_usec, hide, "
            "hard_quota, allow_sockets, made_by_try, scratch_home, allow_hosts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .Bind(1, record.id)
      .Bind(2, record.name)
      .Bind(3, static_cast<int64_t>(record.owner))
      .Bind(4, std::string(ToString(record.state)))
      .Bind(5, record.created_usec)
      .Bind(6, static_cast<int64_t>(record.network ? 1 : 0))
      .Bind(7, static_cast<int64_t>(record.shared ? 1 : 0))
      .Bind(8, static_cast<int64_t>(record.quota_bytes))
      .Bind(9, static_cast<int64_t>(record.ttl_sec))
      .Bind(10, record.last_used_usec)
      .Bind(11, nlohmann::json(record.hide).dump())
      .Bind(12, static_cast<int64_t>(record.hard_quota ? 1 : 0))
      .Bind(13, nlohmann::json(record.allow_sockets).dump())
      .Bind(14, static_cast<int64_t>(record.made_by_try ? 1 : 0))
      .Bind(15, static_cast<int64_t>(record.scratch_home ? 1 : 0))
      .Bind(16, network::FormatHostRules(record.allow_hosts))
      .Run();
  Statement insert_root(db_, "INSERT INTO roots(sandbox_id, idx, path, store, handle) VALUES (?, ?, ?, ?, ?)");
  for (size_t i = 0; i < record.roots.size(); ++i)
    insert_root.Bind(1, record.id)
        .Bind(2, static_cast<int64_t>(i))
        .Bind(3, record.roots[i])
        .Bind(4, i < record.stores.size() ? record.stores[i] : std::string())
        .Bind(5, i < record.root_handles.size() ? record.root_handles[i] : std::string())
        .Run();
  tx.Commit();
}

void Store::SetRootHandles(const std::string& id, const std::vector<std::string>& handles) {
  std::lock_guard lock(mutex_);
  Transaction tx(db_);
  Statement update(db_, "UPDATE roots SET handle = ? WHERE sandbox_id = ? AND idx = ?");
  for (size_t i = 0; i < handles.size(); ++i) update.Bind(1, handles[i]).Bind(2, id).Bind(3, static_cast<int64_t>(i)).Run();
  tx.Commit();
}

void Store::Remove(const std::string& id) {
  std::lock_guard lock(mutex_);
  Statement(db_, "DELETE FROM sandboxes WHERE id = ?").Bind(1, id).Run();
}

void Store::GiveBackSpace() {
  auto pragma = [this](const char* name) {
    Statement value(db_, std::string("PRAGMA ") + name);
    return value.Step() ? value.ColumnInt(0) : int64_t{0};
  };
  bool incremental = false;
  {
    std::lock_guard lock(mutex_);
    incremental = pragma("auto_vacuum") == 2;  // (a database made before keeps its free pages)
  }
  // 8 MiB of free pages at a time, the lock let go in between: other calls wait for a chunk,
  // never for the whole of it.
  while (incremental) {
    std::lock_guard lock(mutex_);
    if (pragma("freelist_count") == 0) break;
    db_.Exec("PRAGMA incremental_vacuum(2048)");
  }
  std::lock_guard lock(mutex_);
  db_.Exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

void Store::SetLastUsed(const std::vector<std::pair<std::string, int64_t>>& used) {
  if (used.empty()) return;
  std::lock_guard lock(mutex_);
  Transaction tx(db_);
  Statement update(db_, "UPDATE sandboxes SET last_used_usec = ? WHERE id = ? AND last_used_usec < ?");
  for (const auto& [id, usec] : used) update.Bind(1, usec).Bind(2, id).Bind(3, usec).Run();
  tx.Commit();
}

void Store::SetState(const std::string& id, SandboxState state) {
  std::string name(ToString(state));
  std::lock_guard lock(mutex_);
  Statement(db_, "UPDATE sandboxes SET state = ? WHERE id = ?").Bind(1, name).Bind(2, id).Run();
}

std::vector<SandboxRecord> Store::LoadAll() {
  std::vector<std::pair<std::string, std::string>> refused;
  auto records = LoadAll(refused);
  if (!refused.empty()) throw Error(Code::kFailed, refused.front().second);
  return records;
}

std::vector<SandboxRecord> Store::LoadAll(std::vector<std::pair<std::string, std::string>>& refused) {
  std::lock_guard lock(mutex_);
  std::vector<SandboxRecord> records;
  Statement sandboxes(db_,
                      "SELECT id, name, owner, state, created_usec, network, shared, quota_bytes, ttl_sec, last_used_usec, hide, "
                      "hard_quota, allow_sockets, made_by_try, scratch_home, allow_hosts FROM sandboxes "
                      "ORDER BY created_usec, id");
  while (sandboxes.Step()) {
    SandboxRecord r;
    r.id = sandboxes.ColumnText(0);
    r.name = sandboxes.ColumnText(1);
    r.owner = static_cast<uid_t>(sandboxes.ColumnInt(2));
    std::string state = sandboxes.ColumnText(3);
    auto known = SandboxStateFromString(state);
    // A state this daemon does not know (a newer sandboxd's store, or edited by hand) is not
    // guessed at: the record is refused, naming the sandbox.
    if (!known) {
      refused.emplace_back(r.id, "sandbox " + r.id + " has the unknown state '" + state + "' in the store");
      continue;
    }
    r.state = *known;
    r.created_usec = sandboxes.ColumnInt(4);
    r.network = sandboxes.ColumnInt(5) != 0;
    r.shared = sandboxes.ColumnInt(6) != 0;
    r.quota_bytes = static_cast<uint64_t>(sandboxes.ColumnInt(7));
    r.ttl_sec = static_cast<uint64_t>(sandboxes.ColumnInt(8));
    r.last_used_usec = std::max(sandboxes.ColumnInt(9), r.created_usec);
    r.hide = StringList(sandboxes.ColumnText(10));
    r.hard_quota = sandboxes.ColumnInt(11) != 0;
    r.allow_sockets = StringList(sandboxes.ColumnText(12));
    r.made_by_try = sandboxes.ColumnInt(13) != 0;
    r.scratch_home = sandboxes.ColumnInt(14) != 0;
    try {
      r.allow_hosts = network::ParseHostRules(sandboxes.ColumnText(15));
    } catch (const Error& error) {
      // Not guessed at either: a sandbox whose hosts cannot be read must not run with others.
      refused.emplace_back(r.id, "sandbox " + r.id + " has allowed hosts in the store that cannot be read: " + error.what());
      continue;
    }
    records.push_back(std::move(r));
  }
  Statement roots(db_, "SELECT path, store, handle FROM roots WHERE sandbox_id = ? ORDER BY idx");
  for (auto& r : records) {
    roots.Bind(1, r.id);
    while (roots.Step()) {
      r.roots.push_back(roots.ColumnText(0));
      r.stores.push_back(roots.ColumnText(1));
      r.root_handles.push_back(roots.ColumnText(2));
    }
    roots.Reset();
  }
  return records;
}

void Store::RememberArea(const std::string& area) {
  std::lock_guard lock(mutex_);
  Statement(db_, "INSERT OR IGNORE INTO storage_areas(path) VALUES (?)").Bind(1, area).Run();
}

std::vector<std::string> Store::Areas() {
  std::lock_guard lock(mutex_);
  std::vector<std::string> areas;
  Statement select(db_, "SELECT path FROM storage_areas ORDER BY path");
  while (select.Step()) areas.push_back(select.ColumnText(0));
  return areas;
}

}  // namespace sandboxd
