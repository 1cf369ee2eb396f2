// Blob ids are git's own: the ids `git hash-object` gives for the same bytes, read a piece at a
// time from a file of any size.

#include "text/blob_id.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "base/errors.h"
#include "unique_fd.h"
#include "shell_output.h"
#include "temp_dir.h"
#include "text/text_file.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;
using testing::ShellOutput;
using testing::WriteFile;

class BlobIdTest : public ::testing::Test {
 protected:
  /// git hash-object of file `name`, without its newline.
  std::string GitId(const std::string& name) {
    std::string out = ShellOutput("git hash-object '" + dir_ / name + "'");
    return out.substr(0, out.find('\n'));
  }
  std::unique_ptr<FileText> Open(const std::string& name) {
    UniqueFd parent(open(dir_.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    return OpenRegularFile(parent.get(), name, name);
  }
  ScopedTempDir dir_;
};

TEST_F(BlobIdTest, TheEmptyBlobAndTheAbsentSideAreGitsIds) {
  WriteFile(dir_ / "empty", "");
  EXPECT_EQ(GitId("empty"), kEmptyBlobId);
  EXPECT_EQ(BlobId(MemoryText("")), kEmptyBlobId);
  EXPECT_EQ(BlobId(*Open("empty")), kEmptyBlobId);
  EXPECT_EQ(kAbsentBlobId, std::string(40, '0'));
}

TEST_F(BlobIdTest, SmallContentsInMemoryAndInFilesAreNamedAsGitNamesThem) {
  const std::string hello = "hello\n", nul = std::string("a\0b\r\n", 5);
  WriteFile(dir_ / "hello", hello);
  WriteFile(dir_ / "nul", nul);
  EXPECT_EQ(BlobId(MemoryText(hello)), "ce013625030ba8dba906f756967f9e9ca394464a");
  EXPECT_EQ(BlobId(MemoryText(hello)), GitId("hello"));
  EXPECT_EQ(BlobId(*Open("hello")), GitId("hello"));
  EXPECT_EQ(BlobId(MemoryText(nul)), GitId("nul"));
  EXPECT_EQ(BlobId(*Open("nul")), GitId("nul"));
}

// Bigger than one piece read, and not a whole number of pieces.
TEST_F(BlobIdTest, AFileOfManyPiecesIsNamedAsGitNamesIt) {
  WriteFile(dir_ / "big", testing::SomeBinary(3 * 1024 * 1024 + 4097));
  auto file = Open("big");
  ASSERT_TRUE(file);
  EXPECT_EQ(BlobId(*file), GitId("big"));
}

// Its size is the one it had when it was opened: bytes added since are not named, bytes taken
// away make it fail rather than name something git never saw.
TEST_F(BlobIdTest, AFileThatChangesSizeAfterItWasOpened) {
  WriteFile(dir_ / "grows", "first\n");
  const std::string id = GitId("grows");
  auto grows = Open("grows");
  WriteFile(dir_ / "grows", "first\nand more\n");
  // WriteFile truncates and rewrites the same inode: the first 6 bytes are the same again.
  EXPECT_EQ(BlobId(*grows), id);

  WriteFile(dir_ / "shrinks", testing::SomeBinary(600 * 1024));
  auto shrinks = Open("shrinks");
  ASSERT_EQ(truncate((dir_ / "shrinks").c_str(), 1000), 0);
  EXPECT_THROW(BlobId(*shrinks), Error);
}

}  // namespace
}  // namespace sandboxd
