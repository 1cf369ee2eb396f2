// sandboxctl usage: what each sandbox costs on disk (its changes, its archives while suspended,
// what its commits keep for undo), the caller's own only unless polkit's manage action allows
// every user's.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

namespace sandboxd::it {
namespace {

/// `usage --json [--all]` as `user`: the entry of sandbox `id`, or null.
nlohmann::json UsageOf(const std::string& user, const std::string& id, bool all = false) {
  std::vector<std::string> args = {"--json", "usage"};
  if (all) args.push_back("--all");
  Result r = World().Sandboxctl(user, args);
  EXPECT_EQ(r.status, 0) << r.err;
  auto usage = nlohmann::json::parse(r.out, nullptr, false);
  if (!usage.is_object()) return nullptr;
  for (const auto& entry : usage["sandboxes"])
    if (entry["id"] == id) return entry;
  return nullptr;
}

TEST(UsageTest, ChangesArchivesAndBackupsAreCountedForTheirOwner) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", project}).out);
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c",
                                  "head -c 1048576 /dev/urandom > big && echo more >> a.txt && mkdir d && echo x > d/x"})
                .status,
            0);
  auto usage = UsageOf(kAlice, id);
  ASSERT_TRUE(usage.is_object());
  EXPECT_GE(usage["changes_bytes"].get<uint64_t>(), 1048576u);
  EXPECT_EQ(usage["changes_entries"].get<uint64_t>(), 4u);  // big, a.txt, d, d/x
  EXPECT_EQ(usage["archive_bytes"].get<uint64_t>(), 0u);

  ASSERT_EQ(w.Sandboxctl(kAlice, {"suspend", id}).status, 0);
  usage = UsageOf(kAlice, id);
  EXPECT_EQ(usage["state"], "suspended");
  EXPECT_EQ(usage["changes_bytes"].get<uint64_t>(), 0u);
  EXPECT_GE(usage["archive_bytes"].get<uint64_t>(), 1048576u) << "random bytes do not compress";
  ASSERT_EQ(w.Sandboxctl(kAlice, {"resume", id}).status, 0);

  // A commit keeps the replaced a.txt for undo.
  ASSERT_EQ(w.Sandboxctl(kAlice, {"commit", id, "--all"}).status, 0);
  usage = UsageOf(kAlice, id);
  EXPECT_EQ(usage["changes_entries"].get<uint64_t>(), 0u);
  EXPECT_GT(usage["kept_bytes"].get<uint64_t>(), 0u);
  Result text = w.Sandboxctl(kAlice, {"usage"});
  EXPECT_NE(text.out.find(id), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Total: "), std::string::npos) << text.out;

  // Bob's sandbox: not in alice's usage, in her --all (polkit's manage action allows her);
  // bob may not see everyone's.
  std::string bobs = Trim(w.Sandboxctl(kBob, {"create", w.MakeProject(kBob)}).out);
  ASSERT_FALSE(bobs.empty());
  EXPECT_TRUE(UsageOf(kAlice, bobs).is_null());
  EXPECT_TRUE(UsageOf(kAlice, bobs, true).is_object());
  Result refused = w.Sandboxctl(kBob, {"usage", "--all"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_FALSE(refused.err.empty());
  EXPECT_EQ(w.Sandboxctl(kBob, {"destroy", bobs}).status, 0);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
