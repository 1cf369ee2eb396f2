// sandboxctl usage: what each sandbox costs on disk (its changes, its archives while suspended,
// what its commits keep for undo), the caller's own only unless polkit's manage action allows
// every user's.

#include <gtest/gtest.h>

#include <sstream>

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
  // The table's columns line up whatever the names' lengths.
  Result long_named = w.Sandboxctl(kAlice, {"create", "--name", "a-rather-long-sandbox-name", w.MakeProject(kAlice)});
  ASSERT_EQ(long_named.status, 0) << long_named.err;
  Result text = w.Sandboxctl(kAlice, {"usage"});
  EXPECT_NE(text.out.find(id), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Total: "), std::string::npos) << text.out;
  std::istringstream lines(text.out);
  std::string header;
  std::getline(lines, header);
  const size_t state_column = header.find("STATE"), total_end = header.find("TOTAL") + 5;
  ASSERT_NE(state_column, std::string::npos) << text.out;
  for (std::string line; std::getline(lines, line) && line.rfind("Total: ", 0) != 0;) {
    EXPECT_TRUE(line.compare(state_column, 6, "active") == 0 || line.compare(state_column, 9, "suspended") == 0) << text.out;
    EXPECT_EQ(line.size(), total_end) << "the TOTAL column ends elsewhere:\n" << text.out;
  }
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", Trim(long_named.out)}).status, 0);

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
