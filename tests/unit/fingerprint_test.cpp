#include "review/fingerprint.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unique_fd.h"
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

// Unlinking another name of a file moves only its ctime: taken as the work's own only on an
// inode the work named, and never when anything else moved too.
TEST(FingerprintTest, OnlyAMovedCtimeOnAWorkedInodeIsLinkWork) {
  ScopedTempDir dir;
  WriteFile(dir / "a", "text\n");
  ASSERT_EQ(link((dir / "a").c_str(), (dir / "b").c_str()), 0);
  UniqueFd root(open(dir.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  struct stat st;
  ASSERT_EQ(stat((dir / "a").c_str(), &st), 0);
  std::string before = EntryStamp(root.get(), "a");
  usleep(10000);  // a ctime that can differ at the file system's granularity
  ASSERT_EQ(unlink((dir / "b").c_str()), 0);
  std::string after = EntryStamp(root.get(), "a");
  ASSERT_NE(after, before);
  EXPECT_TRUE(MovedOnlyByLinkWork(before, after, {st.st_ino}));
  EXPECT_FALSE(MovedOnlyByLinkWork(before, after, {st.st_ino + 1})) << "an inode the work did not name";
  EXPECT_FALSE(MovedOnlyByLinkWork(before, before, {st.st_ino})) << "nothing moved: nothing to take";
  ASSERT_EQ(chmod((dir / "a").c_str(), 0600), 0);
  EXPECT_FALSE(MovedOnlyByLinkWork(before, EntryStamp(root.get(), "a"), {st.st_ino})) << "the mode moved too";
  EXPECT_FALSE(MovedOnlyByLinkWork("dir:5:16877", "dir:5:16832", {5}));
  EXPECT_FALSE(MovedOnlyByLinkWork("-", after, {st.st_ino}));
}

}  // namespace
}  // namespace sandboxd
