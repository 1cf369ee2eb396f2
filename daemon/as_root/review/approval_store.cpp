#include "review/approval_store.h"

#include <nlohmann/json.hpp>

#include "base/errors.h"

namespace sandboxd {
namespace {

constexpr const char* kApprovalSchema = R"sql(
CREATE TABLE IF NOT EXISTS approvals (
  sandbox_id TEXT NOT NULL REFERENCES sandboxes(id) ON DELETE CASCADE,
  root INTEGER NOT NULL,
  path TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  verdict TEXT NOT NULL,
  hunks TEXT NOT NULL,
  hunk_count INTEGER NOT NULL,
  PRIMARY KEY (sandbox_id, root, path)
);
CREATE TABLE IF NOT EXISTS approvals_after_commit (
  sandbox_id TEXT NOT NULL REFERENCES sandboxes(id) ON DELETE CASCADE,
  commit_id INTEGER NOT NULL,
  root INTEGER NOT NULL,
  path TEXT NOT NULL,
  verdict TEXT NOT NULL,
  hunks TEXT NOT NULL,
  hunk_count INTEGER NOT NULL,
  partner TEXT NOT NULL,
  PRIMARY KEY (sandbox_id, commit_id, root, path)
);
CREATE TABLE IF NOT EXISTS approvals_before_commit (
  sandbox_id TEXT NOT NULL REFERENCES sandboxes(id) ON DELETE CASCADE,
  commit_id INTEGER NOT NULL,
  root INTEGER NOT NULL,
  path TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  verdict TEXT NOT NULL,
  hunks TEXT NOT NULL,
  hunk_count INTEGER NOT NULL,
  partner TEXT NOT NULL,
  PRIMARY KEY (sandbox_id, commit_id, root, path)
);
)sql";

/// The per-hunk decisions as one JSON object: {"1": "approved", "2": "pending", "2.1": "approved",
/// "2.2": "rejected"}: a key "N.M" is part M of split hunk N (rows written before hunks could
/// be split hold none).
std::string HunksToText(const Approval& approval) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [number, verdict] : approval.hunks) object[std::to_string(number)] = std::string(ToString(verdict));
  for (const auto& [number, verdicts] : approval.parts)
    for (size_t i = 0; i < verdicts.size(); ++i)
      object[std::to_string(number) + "." + std::to_string(i + 1)] = std::string(ToString(verdicts[i]));
  return object.dump();
}

void HunksFromText(const std::string& text, Approval& approval) {
  auto object = nlohmann::json::parse(text);
  std::map<int, std::map<int, Verdict>> parts;
  for (auto it = object.begin(); it != object.end(); ++it) {
    std::string name = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
    auto decided = VerdictFromString(name);
    if (!decided) throw Error(Code::kFailed, "approval database holds an unknown verdict '" + name + "'");
    const std::string& key = it.key();
    if (size_t dot = key.find('.'); dot != std::string::npos) parts[std::stoi(key.substr(0, dot))][std::stoi(key.substr(dot + 1))] = *decided;
    else approval.hunks[std::stoi(key)] = *decided;
  }
  for (const auto& [number, verdicts] : parts) {
    auto& list = approval.parts[number];
    for (const auto& [part, verdict] : verdicts) {
      if (part != static_cast<int>(list.size()) + 1)
        throw Error(Code::kFailed, "approval database holds part " + std::to_string(part) + " of hunk " + std::to_string(number) +
                                       " without the parts before it");
      list.push_back(verdict);
    }
  }
}

/// The columns both tables keep a decision in, in the order DecisionFromRow reads them.
constexpr const char* kDecisionColumns = "root, path, verdict, hunks, hunk_count, partner";

Approval DecisionFromRow(Statement& row) {
  Approval approval;
  approval.root = static_cast<size_t>(row.ColumnInt(0));
  approval.path = row.ColumnText(1);
  approval.whole = VerdictFromString(row.ColumnText(2)).value_or(Verdict::kPending);
  HunksFromText(row.ColumnText(3), approval);
  approval.hunk_count = static_cast<int>(row.ColumnInt(4));
  approval.partner = row.ColumnText(5);
  return approval;
}

/// What the approvals table keeps of a decision, in the order ApprovalFromRow reads it.
const std::string kApprovalColumns = std::string(kDecisionColumns) + ", fingerprint, content";

Approval ApprovalFromRow(Statement& row) {
  Approval approval = DecisionFromRow(row);
  approval.fingerprint = row.ColumnText(6);
  approval.content = row.ColumnText(7);
  return approval;
}

}  // namespace

ApprovalStore::ApprovalStore(Store& store) : store_(store) {
  store_.WithDatabase([](Database& db) {
    db.Exec(kApprovalSchema);
    // Databases written before decisions knew their rename partner lack the column: their
    // decisions were made on changes taken alone.
    auto has_column = [&](const std::string& name) {
      Statement info(db, "SELECT name FROM pragma_table_info('approvals')");
      bool found = false;
      while (info.Step()) found |= info.ColumnText(0) == name;
      return found;
    };
    if (!has_column("partner")) db.Exec("ALTER TABLE approvals ADD COLUMN partner TEXT NOT NULL DEFAULT ''");
    // Nor did they know content bindings (decisions made while a job ran, approval.h): none.
    if (!has_column("content")) db.Exec("ALTER TABLE approvals ADD COLUMN content TEXT NOT NULL DEFAULT ''");
    // Looked for at every job's end: the few bound ones, never a scan of a million decisions.
    db.Exec("CREATE INDEX IF NOT EXISTS approvals_bound ON approvals(sandbox_id) WHERE content != ''");
  });
}

std::vector<Approval> ApprovalStore::Load(const std::string& sandbox_id) {
  return store_.WithDatabase([&](Database& db) {
    std::vector<Approval> approvals;
    Statement select(db, "SELECT " + kApprovalColumns + " FROM approvals WHERE sandbox_id = ?");
    select.Bind(1, sandbox_id);
    while (select.Step()) approvals.push_back(ApprovalFromRow(select));
    return approvals;
  });
}

OrderedLookup<Approval>::Page ApprovalStore::Page(const std::string& sandbox_id, const RecordKey& from,
                                                  size_t limit) {
  return store_.WithDatabase([&](Database& db) {
    OrderedLookup<Approval>::Page page;
    Statement select(db, "SELECT " + kApprovalColumns + " FROM approvals WHERE sandbox_id = ? AND (root, path) >= (?, ?) "
                         "ORDER BY root, path LIMIT ?");
    select.Bind(1, sandbox_id).Bind(2, static_cast<int64_t>(from.first)).Bind(3, from.second);
    select.Bind(4, static_cast<int64_t>(limit));
    while (select.Step()) {
      Approval approval = ApprovalFromRow(select);
      RecordKey key{approval.root, approval.path};
      page.emplace_back(std::move(key), std::move(approval));
    }
    return page;
  });
}

OrderedLookup<Approval> ApprovalStore::Lookup(const std::string& sandbox_id) {
  return OrderedLookup<Approval>(
      [this, sandbox_id](const RecordKey& from, size_t limit) { return Page(sandbox_id, from, limit); });
}

namespace {

/// Writes `approvals` as the sandbox's decisions (a pending one without hunks is none), in the
/// caller's transaction.
void WriteDecisions(Database& db, const std::string& sandbox_id, const std::vector<Approval>& approvals) {
  Statement upsert(db,
                   "INSERT OR REPLACE INTO approvals(sandbox_id, root, path, fingerprint, verdict, hunks, hunk_count, partner, content) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  Statement erase(db, "DELETE FROM approvals WHERE sandbox_id = ? AND root = ? AND path = ?");
  for (const auto& approval : approvals) {
    if (approval.State() == ReviewState::kPending && approval.hunks.empty()) {
      erase.Bind(1, sandbox_id).Bind(2, static_cast<int64_t>(approval.root)).Bind(3, approval.path).Run();
      continue;
    }
    upsert.Bind(1, sandbox_id)
        .Bind(2, static_cast<int64_t>(approval.root))
        .Bind(3, approval.path)
        .Bind(4, approval.fingerprint)
        .Bind(5, ToString(approval.whole))
        .Bind(6, HunksToText(approval))
        .Bind(7, static_cast<int64_t>(approval.hunk_count))
        .Bind(8, approval.partner)
        .Bind(9, approval.content)
        .Run();
  }
}

}  // namespace

void ApprovalStore::Save(const std::string& sandbox_id, const std::vector<Approval>& approvals) {
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    WriteDecisions(db, sandbox_id, approvals);
    tx.Commit();
  });
}

std::vector<Approval> ApprovalStore::Bound(const std::string& sandbox_id) {
  return store_.WithDatabase([&](Database& db) {
    std::vector<Approval> approvals;
    Statement select(db, "SELECT " + kApprovalColumns + " FROM approvals WHERE sandbox_id = ? AND content != ''");
    select.Bind(1, sandbox_id);
    while (select.Step()) approvals.push_back(ApprovalFromRow(select));
    return approvals;
  });
}

void ApprovalStore::Forget(const std::string& sandbox_id, const std::vector<std::pair<size_t, std::string>>& paths) {
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    Statement erase(db, "DELETE FROM approvals WHERE sandbox_id = ? AND root = ? AND path = ?");
    for (const auto& [root, path] : paths) erase.Bind(1, sandbox_id).Bind(2, static_cast<int64_t>(root)).Bind(3, path).Run();
    tx.Commit();
  });
}

void ApprovalStore::ForgetAll(const std::string& sandbox_id) {
  store_.WithDatabase([&](Database& db) { Statement(db, "DELETE FROM approvals WHERE sandbox_id = ?").Bind(1, sandbox_id).Run(); });
}

void ApprovalStore::Clear(const std::string& sandbox_id) {
  store_.WithDatabase([&](Database& db) {
    Statement(db, "DELETE FROM approvals WHERE sandbox_id = ?").Bind(1, sandbox_id).Run();
    Statement(db, "DELETE FROM approvals_after_commit WHERE sandbox_id = ?").Bind(1, sandbox_id).Run();
    Statement(db, "DELETE FROM approvals_before_commit WHERE sandbox_id = ?").Bind(1, sandbox_id).Run();
  });
}

void ApprovalStore::SaveAfterCommit(const std::string& sandbox_id, int64_t commit, const std::vector<Approval>& approvals) {
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    Statement insert(db,
                     "INSERT OR REPLACE INTO approvals_after_commit(sandbox_id, commit_id, root, path, verdict, hunks, hunk_count, "
                     "partner) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    for (const auto& approval : approvals)
      insert.Bind(1, sandbox_id)
          .Bind(2, commit)
          .Bind(3, static_cast<int64_t>(approval.root))
          .Bind(4, approval.path)
          .Bind(5, ToString(approval.whole))
          .Bind(6, HunksToText(approval))
          .Bind(7, static_cast<int64_t>(approval.hunk_count))
          .Bind(8, approval.partner)
          .Run();
    tx.Commit();
  });
}

std::vector<int64_t> ApprovalStore::CommitsAwaited(const std::string& sandbox_id) {
  return store_.WithDatabase([&](Database& db) {
    std::vector<int64_t> commits;
    Statement select(db, "SELECT DISTINCT commit_id FROM approvals_after_commit WHERE sandbox_id = ?");
    select.Bind(1, sandbox_id);
    while (select.Step()) commits.push_back(select.ColumnInt(0));
    return commits;
  });
}

std::vector<Approval> ApprovalStore::AfterCommitOf(const std::string& sandbox_id, int64_t commit) {
  return store_.WithDatabase([&](Database& db) {
    std::vector<Approval> approvals;
    Statement select(db, "SELECT " + std::string(kDecisionColumns) +
                             " FROM approvals_after_commit WHERE sandbox_id = ? AND commit_id = ?");
    select.Bind(1, sandbox_id).Bind(2, commit);
    while (select.Step()) approvals.push_back(DecisionFromRow(select));
    return approvals;
  });
}

void ApprovalStore::SettleAfterCommit(const std::string& sandbox_id, int64_t commit, const std::vector<Approval>& kept) {
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    WriteDecisions(db, sandbox_id, kept);
    Statement(db, "DELETE FROM approvals_after_commit WHERE sandbox_id = ? AND commit_id = ?").Bind(1, sandbox_id).Bind(2, commit).Run();
    tx.Commit();
  });
}

void ApprovalStore::KeepBeforeCommit(const std::string& sandbox_id, int64_t commit) {
  store_.WithDatabase([&](Database& db) {
    Statement(db,
              "INSERT OR REPLACE INTO approvals_before_commit(sandbox_id, commit_id, root, path, fingerprint, verdict, hunks, "
              "hunk_count, partner) SELECT sandbox_id, ?, root, path, fingerprint, verdict, hunks, hunk_count, partner FROM approvals "
              "WHERE sandbox_id = ?")
        .Bind(1, commit)
        .Bind(2, sandbox_id)
        .Run();
  });
}

void ApprovalStore::TakeBackKept(const std::string& sandbox_id, int64_t commit, const std::vector<RecordKey>& taken) {
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    // What the commit took: the decision before it replaces whatever was decided of what it
    // left (the hunks left of a file taken in part are another diff than the one undone).
    Statement replace(db,
                      "INSERT OR REPLACE INTO approvals(sandbox_id, root, path, fingerprint, verdict, hunks, hunk_count, partner, content) "
                      "SELECT sandbox_id, root, path, fingerprint, verdict, hunks, hunk_count, partner, '' FROM approvals_before_commit "
                      "WHERE sandbox_id = ? AND commit_id = ? AND root = ? AND path = ?");
    for (const auto& [root, path] : taken) replace.Bind(1, sandbox_id).Bind(2, commit).Bind(3, static_cast<int64_t>(root)).Bind(4, path).Run();
    tx.Commit();
  });
}

void ApprovalStore::RestoreKept(const std::string& sandbox_id, int64_t commit) {
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    // The rest: a decision made since stays; one that is gone comes back.
    Statement(db,
              "INSERT OR IGNORE INTO approvals(sandbox_id, root, path, fingerprint, verdict, hunks, hunk_count, partner, content) "
              "SELECT sandbox_id, root, path, fingerprint, verdict, hunks, hunk_count, partner, '' FROM approvals_before_commit "
              "WHERE sandbox_id = ? AND commit_id = ?")
        .Bind(1, sandbox_id)
        .Bind(2, commit)
        .Run();
    Statement(db, "DELETE FROM approvals_before_commit WHERE sandbox_id = ? AND commit_id >= ?").Bind(1, sandbox_id).Bind(2, commit).Run();
    tx.Commit();
  });
}

void ApprovalStore::DropKept(const std::string& sandbox_id, int64_t commit) {
  store_.WithDatabase([&](Database& db) {
    Statement(db, "DELETE FROM approvals_before_commit WHERE sandbox_id = ? AND commit_id = ?").Bind(1, sandbox_id).Bind(2, commit).Run();
  });
}

}  // namespace sandboxd
