#include "review/review_log.h"

#include <nlohmann/json.hpp>

#include "base/name_table.h"

namespace sandboxd {
namespace {

constexpr const char* kReviewLogSchema = R"sql(
CREATE TABLE IF NOT EXISTS review_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  sandbox_id TEXT NOT NULL REFERENCES sandboxes(id) ON DELETE CASCADE,
  time_usec INTEGER NOT NULL,
  act TEXT NOT NULL,
  what TEXT NOT NULL,
  note TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS review_log_of_sandbox ON review_log(sandbox_id, seq);
)sql";

constexpr std::pair<ReviewAct, std::string_view> kActNames[] = {
    {ReviewAct::kApproved, "approved"},   {ReviewAct::kRejected, "rejected"},   {ReviewAct::kReviewAsked, "review-asked"},
    {ReviewAct::kCommitted, "committed"}, {ReviewAct::kDiscarded, "discarded"},
};

ReviewEntry EntryOf(const Statement& row) {
  ReviewEntry entry;
  entry.time_usec = row.ColumnInt(0);
  entry.act = ReviewActFromString(row.ColumnText(1)).value_or(ReviewAct::kApproved);
  auto what = nlohmann::json::parse(row.ColumnText(2), nullptr, false);
  if (what.is_array())
    for (const auto& item : what)
      if (item.is_string()) entry.what.push_back(item.get<std::string>());
  entry.note = row.ColumnText(3);
  return entry;
}

}  // namespace

std::string_view ToString(ReviewAct act) { return NameOf(kActNames, act, "approved"); }
std::optional<ReviewAct> ReviewActFromString(std::string_view text) { return ValueOf<ReviewAct>(kActNames, text); }

ReviewLog::ReviewLog(Store& store) : store_(store) {
  store_.WithDatabase([](Database& db) { db.Exec(kReviewLogSchema); });
}

void ReviewLog::Add(const std::string& sandbox_id, ReviewEntry entry) {
  if (entry.what.size() > kMaxWhat) {
    const size_t more = entry.what.size() - kMaxWhat;
    entry.what.resize(kMaxWhat);
    entry.what.push_back("... and " + std::to_string(more) + " more");
  }
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    // A request again while the last one still waits takes its place: whoever asks (an agent,
    // in a loop) cannot push the owner's decisions and notes out of the log.
    if (entry.act == ReviewAct::kReviewAsked) {
      Statement latest(db, "SELECT seq, act FROM review_log WHERE sandbox_id = ? ORDER BY seq DESC LIMIT 1");
      latest.Bind(1, sandbox_id);
      if (latest.Step() && latest.ColumnText(1) == ToString(ReviewAct::kReviewAsked)) {
        Statement(db, "UPDATE review_log SET time_usec = ?, note = ? WHERE seq = ?")
            .Bind(1, entry.time_usec)
            .Bind(2, entry.note)
            .Bind(3, latest.ColumnInt(0))
            .Run();
        tx.Commit();
        return;
      }
    }
    Statement(db, "INSERT INTO review_log(sandbox_id, time_usec, act, what, note) VALUES (?, ?, ?, ?, ?)")
        .Bind(1, sandbox_id)
        .Bind(2, entry.time_usec)
        .Bind(3, ToString(entry.act))
        .Bind(4, nlohmann::json(entry.what).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
        .Bind(5, entry.note)
        .Run();
    Statement(db,
              "DELETE FROM review_log WHERE sandbox_id = ?1 AND seq <= "
              "(SELECT seq FROM review_log WHERE sandbox_id = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2)")
        .Bind(1, sandbox_id)
        .Bind(2, static_cast<int64_t>(kKeptEntries))
        .Run();
    tx.Commit();
  });
}

std::vector<ReviewEntry> ReviewLog::Recent(const std::string& sandbox_id, size_t limit) {
  std::vector<ReviewEntry> entries;
  store_.WithDatabase([&](Database& db) {
    Statement rows(db, "SELECT time_usec, act, what, note FROM review_log WHERE sandbox_id = ? ORDER BY seq DESC LIMIT ?");
    rows.Bind(1, sandbox_id).Bind(2, static_cast<int64_t>(limit));
    while (rows.Step()) entries.push_back(EntryOf(rows));
  });
  return entries;
}

std::optional<ReviewEntry> ReviewLog::OpenRequest(const std::string& sandbox_id) {
  std::optional<ReviewEntry> open;
  store_.WithDatabase([&](Database& db) {
    // The latest entry that is either a request or an act of the owner's: a request, if the
    // latest, is still open.
    Statement row(db, "SELECT time_usec, act, what, note FROM review_log WHERE sandbox_id = ? ORDER BY seq DESC LIMIT 1");
    row.Bind(1, sandbox_id);
    if (row.Step()) {
      ReviewEntry latest = EntryOf(row);
      if (latest.act == ReviewAct::kReviewAsked) open = std::move(latest);
    }
  });
  return open;
}

}  // namespace sandboxd
