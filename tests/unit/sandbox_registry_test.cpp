// SandboxRegistry on a real state and run directory, with real overlay mounts (needs root, as
// the daemon does): recovery remounts what the store records, and the start-up sweep takes down
// the mounts and files of sandboxes that have no record, and only those.

#include "sandbox/sandbox_registry.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/fs_util.h"
#include "base/overlay.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;
using testing::WriteFile;

using testing::Exists;

class SandboxRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "overlay mounts need root";
    MakeDirectory(temp_ / "state", 0700);
    MakeDirectory(layout_.SandboxesDir(), 0700);
    MakeDirectory(temp_ / "run", 0755);
    MakeDirectory(temp_ / "live", 0755);
    WriteFile(temp_ / "live/file", "live\n");
  }
  void TearDown() override {
    for (const auto& id : ListDirectory(layout_.run_dir()))
      for (const auto& root : ListDirectory(layout_.RunSandboxDir(id))) DetachOverlay(layout_.RunSandboxDir(id) + "/" + root);
  }

  /// Mounts an overlay the way a sandbox does, with no record of it anywhere.
  void MakeOrphan(const std::string& id) {
    MakeDirectory(layout_.SandboxDir(id), 0700);
    MakeDirectory(layout_.SandboxDir(id) + "/upper", 0700);
    MakeDirectory(layout_.SandboxDir(id) + "/work", 0700);
    MakeDirectory(layout_.UpperDir(id, 0), 0755);
    MakeDirectory(layout_.WorkDir(id, 0), 0700);
    MakeDirectory(layout_.RunSandboxDir(id), 0700);
    MakeDirectory(layout_.MergedDir(id, 0), 0700);
    UniqueFd lower = OpenDirectoryNoSymlinks(temp_ / "live", O_PATH);
    MountOverlay({lower.get(), layout_.UpperDir(id, 0), layout_.WorkDir(id, 0), layout_.MergedDir(id, 0)});
    WriteFile(layout_.MergedDir(id, 0) + "/new", "made in the sandbox\n");
  }

  ScopedTempDir temp_;
  Layout layout_{temp_ / "state", temp_ / "run"};
};

TEST_F(SandboxRegistryTest, SweepTakesDownOnlySandboxesWithoutARecord) {
  const std::string kept = "00000000000000aa", orphan = "00000000000000bb";
  Store store(layout_.Database());
  store.Insert({kept, "kept", 0, SandboxState::kActive, 1, {temp_ / "live"}});
  MakeOrphan(orphan);
  ASSERT_TRUE(IsOverlayMounted(layout_.MergedDir(orphan, 0)));
  // Something that is not a sandbox must be left alone.
  MakeDirectory(layout_.run_dir() + "/not-a-sandbox", 0700);

  SandboxRegistry registry(layout_, store);
  EXPECT_TRUE(registry.Recover().empty());
  ASSERT_TRUE(IsOverlayMounted(layout_.MergedDir(kept, 0)));
  EXPECT_EQ(registry.SweepOrphans(), std::vector<std::string>{orphan});

  EXPECT_FALSE(IsOverlayMounted(layout_.MergedDir(orphan, 0)));
  EXPECT_FALSE(Exists(layout_.RunSandboxDir(orphan)));
  EXPECT_FALSE(Exists(layout_.SandboxDir(orphan)));
  EXPECT_TRUE(Exists(layout_.TrashDir() + "/" + orphan + "/upper/0/new"));
  registry.EmptyTrash();
  EXPECT_FALSE(Exists(layout_.TrashDir() + "/" + orphan));

  EXPECT_TRUE(IsOverlayMounted(layout_.MergedDir(kept, 0)));
  EXPECT_TRUE(Exists(layout_.UpperDir(kept, 0)));
  EXPECT_TRUE(Exists(layout_.run_dir() + "/not-a-sandbox"));
  EXPECT_EQ(testing::ReadFile(temp_ / "live/file"), "live\n");
  EXPECT_FALSE(Exists(temp_ / "live/new"));
}

TEST_F(SandboxRegistryTest, ForgottenSandboxIsGoneFromStoreAndLookupsAtOnce) {
  const std::string id = "00000000000000cc";
  Store store(layout_.Database());
  store.Insert({id, "gone", 0, SandboxState::kActive, 1, {temp_ / "live"}});
  SandboxRegistry registry(layout_, store);
  ASSERT_TRUE(registry.Recover().empty());
  auto sandbox = registry.FindById(id);
  ASSERT_NE(sandbox, nullptr);
  ASSERT_NO_THROW(sandbox->gate().BeginExclusive("destroy"));
  registry.Forget(id);
  sandbox->gate().MarkDestroyed();
  sandbox->gate().EndExclusive();
  EXPECT_EQ(registry.FindById(id), nullptr);
  EXPECT_EQ(registry.Find("gone", 0), nullptr);
  EXPECT_TRUE(store.LoadAll().empty());
  EXPECT_THROW(sandbox->gate().BeginJob(), Error);
  EXPECT_THROW(sandbox->gate().BeginExclusive("commit"), Error);
  // The mount outlives the answer until the files are taken down.
  EXPECT_TRUE(IsOverlayMounted(layout_.MergedDir(id, 0)));
  sandbox->UnmountForGood();
  registry.RemoveFiles(id, {""});
  EXPECT_FALSE(IsOverlayMounted(layout_.MergedDir(id, 0)));
  EXPECT_FALSE(Exists(layout_.RunSandboxDir(id)));
  EXPECT_FALSE(Exists(layout_.SandboxDir(id)));
}

}  // namespace
}  // namespace sandboxd
