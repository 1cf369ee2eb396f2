// Garbage collection carried out (garbage_collector.h), on a registry whose overlays are
// recorded (recorded_mounts.h), as nobody when the binary is root, with a clock the test sets.
// What must hold: an expired sandbox goes whole (record, files, objects) and nothing else does;
// one with a job or an operation under way stays, expired or not; idleness is recorded, so it
// survives a restart.

#include "lifecycle/garbage_collector.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "runtime/clock.h"
#include "lifecycle/sandbox_removal.h"
#include "sandbox_world.h"

namespace sandboxd {
namespace {

using testing::Exists;


class SetClock final : public Clock {
 public:
  int64_t NowUsec() const override { return now_; }
  int64_t now_ = TheSystemClock().NowUsec();
};

class GarbageCollectorTest : public testing::SandboxWorldTest {
 protected:
  /// A sandbox over a root of its own, idle for good after `ttl_sec`.
  std::shared_ptr<Sandbox> Make(const std::string& name, uint64_t ttl_sec) { return CreateOver(name, ttl_sec); }

  std::vector<std::string> Collected() {
    std::vector<std::string> ids;
    for (const auto& removal : collector_.Collect()) ids.push_back(removal.id);
    return ids;
  }

  std::vector<std::string> unpublished_;
  SandboxRemoval removal_{registry_, [this](const Sandbox& gone) { unpublished_.push_back(gone.id()); }};
  SetClock clock_;
  GarbageCollector collector_{registry_, store_, removal_, 0, clock_};
};

TEST_F(GarbageCollectorTest, AnExpiredSandboxGoesWholeAndNothingElseDoes) {
  auto short_lived = Make("short", 60);
  auto long_lived = Make("long", 3600);
  auto forever = Make("forever", 0);
  clock_.now_ += 59 * kSecondUsec;
  EXPECT_TRUE(Collected().empty()) << "a sandbox went before its time";
  clock_.now_ += 2 * kSecondUsec;
  EXPECT_EQ(Collected(), std::vector<std::string>{short_lived->id()});
  EXPECT_EQ(unpublished_, std::vector<std::string>{short_lived->id()}) << "its D-Bus objects stayed";
  EXPECT_EQ(registry_.FindById(short_lived->id()), nullptr);
  EXPECT_FALSE(Exists(layout_.SandboxDir(short_lived->id())));
  EXPECT_FALSE(mounts_.IsMounted(short_lived->paths().MergedDir(0)));
  auto records = store_.LoadAll();
  EXPECT_EQ(records.size(), 2u);
  EXPECT_TRUE(std::none_of(records.begin(), records.end(), [&](const SandboxRecord& r) { return r.id == short_lived->id(); }));
  // Days later: the other with a ttl goes, the one without stays.
  clock_.now_ += 86400 * kSecondUsec;
  EXPECT_EQ(Collected(), std::vector<std::string>{long_lived->id()});
  EXPECT_NE(registry_.FindById(forever->id()), nullptr);
}

TEST_F(GarbageCollectorTest, ASandboxAtWorkStaysExpiredOrNot) {
  auto running = Make("running", 60);
  auto operated = Make("operated", 60);
  int64_t job = running->gate().BeginJob();
  clock_.now_ += 3600 * kSecondUsec;
  {
    ExclusiveOperation commit(operated->gate(), "commit");
    EXPECT_TRUE(Collected().empty()) << "a sandbox was collected under a running job or a commit";
  }
  EXPECT_NE(registry_.FindById(running->id()), nullptr);
  EXPECT_NE(registry_.FindById(operated->id()), nullptr);
  EXPECT_TRUE(Exists(operated->paths().UpperDir(0)));
  // Once the commit is over it may go; the job's sandbox only once the job has ended (and then
  // only after its idleness since the end).
  EXPECT_EQ(Collected(), std::vector<std::string>{operated->id()});
  running->gate().EndJob(job);  // used now, by the system's clock
  clock_.now_ = TheSystemClock().NowUsec() + 59 * kSecondUsec;
  EXPECT_TRUE(Collected().empty()) << "a sandbox went before its ttl from its job's end";
  clock_.now_ += 2 * kSecondUsec;
  EXPECT_EQ(Collected(), std::vector<std::string>{running->id()});
}

TEST_F(GarbageCollectorTest, IdlenessIsRecordedSoThatItSurvivesARestart) {
  auto sandbox = Make("idle", 3600);
  int64_t job = sandbox->gate().BeginJob();
  sandbox->gate().EndJob(job);
  const int64_t used = sandbox->last_used_usec();
  ASSERT_GT(used, sandbox->created_usec());
  Collected();
  auto records = store_.LoadAll();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].last_used_usec, used) << "the last use was not recorded: a restart would reset idleness";
}

}  // namespace
}  // namespace sandboxd
