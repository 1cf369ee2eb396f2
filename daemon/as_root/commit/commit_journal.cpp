#include "commit/commit_journal.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "base/errors.h"
#include "runtime/clock.h"
#include "runtime/file_clock.h"

namespace sandboxd {
namespace {

constexpr const char* kJournalSchema = R"sql(
CREATE TABLE IF NOT EXISTS commits (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sandbox_id TEXT NOT NULL REFERENCES sandboxes(id) ON DELETE CASCADE,
  state TEXT NOT NULL,
  started_usec INTEGER NOT NULL,
  staged INTEGER NOT NULL DEFAULT 0,
  finished_usec INTEGER NOT NULL DEFAULT 0,
  forced INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS commit_steps (
  commit_id INTEGER NOT NULL REFERENCES commits(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  root INTEGER NOT NULL,
  path TEXT NOT NULL,
  action TEXT NOT NULL,
  old_ino INTEGER NOT NULL,
  new_ino INTEGER NOT NULL,
  old_mode INTEGER NOT NULL,
  new_mode INTEGER NOT NULL,
  from_path TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (commit_id, seq)
);
)sql";

/// When a commit or undo ends: the file clock's next tick, so that every entry it changed has a
/// ctime before it and every live change after it one at or after it (undo_check.h).
int64_t FinishedUsec() { return FileClockNextTickNs() / 1000; }

/// A state read back from the journal. A name this daemon does not know (a journal of a newer
/// sandboxd, or edited by hand) stops recovery with a message rather than being guessed at.
CommitState StoredState(int64_t id, const std::string& name) {
  auto state = CommitStateFromString(name);
  if (!state) throw Error(Code::kFailed, "commit " + std::to_string(id) + " has the unknown state '" + name + "' in the journal");
  return *state;
}

}  // namespace

CommitJournal::CommitJournal(Store& store) : store_(store) {
  store_.WithDatabase([](Database& db) {
    db.Exec(kJournalSchema);
    // Databases written before staged (partial) commits lack staged and finished_usec, those
    // written before renames from_path, those written before undos of undos forced.
    const std::pair<const char*, const char*> columns[] = {{"commits", "staged INTEGER NOT NULL DEFAULT 0"},
                                                           {"commits", "finished_usec INTEGER NOT NULL DEFAULT 0"},
                                                           {"commit_steps", "from_path TEXT NOT NULL DEFAULT ''"},
                                                           {"commits", "forced INTEGER NOT NULL DEFAULT 0"}};
    for (const auto& [table, column] : columns) {
      std::string name(column, std::string_view(column).find(' '));
      bool present = false;
      Statement info(db, std::string("SELECT name FROM pragma_table_info('") + table + "')");
      while (info.Step()) present |= info.ColumnText(0) == name;
      if (!present) db.Exec(std::string("ALTER TABLE ") + table + " ADD COLUMN " + column);
    }
  });
}

int64_t CommitJournal::BeginStaging(const std::string& sandbox_id, bool forced) {
  return store_.WithDatabase([&](Database& db) {
    Statement(db, "INSERT INTO commits(sandbox_id, state, started_usec, staged, forced) VALUES (?, ?, ?, 1, ?)")
        .Bind(1, sandbox_id)
        .Bind(2, ToString(CommitState::kStaging))
        .Bind(3, TheSystemClock().NowUsec())
        .Bind(4, int64_t{forced})
        .Run();
    return sqlite3_last_insert_rowid(db.handle());
  });
}

int64_t CommitJournal::BeginPlanning(const std::string& sandbox_id, bool forced) {
  return store_.WithDatabase([&](Database& db) {
    Statement(db, "INSERT INTO commits(sandbox_id, state, started_usec, forced) VALUES (?, ?, ?, ?)")
        .Bind(1, sandbox_id)
        .Bind(2, ToString(CommitState::kPlanning))
        .Bind(3, TheSystemClock().NowUsec())
        .Bind(4, int64_t{forced})
        .Run();
    return sqlite3_last_insert_rowid(db.handle());
  });
}

void CommitJournal::Abandon(int64_t id) {
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    Statement state(db, "SELECT state FROM commits WHERE id = ?");
    state.Bind(1, id);
    if (!state.Step() || state.ColumnText(0) != ToString(CommitState::kPlanning)) return;  // (rolled back by tx)
    Statement(db, "DELETE FROM commit_steps WHERE commit_id = ?").Bind(1, id).Run();
    Statement(db, "DELETE FROM commits WHERE id = ?").Bind(1, id).Run();
    tx.Commit();
  });
}

void CommitJournal::AppendSteps(int64_t id, const std::vector<CommitStep>& steps) {
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    WriteSteps(db, id, steps);
    tx.Commit();
  });
}

void CommitJournal::ForgetSteps(int64_t id) {
  store_.WithDatabase([&](Database& db) { Statement(db, "DELETE FROM commit_steps WHERE commit_id = ?").Bind(1, id).Run(); });
}

void CommitJournal::ForEachStepPage(int64_t id, bool reverse, size_t page,
                                    const std::function<void(const std::vector<CommitStep>&)>& visit) {
  // Each page is its own query from where the last ended (the primary key orders them): no
  // read stays open while `visit` runs, which may take minutes and write to the store.
  std::vector<CommitStep> steps;
  int64_t next = reverse ? INT64_MAX : -1;
  for (;;) {
    steps.clear();
    store_.WithDatabase([&](Database& db) {
      Statement select(db, reverse ? "SELECT seq, root, path, action, old_ino, new_ino, old_mode, new_mode, from_path FROM commit_steps "
                                     "WHERE commit_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?"
                                   : "SELECT seq, root, path, action, old_ino, new_ino, old_mode, new_mode, from_path FROM commit_steps "
                                     "WHERE commit_id = ? AND seq > ? ORDER BY seq LIMIT ?");
      select.Bind(1, id).Bind(2, next).Bind(3, static_cast<int64_t>(page));
      while (select.Step()) steps.push_back(ReadStep(select, id));
    });
    if (steps.empty()) return;
    next = static_cast<int64_t>(steps.back().seq);
    if (reverse) std::reverse(steps.begin(), steps.end());
    visit(steps);
    if (steps.size() < page) return;
  }
}

uint64_t CommitJournal::StepCount(int64_t id) {
  int64_t count = 0;
  store_.WithDatabase([&](Database& db) {
    Statement select(db, "SELECT COUNT(*) FROM commit_steps WHERE commit_id = ?");
    select.Bind(1, id);
    if (select.Step()) count = select.ColumnInt(0);
  });
  return static_cast<uint64_t>(count);
}

void CommitJournal::Journal(int64_t id, const std::vector<CommitStep>& steps) {
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    WriteSteps(db, id, steps);
    SetState(db, id, CommitState::kApplying);
    tx.Commit();
  });
}

void CommitJournal::BeginUndo(int64_t id, const std::vector<CommitStep>& steps) {
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    Statement(db, "DELETE FROM commit_steps WHERE commit_id = ?").Bind(1, id).Run();
    WriteSteps(db, id, steps);
    SetState(db, id, CommitState::kUndoing);
    tx.Commit();
  });
}

void CommitJournal::WriteSteps(Database& db, int64_t id, const std::vector<CommitStep>& steps) {
  Statement insert(db,
                     "INSERT INTO commit_steps(commit_id, seq, root, path, action, old_ino, new_ino, old_mode, new_mode, from_path) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const auto& step : steps)
      insert.Bind(1, id)
          .Bind(2, static_cast<int64_t>(step.seq))
          .Bind(3, static_cast<int64_t>(step.root))
          .Bind(4, step.path)
          .Bind(5, ToString(step.action))
          .Bind(6, static_cast<int64_t>(step.old_ino))
          .Bind(7, static_cast<int64_t>(step.new_ino))
          .Bind(8, static_cast<int64_t>(step.old_mode))
          .Bind(9, static_cast<int64_t>(step.new_mode))
          .Bind(10, step.from)
          .Run();
}

void CommitJournal::Finish(int64_t id) {
  store_.WithDatabase([&](Database& db) {
    SetFinished(db, id, CommitState::kDone);
  });
}

std::optional<CommitState> CommitJournal::StateOf(int64_t id) {
  return store_.WithDatabase([&](Database& db) -> std::optional<CommitState> {
    Statement select(db, "SELECT state FROM commits WHERE id = ?");
    select.Bind(1, id);
    if (!select.Step()) return std::nullopt;
    return StoredState(id, select.ColumnText(0));
  });
}

int64_t CommitJournal::LastFinishedUsec(const std::string& sandbox_id) {
  return store_.WithDatabase([&](Database& db) {
    Statement select(db,
                     "SELECT COALESCE(MAX(finished_usec), 0) FROM commits WHERE sandbox_id = ? AND state IN (?, ?)");
    select.Bind(1, sandbox_id).Bind(2, ToString(CommitState::kDone)).Bind(3, ToString(CommitState::kUndone));
    return select.Step() ? select.ColumnInt(0) : int64_t{0};
  });
}

void CommitJournal::SetState(int64_t id, CommitState state) {
  store_.WithDatabase([&](Database& db) { SetState(db, id, state); });
}

void CommitJournal::SetState(Database& db, int64_t id, CommitState state) {
  Statement(db, "UPDATE commits SET state = ? WHERE id = ?").Bind(1, ToString(state)).Bind(2, id).Run();
}

void CommitJournal::SetFinished(Database& db, int64_t id, CommitState state) {
  Statement(db, "UPDATE commits SET state = ?, finished_usec = ? WHERE id = ?").Bind(1, ToString(state)).Bind(2, FinishedUsec()).Bind(3, id).Run();
}

std::vector<JournaledCommit> CommitJournal::Unfinished(const std::string& sandbox_id) {
  // Every state but the finished ones, so that a state this daemon does not know is refused
  // (StoredState) rather than passed over as finished.
  return store_.WithDatabase([&](Database& db) {
    return Select(db, sandbox_id, "state NOT IN (?2, ?3, ?4) ORDER BY id", {CommitState::kDone, CommitState::kRolledBack, CommitState::kUndone});
  });
}

std::optional<JournaledCommit> CommitJournal::LastDone(const std::string& sandbox_id) {
  auto commits = store_.WithDatabase([&](Database& db) { return Select(db, sandbox_id, "state = ?2 ORDER BY id DESC LIMIT 1", {CommitState::kDone}); });
  if (commits.empty()) return std::nullopt;
  return commits.front();
}

namespace {

/// The states of a commit that went live: done, and an undo's (under way or finished).
constexpr CommitState kLiveStates[] = {CommitState::kDone, CommitState::kImporting, CommitState::kUndoing, CommitState::kReturning,
                                       CommitState::kUndone};

/// "(?F, ?F+1, ...)": a parameter for each live state, numbered from `first`; BindLiveStates
/// binds them.
std::string LiveStatesParameters(int first) {
  std::string list;
  for (size_t i = 0; i < std::size(kLiveStates); ++i) list += (i ? ", ?" : "?") + std::to_string(first + static_cast<int>(i));
  return "(" + list + ")";
}

void BindLiveStates(Statement& statement, int first) {
  for (size_t i = 0; i < std::size(kLiveStates); ++i) statement.Bind(first + static_cast<int>(i), ToString(kLiveStates[i]));
}

}  // namespace

std::vector<LoggedCommit> CommitJournal::LiveCommits(const std::string& sandbox_id, size_t max_paths) {
  std::vector<LoggedCommit> commits;
  store_.WithDatabase([&](Database& db) {
    Statement select(db, "SELECT id, state, started_usec, finished_usec, (SELECT COUNT(*) FROM commit_steps WHERE commit_id = commits.id) "
                         "FROM commits WHERE sandbox_id = ?1 AND state IN " + LiveStatesParameters(2) + " ORDER BY id");
    select.Bind(1, sandbox_id);
    BindLiveStates(select, 2);
    while (select.Step()) {
      LoggedCommit commit;
      commit.number = static_cast<int64_t>(commits.size()) + 1;
      commit.id = select.ColumnInt(0);
      commit.undone = StoredState(commit.id, select.ColumnText(1)) != CommitState::kDone;
      commit.started_usec = select.ColumnInt(2);
      commit.finished_usec = select.ColumnInt(3);
      commit.entries = static_cast<uint64_t>(select.ColumnInt(4));
      commits.push_back(std::move(commit));
    }
    if (max_paths == 0) return;
    Statement paths(db, "SELECT root, path FROM commit_steps WHERE commit_id = ? ORDER BY seq LIMIT ?");
    for (auto& commit : commits) {
      paths.Bind(1, commit.id).Bind(2, static_cast<int64_t>(max_paths));
      while (paths.Step()) commit.paths.emplace_back(static_cast<size_t>(paths.ColumnInt(0)), paths.ColumnText(1));
      paths.Reset();
    }
  });
  return commits;
}

int64_t CommitJournal::NumberOf(const std::string& sandbox_id, int64_t id) {
  return store_.WithDatabase([&](Database& db) {
    Statement count(db, "SELECT COUNT(*) FROM commits WHERE sandbox_id = ?1 AND id <= ?2 AND state IN " + LiveStatesParameters(3));
    count.Bind(1, sandbox_id).Bind(2, id);
    BindLiveStates(count, 3);
    return count.Step() ? count.ColumnInt(0) : int64_t{0};
  });
}

std::vector<JournaledCommit> CommitJournal::Select(Database& db, const std::string& sandbox_id, const char* condition,
                                                  std::initializer_list<CommitState> states) {
  std::vector<JournaledCommit> commits;
  Statement select(db, std::string("SELECT id, state, staged, finished_usec FROM commits WHERE sandbox_id = ?1 AND ") + condition);
  select.Bind(1, sandbox_id);
  int parameter = 2;
  for (CommitState state : states) select.Bind(parameter++, ToString(state));
  while (select.Step())
    commits.push_back({select.ColumnInt(0), sandbox_id, StoredState(select.ColumnInt(0), select.ColumnText(1)), select.ColumnInt(2) != 0,
                       select.ColumnInt(3)});
  return commits;
}

void CommitJournal::FinishUndo(int64_t id, const std::vector<InodeAlias>& aliases) {
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    // A placed entry is known by its new inode, a moved one by its old (the same inode).
    Statement rename_placed(db,
                            "UPDATE commit_steps SET new_ino = ?1 WHERE root = ?2 AND path = ?3 AND new_ino = ?4 AND "
                            "action = ?6 AND commit_id IN (SELECT id FROM commits WHERE state = ?7 AND id < ?5 "
                            "AND sandbox_id = (SELECT sandbox_id FROM commits WHERE id = ?5))");
    Statement rename_moved(db,
                           "UPDATE commit_steps SET old_ino = ?1 WHERE root = ?2 AND path = ?3 AND old_ino = ?4 AND "
                           "action = ?6 AND commit_id IN (SELECT id FROM commits WHERE state = ?7 AND id < ?5 "
                           "AND sandbox_id = (SELECT sandbox_id FROM commits WHERE id = ?5))");
    for (const auto& alias : aliases)
      for (Statement* update : {&rename_placed, &rename_moved}) {
        update->Bind(1, static_cast<int64_t>(alias.restored))
            .Bind(2, static_cast<int64_t>(alias.root))
            .Bind(3, alias.path)
            .Bind(4, static_cast<int64_t>(alias.original))
            .Bind(5, id)
            .Bind(6, ToString(update == &rename_placed ? StepAction::kPlace : StepAction::kMove))
            .Bind(7, ToString(CommitState::kDone))
            .Run();
      }
    SetFinished(db, id, CommitState::kUndone);
    tx.Commit();
  });
}

PutBackTimes CommitJournal::PutBackSince(const std::string& sandbox_id, int64_t id) {
  return store_.WithDatabase([&](Database& db) {
    PutBackTimes times;
    Statement select(db,
                     "SELECT s.root, s.path, s.from_path, c.finished_usec FROM commit_steps s JOIN commits c ON s.commit_id = c.id "
                     "WHERE c.sandbox_id = ? AND c.id > ? AND c.state = ? AND c.forced = 0");
    select.Bind(1, sandbox_id).Bind(2, id).Bind(3, ToString(CommitState::kUndone));
    while (select.Step()) {
      size_t root = static_cast<size_t>(select.ColumnInt(0));
      int64_t ns = select.ColumnInt(3) * 1000;
      for (const std::string& path : {select.ColumnText(1), select.ColumnText(2)}) {
        if (path.empty()) continue;
        int64_t& at = times[{root, path}];
        at = std::max(at, ns);
      }
    }
    return times;
  });
}

CommitStep CommitJournal::ReadStep(Statement& select, int64_t commit) {
  CommitStep step;
  step.seq = static_cast<size_t>(select.ColumnInt(0));
  step.root = static_cast<size_t>(select.ColumnInt(1));
  step.path = select.ColumnText(2);
  auto action = StepActionFromString(select.ColumnText(3));
  if (!action) throw Error(Code::kFailed, "commit " + std::to_string(commit) + " has a step of unknown kind in the journal");
  step.action = *action;
  step.old_ino = static_cast<ino_t>(select.ColumnInt(4));
  step.new_ino = static_cast<ino_t>(select.ColumnInt(5));
  step.old_mode = static_cast<mode_t>(select.ColumnInt(6));
  step.new_mode = static_cast<mode_t>(select.ColumnInt(7));
  step.from = select.ColumnText(8);
  return step;
}

std::vector<CommitStep> CommitJournal::StepsOf(int64_t id) {
  std::vector<CommitStep> steps;
  ForEachStepPage(id, false, 65536, [&](const std::vector<CommitStep>& page) { steps.insert(steps.end(), page.begin(), page.end()); });
  return steps;
}

}  // namespace sandboxd
