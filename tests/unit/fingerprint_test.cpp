#include "fingerprint.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "fd.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;
using testing::WriteFile;

TEST(FingerprintTest, SplitsIntoWhatItWasJoinedFrom) {
  FingerprintParts parts{'s', "33188:4:17.5", "12:33188:3:1.2:1.3"};
  auto split = SplitFingerprint(JoinFingerprint(parts));
  ASSERT_TRUE(split);
  EXPECT_EQ(split->kind, 's');
  EXPECT_EQ(split->upper, parts.upper);
  EXPECT_EQ(split->live, parts.live);
  EXPECT_FALSE(SplitFingerprint(""));
  EXPECT_FALSE(SplitFingerprint("x1|l2"));
  EXPECT_FALSE(SplitFingerprint("u-"));
}

// What an archive round trip keeps (content, mode, mtime) keeps the archived stamp; the entry
// stamp, which a decision holds for, changes with the new inode, and with any rewrite that puts
// the mtime back.
TEST(FingerprintTest, TheArchivedStampSurvivesACopyAndTheEntryStampDoesNot) {
  ScopedTempDir dir;
  WriteFile(dir / "a", "new\n");
  UniqueFd root(open(dir.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::string entry = EntryStamp(root.get(), "a"), archived = ArchivedStamp(root.get(), "a");
  ASSERT_EQ(std::system(("cp -p '" + (dir / "a") + "' '" + (dir / "b") + "' && mv '" + (dir / "b") + "' '" + (dir / "a") + "'").c_str()), 0);
  EXPECT_EQ(ArchivedStamp(root.get(), "a"), archived);
  EXPECT_NE(EntryStamp(root.get(), "a"), entry);
  std::string copied = EntryStamp(root.get(), "a");
  ASSERT_EQ(std::system(("f='" + (dir / "a") + "'; touch -r \"$f\" \"$f.t\"; echo BAD > \"$f\"; touch -r \"$f.t\" \"$f\"").c_str()), 0);
  EXPECT_EQ(ArchivedStamp(root.get(), "a"), archived);
  EXPECT_NE(EntryStamp(root.get(), "a"), copied);
  EXPECT_EQ(EntryStamp(root.get(), "missing"), "-");
}

}  // namespace
}  // namespace sandboxd
