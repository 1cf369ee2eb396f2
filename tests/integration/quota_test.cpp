// create --quota: a job whose writes take the sandbox's changes over the quota is stopped (and
// the whole job with it), what it wrote is kept, no job starts while the changes are over it,
// and the sandbox goes on once they are discarded.

#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "harness.h"

namespace sandboxd::it {
namespace {

Result Ctl(const std::vector<std::string>& args) { return World().Sandboxctl(kAlice, args); }

TEST(QuotaTest, AJobOverTheQuotaIsStoppedAndWhatItWroteIsKept) {
  SANDBOXD_REQUIRE_WORLD();
  std::string project = World().MakeProject(kAlice);
  Result created = Ctl({"create", "--quota", "2M", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  auto info = nlohmann::json::parse(Ctl({"--json", "show", id}).out, nullptr, false);
  ASSERT_TRUE(info.is_object());
  EXPECT_EQ(info["quota_bytes"], 2u << 20);

  // Under the quota: fine.
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "head -c 500000 /dev/zero > small"}).status, 0);
  // Over it: writing 1 MiB a second, the job is stopped within the first seconds, long before
  // it would end by itself.
  auto start = std::chrono::steady_clock::now();
  Result over = Ctl({"run", id, "--", "sh", "-c",
                     "i=0; while [ $i -lt 60 ]; do head -c 1048576 /dev/zero >> big; i=$((i+1)); sleep 1; done"});
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(over.status, 128 + SIGKILL) << over.err;
  EXPECT_NE(over.err.find("QuotaExceeded"), std::string::npos) << over.err;
  EXPECT_LT(took, std::chrono::seconds(20)) << "the job was not stopped at the quota";
  // Nothing already there is lost: both files are still changes of the sandbox.
  Result changes = Ctl({"changes", id});
  EXPECT_EQ(changes.out, "A big\nA small\n") << changes.err;
  // No job starts while the changes are over the quota, and the refusal names it.
  Result refused = Ctl({"run", id, "--", "true"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("over its quota of 2.0 MiB"), std::string::npos) << refused.err;
  // Discarded, the sandbox goes on.
  ASSERT_EQ(Ctl({"discard", id}).status, 0);
  EXPECT_EQ(Ctl({"run", id, "--", "true"}).status, 0);
  // A quota too small to work with is refused.
  Result tiny = Ctl({"create", "--quota", "10K", World().MakeProject(kAlice)});
  EXPECT_EQ(tiny.status, 1);
  EXPECT_NE(tiny.err.find("1 MiB"), std::string::npos) << tiny.err;
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
