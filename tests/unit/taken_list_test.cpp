// The list of what a commit takes (commit/taken_list.h): written and read back whole, and a list
// that cannot be written says why (a full store must read as one, not as "cannot write").

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/errors.h"
#include "commit/taken_list.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;

TEST(TakenListTest, WhatIsWrittenComesBackInPagesByRoot) {
  ScopedTempDir dir;
  const std::string path = dir.path() + "/taken";
  TakenListWriter writer(path);
  for (size_t i = 0; i < 5; ++i) {
    Change change;
    change.kind = ChangeKind::kAdded;
    change.new_type = EntryType::kFile;
    change.new_mode = 0644;
    change.path = "dir/with\nnewline " + std::to_string(i);
    writer.Append(i < 3 ? 0 : 1, change);
  }
  writer.Close();
  std::vector<std::string> seen;
  size_t pages = 0;
  ForEachTakenPage(path, 2, [&](const std::vector<RootChanges>& page) {
    ++pages;
    for (const auto& root : page)
      for (const auto& change : root.changes) seen.push_back(std::to_string(root.root) + ":" + change.path);
  });
  EXPECT_EQ(pages, 3u);
  EXPECT_EQ(seen, (std::vector<std::string>{"0:dir/with\nnewline 0", "0:dir/with\nnewline 1", "0:dir/with\nnewline 2",
                                            "1:dir/with\nnewline 3", "1:dir/with\nnewline 4"}));
}

TEST(TakenListTest, AListThatCannotBeWrittenSaysWhy) {
  // /dev/full takes the open and refuses every write with ENOSPC, as a full store does.
  try {
    TakenListWriter writer("/dev/full");
    Change change;
    change.path = "f";
    writer.Append(0, change);
    writer.Close();
    FAIL() << "a list written to /dev/full was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sandboxd
