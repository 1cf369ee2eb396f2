// A change listed as a line of JSON (ListChanges) is the same bytes as the JSON object GetChanges
// and tests build (ListedChange) dumped: one definition, two writers.

#include "changes/change_listing.h"

#include "listed_change.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace sandboxd {
namespace {

std::string RandomName(std::mt19937& rng) {
  // Every byte but NUL and '/' may be in a name: control bytes, quotes, backslashes, UTF-8 and
  // bytes that are no UTF-8 at all.
  static const std::string kAlphabet = std::string("ab\"\\\b\f\n\r\t\x01\x1f\x7f ") + "\xc3\xa9" + "\xe2\x82\xac" + "\xff\xfe\x80";
  std::string name;
  size_t length = 1 + rng() % 12;
  for (size_t i = 0; i < length; ++i) name += kAlphabet[rng() % kAlphabet.size()];
  return name;
}

ReviewedChange RandomChange(std::mt19937& rng) {
  ReviewedChange item;
  item.root = rng() % 3;
  item.change.path = RandomName(rng) + (rng() % 2 ? "/" + RandomName(rng) : "");
  item.change.kind = static_cast<ChangeKind>(rng() % 5);
  item.change.old_type = static_cast<EntryType>(rng() % 8);
  item.change.new_type = static_cast<EntryType>(rng() % 8);
  item.change.old_mode = rng() % 07777;
  item.change.new_mode = rng() % 07777;
  // Sizes past 32 bits too: a file may hold more than 4 GiB.
  item.old_size = rng() % 2 ? rng() : (uint64_t{rng()} << 20);
  item.new_size = rng() % 2 ? rng() : (uint64_t{rng()} << 20);
  if (rng() % 3 == 0) {
    int count = 1 + rng() % 5;
    for (int hunk = 1; hunk <= count; ++hunk) item.approval.DecideHunk(hunk, count, static_cast<Verdict>(rng() % 3));
  } else {
    item.approval.DecideWhole(static_cast<Verdict>(rng() % 3));
  }
  if (rng() % 4 == 0) item.renamed_from = RandomName(rng);
  if (rng() % 4 == 0) item.renamed_to = RandomName(rng);
  return item;
}

TEST(ChangeListingTest, ALineIsTheObjectDumped) {
  std::mt19937 rng(19);
  for (int i = 0; i < 5000; ++i) {
    ReviewedChange item = RandomChange(rng);
    std::string prefix = item.root ? std::to_string(item.root) + "/" : "";
    std::string reason = RandomName(rng);
    const std::string* conflict = rng() % 3 == 0 ? &reason : nullptr;
    std::string line;
    AppendListedLine(line, item, prefix, conflict);
    ASSERT_EQ(line, ListedChange(item, prefix, conflict).dump() + "\n") << "change " << i;
  }
}

// sandboxctl reads a line's fields without building the object: each field as the object has it.
TEST(ChangeListingTest, TheClientReadsEveryFieldOfALine) {
  std::mt19937 rng(21);
  for (int i = 0; i < 5000; ++i) {
    ReviewedChange item = RandomChange(rng);
    std::string reason = RandomName(rng);
    const std::string* conflict = rng() % 3 == 0 ? &reason : nullptr;
    std::string line;
    AppendListedLine(line, item, "", conflict);
    line.pop_back();  // the newline
    auto read = sandboxctl::ParseListedChange(line);
    ASSERT_TRUE(read) << line;
    auto object = nlohmann::json::parse(line);
    auto text = [&](const char* key) { return object.value(key, std::string()); };
    EXPECT_EQ(read->root, object["root"].get<uint32_t>());
    EXPECT_EQ(read->path, text("path"));
    EXPECT_EQ(read->kind, text("kind"));
    EXPECT_EQ(read->type, text("type"));
    EXPECT_EQ(read->old_type, text("old_type"));
    EXPECT_EQ(read->new_type, text("new_type"));
    EXPECT_EQ(read->review, text("review"));
    EXPECT_EQ(read->renamed_from, text("renamed_from"));
    EXPECT_EQ(read->renamed_to, text("renamed_to"));
    EXPECT_EQ(read->conflict, object.value("conflict", false));
    EXPECT_EQ(read->conflict_reason, text("conflict_reason"));
    EXPECT_EQ(read->old_mode.has_value(), object.contains("old_mode"));
    if (read->old_mode) {
      EXPECT_EQ(*read->old_mode, object["old_mode"].get<uint32_t>());
    }
    EXPECT_EQ(read->new_mode.has_value(), object.contains("new_mode"));
    if (read->new_mode) {
      EXPECT_EQ(*read->new_mode, object["new_mode"].get<uint32_t>());
    }
    for (auto [key, size] : {std::pair{"old_size", read->old_size}, std::pair{"new_size", read->new_size}}) {
      EXPECT_EQ(size.has_value(), object.contains(key)) << key;
      if (size) {
        EXPECT_EQ(*size, object[key].get<uint64_t>()) << key;
      }
    }
    EXPECT_EQ(read->hunks.has_value(), object.contains("hunks"));
    EXPECT_EQ(read->approved_hunks, object.value("approved_hunks", std::vector<uint32_t>{}));
    EXPECT_EQ(read->rejected_hunks, object.value("rejected_hunks", std::vector<uint32_t>{}));
  }
}

// Keys a newer daemon may add, of any shape, are passed over; what is no object is refused.
TEST(ChangeListingTest, TheClientPassesOverUnknownKeysAndRefusesWhatIsNoObject) {
  auto read = sandboxctl::ParseListedChange(
      R"({"a":{"path":"no","kind":[1,{"x":2}]},"approved_hunks":[2,3],"b":[["c"]],"kind":"added","path":"p","z":null,"n":-1.5})");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->path, "p");
  EXPECT_EQ(read->kind, "added");
  EXPECT_EQ(read->approved_hunks, (std::vector<uint32_t>{2, 3}));
  for (const char* bad : {"", "[]", "\"path\"", "{\"path\":\"p\"", "{} {}", "{\"path\":\"p\"} x", "nul"})
    EXPECT_FALSE(sandboxctl::ParseListedChange(bad).has_value()) << bad;
}

TEST(ChangeListingTest, TheObjectHasTheContractsKeys) {
  ReviewedChange item;
  item.root = 1;
  item.change = {"src/a.c", ChangeKind::kModified, EntryType::kFile, EntryType::kFile, 0644, 0755};
  item.approval.DecideHunk(2, 3, Verdict::kApproved);
  std::string reason = "the live file changed";
  auto listed = ListedChange(item, "1/", &reason);
  EXPECT_EQ(listed["path"], "1/src/a.c");
  EXPECT_EQ(listed["kind"], "modified");
  EXPECT_EQ(listed["type"], "file");
  EXPECT_EQ(listed["old_mode"], 0644);
  EXPECT_EQ(listed["new_mode"], 0755);
  EXPECT_EQ(listed["hunks"], 3);
  EXPECT_EQ(listed["approved_hunks"], nlohmann::json::array({2}));
  EXPECT_EQ(listed["rejected_hunks"], nlohmann::json::array());
  EXPECT_EQ(listed["review"], "partial");
  EXPECT_EQ(listed["conflict"], true);
  EXPECT_EQ(listed["conflict_reason"], reason);
  EXPECT_EQ(listed["root"], 1);
}

}  // namespace
}  // namespace sandboxd
