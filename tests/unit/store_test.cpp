#include "store/store.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "base/errors.h"
#include "model/change_json.h"
#include "store/sqlite.h"

namespace sandboxd {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/sbx-store-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override { system(("rm -rf " + dir_).c_str()); }
  std::string dir_;
};

TEST_F(StoreTest, RecordsSurviveReopening) {
  {
    Store store(dir_ + "/db");
    store.Insert({"00000000000000aa", "proj", 1000, SandboxState::kActive, 5, {"/home/u/proj", "/home/u/lib"}});
    store.Insert({"00000000000000bb", "other", 1001, SandboxState::kActive, 6, {"/home/v/x"}});
    store.SetState("00000000000000bb", SandboxState::kSuspended);
  }
  Store store(dir_ + "/db");
  auto all = store.LoadAll();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, "00000000000000aa");
  EXPECT_EQ(all[0].roots, (std::vector<std::string>{"/home/u/proj", "/home/u/lib"}));
  EXPECT_EQ(all[0].owner, 1000u);
  EXPECT_EQ(all[1].state, SandboxState::kSuspended);
  EXPECT_EQ(all[1].roots, std::vector<std::string>{"/home/v/x"});
  store.Remove("00000000000000aa");
  EXPECT_EQ(store.LoadAll().size(), 1u);
}

// Suspend and resume are recovered from the stored state alone: each one comes back as written,
// and one this daemon does not know stops the load, naming the sandbox, rather than being read
// as some other state.
TEST_F(StoreTest, EveryStateComesBackAndAnUnknownOneIsRefused) {
  Store store(dir_ + "/db");
  store.Insert({"00000000000000aa", "proj", 1000, SandboxState::kActive, 5, {"/home/u/proj"}});
  for (SandboxState state : {SandboxState::kSuspending, SandboxState::kSuspended, SandboxState::kResuming, SandboxState::kActive}) {
    store.SetState("00000000000000aa", state);
    EXPECT_EQ(store.LoadAll().at(0).state, state) << ToString(state);
  }
  store.WithDatabase([](Database& db) { Statement(db, "UPDATE sandboxes SET state = 'hibernating'").Run(); });
  try {
    store.LoadAll();
    ADD_FAILURE() << "an unknown state was loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kFailed);
    EXPECT_NE(std::string(e.what()).find("sandbox 00000000000000aa has the unknown state 'hibernating'"), std::string::npos) << e.what();
  }
}

// Every field of the record comes back as it went in: the store keeps the record that was
// built, and a field added to SandboxRecord without a column fails here (set it below).
TEST_F(StoreTest, EveryFieldOfARecordSurvivesReopening) {
  SandboxRecord full;
  full.id = "00000000000000cc";
  full.name = "full";
  full.owner = 1234;
  full.state = SandboxState::kSuspended;
  full.created_usec = 1700000000000001;
  full.roots = {"/home/u/a", "/home/u/b"};
  full.stores = {"/home/.sandboxd", ""};
  full.root_handles = {"1:0200000000000000", ""};
  full.network = true;
  full.shared = true;
  full.quota_bytes = 10u << 20;
  full.hard_quota = true;
  full.ttl_sec = 3600;
  full.last_used_usec = 1700000000000002;
  full.hide = {"/home/u/a/.ssh", "/home/u/secret, with comma"};
  {
    Store store(dir_ + "/db");
    store.Insert(full);
  }
  Store store(dir_ + "/db");
  auto all = store.LoadAll();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0] == full);
  EXPECT_EQ(all[0].hide, full.hide);
  EXPECT_EQ(all[0].last_used_usec, full.last_used_usec);
  EXPECT_EQ(all[0].stores, full.stores);
  EXPECT_EQ(all[0].root_handles, full.root_handles);
}

// A sandbox made before records kept its roots' handles gains them once the daemon has taken
// them (SandboxRegistry::Recover), and keeps them across a reopening.
TEST_F(StoreTest, RootHandlesSetLaterSurviveReopening) {
  SandboxRecord old{"00000000000000dd", "old", 1000, SandboxState::kActive, 5, {"/home/u/a", "/home/u/b"}};
  {
    Store store(dir_ + "/db");
    store.Insert(old);
    EXPECT_EQ(store.LoadAll()[0].root_handles, (std::vector<std::string>{"", ""}));
    store.SetRootHandles(old.id, {"1:aa", "1:bb"});
  }
  Store store(dir_ + "/db");
  EXPECT_EQ(store.LoadAll()[0].root_handles, (std::vector<std::string>{"1:aa", "1:bb"}));
}

TEST_F(StoreTest, ADatabaseFromBeforeTheNetworkColumnGainsItAndKeepsItsRows) {
  {
    // The schema as the first versions wrote it.
    Database old(dir_ + "/db");
    old.Exec("CREATE TABLE sandboxes (id TEXT PRIMARY KEY, name TEXT NOT NULL, owner INTEGER NOT NULL, "
             "state TEXT NOT NULL, created_usec INTEGER NOT NULL)");
    old.Exec("CREATE TABLE roots (sandbox_id TEXT NOT NULL REFERENCES sandboxes(id) ON DELETE CASCADE, "
             "idx INTEGER NOT NULL, path TEXT NOT NULL, PRIMARY KEY (sandbox_id, idx))");
    old.Exec("INSERT INTO sandboxes VALUES ('00000000000000aa', 'old', 1000, 'active', 5)");
    old.Exec("INSERT INTO roots VALUES ('00000000000000aa', 0, '/home/u/old')");
  }
  Store store(dir_ + "/db");
  SandboxRecord online{"00000000000000bb", "online", 1000, SandboxState::kActive, 6, {"/home/u/net"}};
  online.network = true;
  store.Insert(online);
  auto all = store.LoadAll();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].roots, std::vector<std::string>{"/home/u/old"});
  EXPECT_EQ(all[0].root_handles, std::vector<std::string>{""}) << "an old record's roots are of unknown handle";
  EXPECT_FALSE(all[0].network);
  EXPECT_TRUE(all[1].network);
}

TEST_F(StoreTest, DuplicateIdIsRefusedAndLeavesNoPartialRow) {
  Store store(dir_ + "/db");
  store.Insert({"00000000000000aa", "proj", 1000, SandboxState::kActive, 5, {"/a"}});
  EXPECT_THROW(store.Insert({"00000000000000aa", "again", 1000, SandboxState::kActive, 6, {"/b"}}), Error);
  auto all = store.LoadAll();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].roots, std::vector<std::string>{"/a"});
}

TEST(ChangeJsonTest, RoundTrip) {
  Change change{"a/b", ChangeKind::kTypeChanged, EntryType::kFile, EntryType::kSymlink, 0644, 0777};
  EXPECT_EQ(ChangeFromJson(ChangeToJson(change)), change);
  EXPECT_THROW(ChangeFromJson(nlohmann::json{{"path", "x"}}), Error);
}

// A sandbox of a million changes leaves hundreds of MiB of rows (sights, decisions, commit
// steps); once it is destroyed, the file shrinks back, the write-ahead log with it.
TEST_F(StoreTest, TheSpaceOfRemovedRecordsGoesBackToTheFileSystem) {
  auto on_disk = [&] {
    struct stat db, wal;
    off_t bytes = stat((dir_ + "/db").c_str(), &db) == 0 ? db.st_size : 0;
    if (stat((dir_ + "/db-wal").c_str(), &wal) == 0) bytes += wal.st_size;
    return bytes;
  };
  Store store(dir_ + "/db");
  store.Insert({"00000000000000aa", "big", 1000, SandboxState::kActive, 5, {"/home/u/big"}});
  store.WithDatabase([](Database& db) {
    db.Exec("CREATE TABLE bulk (sandbox_id TEXT NOT NULL REFERENCES sandboxes(id) ON DELETE CASCADE, data BLOB)");
    Transaction tx(db);
    for (int i = 0; i < 4000; ++i) db.Exec("INSERT INTO bulk VALUES ('00000000000000aa', zeroblob(4096))");
    tx.Commit();
  });
  off_t full = on_disk();
  ASSERT_GT(full, 16 << 20);
  store.Remove("00000000000000aa");
  store.GiveBackSpace();
  EXPECT_LT(on_disk(), 1 << 20) << "of " << full << " bytes";
}

}  // namespace
}  // namespace sandboxd
