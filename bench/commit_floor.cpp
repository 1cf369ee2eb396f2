// The floor of a commit that survives a kill and can be undone (issue 41, target 4): the least
// a program must do to put a job's files live with sandboxd's data-safety rules, written
// straight, with nothing of sandboxd's own code. Against it, the rename floor alone (renames and
// a syncfs) leaves out what those rules cost.
//
//   commit-floor LIVE STAGED INDEX JOURNAL
//
// STAGED holds the job's files (as an upper layer does); those that replace a file of LIVE
// carry the overlay's two marks (user.overlay.origin and .nlink, as a copy-up leaves them) and a
// second name in INDEX (the overlay's index). One pass, in this order, as a commit must:
//   1. the change set read once: each staged entry and its live counterpart stat'ed;
//   2. the journal: the commit and one step per file in SQLite (WAL, synchronous=FULL), before
//      anything moves;
//   3. the marks: each noted (one write per batch) and taken off by name (Linux 6.13 calls);
//   4. the moves: a replaced file exchanged with its staged copy (the live one stays as the
//      backup an undo puts back), a new one renamed in;
//   5. the index's names removed (before the finish: they move the live files' ctimes);
//   6. syncfs, then the journal's finish.
// Prints the milliseconds from 1 to 6.

#include <dirent.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifndef __NR_getxattrat
#define __NR_getxattrat 464
#define __NR_removexattrat 466
#endif

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "commit-floor: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

void Sql(sqlite3* db, const char* text) {
  char* error = nullptr;
  if (sqlite3_exec(db, text, nullptr, nullptr, &error) != SQLITE_OK) {
    std::fprintf(stderr, "commit-floor: %s: %s\n", text, error ? error : "?");
    std::exit(1);
  }
}

struct Entry {
  std::string name;
  uint64_t new_ino;
  uint64_t old_ino;  // 0: a new file
};

struct XattrArgs {
  uint64_t value;
  uint32_t size;
  uint32_t flags;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: commit-floor LIVE STAGED INDEX JOURNAL\n");
    return 2;
  }
  int live = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
  int staged = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int index = open(argv[3], O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (live < 0 || staged < 0 || index < 0) Fail("cannot open the directories");
  sqlite3* db = nullptr;
  if (sqlite3_open(argv[4], &db) != SQLITE_OK) Fail("cannot open the journal");
  Sql(db, "PRAGMA journal_mode=WAL");
  Sql(db, "PRAGMA synchronous=FULL");
  Sql(db, "CREATE TABLE IF NOT EXISTS commits (id INTEGER PRIMARY KEY, state TEXT NOT NULL)");
  Sql(db, "CREATE TABLE IF NOT EXISTS steps (commit_id INTEGER, seq INTEGER, path TEXT, old_ino INTEGER, new_ino INTEGER, "
          "PRIMARY KEY (commit_id, seq))");
  std::string marks_path = std::string(argv[4]) + ".marks";

  auto start = std::chrono::steady_clock::now();
  // Each phase's milliseconds go to stderr, for a breakdown by hand.
  auto last = start;
  auto phase = [&](const char* name) {
    auto now = std::chrono::steady_clock::now();
    std::fprintf(stderr, "%-8s %8.3f ms\n", name, std::chrono::duration<double, std::milli>(now - last).count());
    last = now;
  };
  // 1. The change set, read once.
  std::vector<Entry> entries;
  DIR* dir = fdopendir(dup(staged));
  if (!dir) Fail("cannot read the staged directory");
  while (struct dirent* d = readdir(dir)) {
    if (std::strcmp(d->d_name, ".") == 0 || std::strcmp(d->d_name, "..") == 0) continue;
    struct stat st, old;
    if (fstatat(staged, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) Fail(d->d_name);
    bool replaces = fstatat(live, d->d_name, &old, AT_SYMLINK_NOFOLLOW) == 0;
    entries.push_back({d->d_name, st.st_ino, replaces ? old.st_ino : 0});
  }
  closedir(dir);

  phase("scan");
  // 2. The journal, before anything moves.
  Sql(db, "INSERT INTO commits (state) VALUES ('planning')");
  int64_t commit = sqlite3_last_insert_rowid(db);
  Sql(db, "BEGIN");
  sqlite3_stmt* insert = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO steps VALUES (?, ?, ?, ?, ?)", -1, &insert, nullptr);
  int64_t seq = 0;
  for (const auto& entry : entries) {
    sqlite3_bind_int64(insert, 1, commit);
    sqlite3_bind_int64(insert, 2, ++seq);
    sqlite3_bind_text(insert, 3, entry.name.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(insert, 4, static_cast<int64_t>(entry.old_ino));
    sqlite3_bind_int64(insert, 5, static_cast<int64_t>(entry.new_ino));
    if (sqlite3_step(insert) != SQLITE_DONE) Fail("cannot journal a step");
    sqlite3_reset(insert);
  }
  sqlite3_finalize(insert);
  Sql(db, "COMMIT");

  phase("journal");
  // 3. The marks: noted a batch at a time, then taken off.
  int note = open(marks_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (note < 0) Fail("cannot create the marks' note");
  const char* marks[] = {"user.overlay.origin", "user.overlay.nlink"};
  std::string batch;
  std::vector<const Entry*> batched;
  auto take_off = [&] {
    if (write(note, batch.data(), batch.size()) != static_cast<ssize_t>(batch.size())) Fail("cannot write the note");
    for (const Entry* entry : batched)
      for (const char* mark : marks)
        if (syscall(__NR_removexattrat, staged, entry->name.c_str(), AT_SYMLINK_NOFOLLOW, mark) != 0 && errno != ENODATA)
          Fail("cannot remove a mark of " + entry->name);
    batch.clear();
    batched.clear();
  };
  for (const auto& entry : entries) {
    if (entry.old_ino == 0) continue;
    for (const char* mark : marks) {
      char value[256];
      XattrArgs args{reinterpret_cast<uintptr_t>(value), sizeof value, 0};
      long size = syscall(__NR_getxattrat, staged, entry.name.c_str(), AT_SYMLINK_NOFOLLOW, mark, &args, sizeof args);
      if (size < 0 && errno == ENODATA) continue;
      if (size < 0) Fail("cannot read a mark of " + entry.name);
      batch += entry.name + mark + std::string(value, static_cast<size_t>(size));
    }
    batched.push_back(&entry);
    if (batched.size() == 256) take_off();
  }
  take_off();
  if (fsync(note) != 0) Fail("cannot sync the note");
  close(note);

  phase("marks");
  // 4. The moves.
  for (const auto& entry : entries) {
    const char* name = entry.name.c_str();
    int moved = entry.old_ino != 0 ? renameat2(staged, name, live, name, RENAME_EXCHANGE) : renameat(staged, name, live, name);
    if (moved != 0) Fail("cannot move " + entry.name);
  }
  phase("moves");
  // 5. The index's names.
  for (const auto& entry : entries)
    if (entry.old_ino != 0 && unlinkat(index, entry.name.c_str(), 0) != 0 && errno != ENOENT) Fail("cannot unlink " + entry.name);
  phase("index");
  // 6. Synced, then finished.
  if (syncfs(staged) != 0) Fail("cannot sync");
  Sql(db, ("UPDATE commits SET state = 'done' WHERE id = " + std::to_string(commit)).c_str());
  phase("sync+end");
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.3f\n", ms);
  sqlite3_close(db);
  return 0;
}
