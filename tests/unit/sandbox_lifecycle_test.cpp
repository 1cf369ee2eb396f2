// A sandbox's life in the registry without privilege: overlays recorded rather than mounted
// (recorded_mounts.h), the test as nobody when the binary is root (unprivileged.h). What must
// hold: a create is all there or not at all; what a sandbox was made with survives a restart
// (the registry loaded again from the store, as the daemon at start-up), whole; a destroyed
// sandbox leaves nothing behind, and the start-up sweep takes only what has no record; a root
// is the directory the sandbox was made over, or refused.

#include "sandbox/sandbox_registry.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/fs_util.h"
#include "sandbox_world.h"
#include "store/sqlite.h"

namespace sandboxd {
namespace {

using testing::Exists;
using testing::ReadFile;
using testing::WriteFile;

class SandboxLifecycleTest : public testing::SandboxWorldTest {
 protected:
  void SetUp() override {
    MakeDirectory(live_, 0755);
    WriteFile(live_ + "/file", "live\n");
  }

  CreateRequest Request() const {
    CreateRequest request;
    request.roots = {live_};
    request.name = "calc";
    request.network = true;
    request.shared = true;
    request.quota_bytes = 64 << 20;
    request.ttl_sec = 3600;
    request.hide = {"/etc/hostname"};
    return request;
  }

  const std::string live_ = temp_ / "live";
  UserCredentials owner_ = LookupUser(geteuid());
};

TEST_F(SandboxLifecycleTest, WhatASandboxWasMadeWithSurvivesARestartWhole) {
  std::shared_ptr<Sandbox> made;
  {
    SandboxRegistry registry(layout_, store_);
    made = registry.Create(Request(), owner_, [](const std::vector<std::string>&) {});
    EXPECT_TRUE(mounts_.IsMounted(made->paths().MergedDir(0)));
    EXPECT_TRUE(Exists(made->paths().UpperDir(0)));
    WriteFile(made->paths().UpperDir(0) + "/new", "made in the sandbox\n");
    made->Unmount();  // the daemon's end
  }
  SandboxRegistry again(layout_, store_);
  EXPECT_TRUE(again.Recover().empty());
  auto found = again.Find("calc", geteuid());
  ASSERT_NE(found, nullptr) << "the sandbox is gone after a restart";
  EXPECT_EQ(found->record(), made->record()) << "a setting was dropped or changed across a restart";
  EXPECT_TRUE(found->network());
  EXPECT_TRUE(found->shared());
  EXPECT_EQ(found->quota_bytes(), uint64_t{64} << 20);
  EXPECT_EQ(found->ttl_sec(), 3600u);
  EXPECT_EQ(found->hide(), std::vector<std::string>{"/etc/hostname"});
  EXPECT_TRUE(mounts_.IsMounted(found->paths().MergedDir(0))) << "the sandbox was not set up again";
  EXPECT_EQ(ReadFile(found->paths().UpperDir(0) + "/new"), "made in the sandbox\n");
}

TEST_F(SandboxLifecycleTest, ACreateItsCallerMayNotMakeLeavesNothing) {
  SandboxRegistry registry(layout_, store_);
  EXPECT_THROW(registry.Create(Request(), owner_,
                               [](const std::vector<std::string>&) { throw Error(Code::kAccessDenied, "not authorized"); }),
               Error);
  EXPECT_TRUE(store_.LoadAll().empty());
  EXPECT_EQ(registry.size(), 0u);
  EXPECT_TRUE(ListDirectory(layout_.SandboxesDir()).empty()) << "a refused create left layers";
  EXPECT_TRUE(ListDirectory(layout_.run_dir()).empty()) << "a refused create left a run dir";
  EXPECT_TRUE(mounts_.mounted().empty());
  // And the name is free again.
  EXPECT_NO_THROW(registry.Create(Request(), owner_, [](const std::vector<std::string>&) {}));
}

TEST_F(SandboxLifecycleTest, ADestroyedSandboxLeavesNothingAndTheSweepTakesOnlyWhatHasNoRecord) {
  SandboxRegistry registry(layout_, store_);
  auto kept = registry.Create(Request(), owner_, [](const std::vector<std::string>&) {});
  CreateRequest other = Request();
  other.name = "other";
  auto gone = registry.Create(other, owner_, [](const std::vector<std::string>&) {});
  WriteFile(gone->paths().UpperDir(0) + "/new", "made in the sandbox\n");
  // Destroy, as the daemon does it: the record first, then the mounts and files.
  registry.Forget(gone->id());
  gone->gate().MarkDestroyed();
  gone->UnmountForGood();
  registry.RemoveFiles(gone->id(), gone->record().stores);
  registry.EmptyTrash();
  EXPECT_FALSE(Exists(layout_.SandboxDir(gone->id())));
  EXPECT_FALSE(Exists(layout_.RunSandboxDir(gone->id())));
  EXPECT_FALSE(mounts_.IsMounted(gone->paths().MergedDir(0)));
  EXPECT_EQ(store_.LoadAll().size(), 1u);
  // Remains of a sandbox with no record (a destroy cut off before its files went): swept at
  // the next start; the kept sandbox stays whole.
  const std::string orphan = "00000000000000bb";
  MakeDirectories(layout_.UpperDir(orphan, 0), 0755);
  MakeDirectories(layout_.MergedDir(orphan, 0), 0700);
  SandboxRegistry restarted(layout_, store_);
  EXPECT_TRUE(restarted.Recover().empty());
  EXPECT_EQ(restarted.SweepOrphans(), std::vector<std::string>{orphan});
  restarted.EmptyTrash();
  EXPECT_FALSE(Exists(layout_.SandboxDir(orphan)));
  EXPECT_FALSE(Exists(layout_.RunSandboxDir(orphan)));
  EXPECT_TRUE(Exists(kept->paths().UpperDir(0)));
  EXPECT_NE(restarted.FindById(kept->id()), nullptr);
  EXPECT_EQ(ReadFile(live_ + "/file"), "live\n");
}

// A record this daemon cannot read (a newer sandboxd's state) must not keep every other sandbox
// down, and must not be taken for the remains of a destroyed one: its layers stay.
TEST_F(SandboxLifecycleTest, ARecordThisDaemonCannotReadKeepsOnlyItsSandboxDownAndLosesNothing) {
  std::shared_ptr<Sandbox> odd, fine;
  {
    SandboxRegistry registry(layout_, store_);
    odd = registry.Create(Request(), owner_, [](const std::vector<std::string>&) {});
    CreateRequest other = Request();
    other.name = "other";
    other.roots = {temp_ / "other"};
    MakeDirectory(temp_ / "other", 0755);
    fine = registry.Create(other, owner_, [](const std::vector<std::string>&) {});
    WriteFile(odd->paths().UpperDir(0) + "/new", "made in the sandbox\n");
  }
  store_.WithDatabase([&](Database& db) {
    Statement(db, "UPDATE sandboxes SET state = 'hibernating' WHERE id = ?").Bind(1, odd->id()).Run();
  });
  SandboxRegistry restarted(layout_, store_);
  auto failures = restarted.Recover();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].first, odd->id());
  EXPECT_NE(failures[0].second.find("unknown state 'hibernating'"), std::string::npos) << failures[0].second;
  EXPECT_NE(restarted.FindById(fine->id()), nullptr) << "one unreadable record kept the others down";
  EXPECT_EQ(restarted.FindById(odd->id()), nullptr);
  EXPECT_TRUE(restarted.SweepOrphans().empty()) << "the unreadable sandbox's layers were swept as an orphan's";
  restarted.EmptyTrash();
  EXPECT_EQ(ReadFile(odd->paths().UpperDir(0) + "/new"), "made in the sandbox\n");
}

}  // namespace
// A directory put at a root's path after create is not the root: every opening of it by path
// refuses, before and after a restart, and the sandbox is whole again once its directory is back.
TEST_F(SandboxLifecycleTest, ADirectoryPutInPlaceOfARootIsRefusedAcrossARestart) {
  auto made = Create(Request());
  ASSERT_FALSE(made->record().root_handles.at(0).empty()) << "no handle was kept at create";
  EXPECT_NO_THROW(made->OpenLiveRoot(0));
  ASSERT_EQ(rename(live_.c_str(), (live_ + ".moved").c_str()), 0);
  MakeDirectory(live_, 0755);
  auto refused = [&](const Sandbox& sandbox) {
    try {
      sandbox.OpenLiveRoot(0);
      ADD_FAILURE() << "a directory put in place of the root was opened as the root";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInvalidState);
      EXPECT_NE(std::string(e.what()).find("root " + live_ + " of sandbox " + made->id() + " is no longer the directory"),
                std::string::npos)
          << e.what();
    }
  };
  refused(*made);
  made->Unmount();
  SandboxRegistry again(layout_, store_);
  again.Recover();
  auto found = again.Find("calc", geteuid());
  ASSERT_NE(found, nullptr);
  refused(*found);
  ASSERT_EQ(rmdir(live_.c_str()), 0);
  ASSERT_EQ(rename((live_ + ".moved").c_str(), live_.c_str()), 0);
  UniqueFd live = found->OpenLiveRoot(0);
  EXPECT_TRUE(Exists(live_ + "/file"));
}

// An exclusive operation (a commit, an undo) acts on one directory per root from its first
// opening to its end, even if the path is made to lead elsewhere half-way; the next operation
// opens the path again and is refused.
TEST_F(SandboxLifecycleTest, AnOperationKeepsTheRootItOpenedFirst) {
  auto made = Create(Request());
  struct stat first, again;
  {
    ExclusiveOperation operation(made->gate(), "commit");
    ASSERT_EQ(fstat(made->OpenLiveRoot(0).get(), &first), 0);
    ASSERT_EQ(rename(live_.c_str(), (live_ + ".moved").c_str()), 0);
    MakeDirectory(live_, 0755);
    ASSERT_EQ(fstat(made->OpenLiveRoot(0).get(), &again), 0);
    EXPECT_EQ(again.st_ino, first.st_ino) << "the operation opened the directory put in place of its root";
  }
  ExclusiveOperation next(made->gate(), "undo");
  EXPECT_THROW(made->OpenLiveRoot(0), Error);
}

// A sandbox whose record was written before records kept handles gains them from its roots at
// start-up (once its overlays are set up), and keeps them.
TEST_F(SandboxLifecycleTest, ARecordWithoutHandlesGainsThemAtStartUp) {
  std::string id = Create(Request())->id();
  Database(layout_.Database()).Exec("UPDATE roots SET handle = ''");
  SandboxRegistry again(layout_, store_);
  EXPECT_TRUE(again.Recover().empty());
  auto found = again.Find("calc", geteuid());
  ASSERT_NE(found, nullptr);
  EXPECT_FALSE(found->record().root_handles.at(0).empty());
  EXPECT_EQ(store_.LoadAll().at(0).root_handles, found->record().root_handles) << "the handle taken was not stored";
}

}  // namespace sandboxd
