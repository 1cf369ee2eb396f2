#pragma once
/// Thin RAII over SQLite: Database (one connection), Statement (prepared, reset on reuse) and
/// Transaction (rolls back unless commit() was called). Errors become Error(kFailed) naming the
/// statement. Not thread-safe by itself: the Store serialises access.

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace sandboxd {

class Database {
 public:
  explicit Database(const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void Exec(const std::string& sql);
  sqlite3* handle() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int index, std::string_view value);
  Statement& Bind(int index, int64_t value);
  /// Advances; true while a row is available.
  bool Step();
  /// Runs a statement that returns no rows, then resets it for reuse.
  void Run();
  /// Makes the statement ready to run again (after Step() returned false).
  void Reset();
  std::string ColumnText(int index) const;
  int64_t ColumnInt(int index) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  void Commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace sandboxd
