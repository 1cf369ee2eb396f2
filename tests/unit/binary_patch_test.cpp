// Binary patches are git's: the bytes `git diff --binary` writes for an added or a deleted file
// (where git writes literals, as we always do), and `git apply` takes them back exactly.

#include "text/binary_patch.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "shell_output.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;
using testing::ShellOutput;
using testing::WriteFile;

std::string Patch(const std::string& old_content, const std::string& new_content) {
  std::string patch;
  WriteBinaryPatch(MemoryText(old_content), MemoryText(new_content), [&](std::string_view piece) { patch.append(piece); });
  return patch;
}

/// What git writes from its "GIT binary patch" line on for `git diff --binary OLD NEW`.
std::string GitsPatch(const std::string& old_path, const std::string& new_path) {
  std::string out = ShellOutput("cd / && git diff --no-index --binary '" + old_path + "' '" + new_path + "'");
  size_t at = out.find("GIT binary patch\n");
  return at == std::string::npos ? "no binary patch in: " + out : out.substr(at);
}

TEST(Base85Test, GroupsOfFourBytesAsGitEncodesThem) {
  // zlib's empty stream at level 1, which git writes for an empty side ("HcmV?d00001").
  EXPECT_EQ(Base85(std::string("\x78\x01\x03\x00\x00\x00\x00\x01", 8)), "cmV?d00001");
  EXPECT_EQ(Base85(std::string(4, '\0')), "00000");
  EXPECT_EQ(Base85("\xff\xff\xff\xff"), "|NsC0");
  // A short last group is padded with zero bytes.
  EXPECT_EQ(Base85("\x01"), Base85(std::string("\x01\0\0\0", 4)));
  EXPECT_EQ(Base85(""), "");
}

TEST(BinaryPatchLineTest, EachLineOpensWithItsByteCount) {
  EXPECT_EQ(BinaryPatchLine(std::string("\x78\x01\x03\x00\x00\x00\x00\x01", 8)), "HcmV?d00001\n");
  EXPECT_EQ(BinaryPatchLine(std::string(1, 'x'))[0], 'A');
  EXPECT_EQ(BinaryPatchLine(std::string(26, 'x'))[0], 'Z');
  EXPECT_EQ(BinaryPatchLine(std::string(27, 'x'))[0], 'a');
  EXPECT_EQ(BinaryPatchLine(std::string(52, 'x')).size(), 1 + 65 + 1u);
  EXPECT_EQ(BinaryPatchLine(std::string(52, 'x'))[0], 'z');
  EXPECT_THROW(BinaryPatchLine(""), Error);
  EXPECT_THROW(BinaryPatchLine(std::string(53, 'x')), Error);
}

TEST(BinaryPatchTest, AnEmptySideIsGitsEmptyLiteral) {
  std::string literal;
  WriteLiteral(MemoryText(""), [&](std::string_view piece) { literal.append(piece); });
  EXPECT_EQ(literal, "literal 0\nHcmV?d00001\n\n");
}

class BinaryPatchVsGitTest : public ::testing::TestWithParam<size_t> {
 protected:
  ScopedTempDir dir_;
};

// Sizes around a line, and across the pieces the content is read and deflated in, so that the
// streamed deflate is seen to give git's one-call bytes.
TEST_P(BinaryPatchVsGitTest, AddedAndDeletedFilesAreWhatGitWrites) {
  const std::string content = testing::SomeBinary(GetParam(), static_cast<uint32_t>(GetParam()));
  WriteFile(dir_ / "file", content);
  EXPECT_EQ(Patch("", content), GitsPatch("/dev/null", dir_ / "file"));
  EXPECT_EQ(Patch(content, ""), GitsPatch(dir_ / "file", "/dev/null"));
}

INSTANTIATE_TEST_SUITE_P(Sizes, BinaryPatchVsGitTest, ::testing::Values(1, 51, 52, 53, 4000, 65536, 65537, 300000, 1100000));

// A modification: git would write deltas here, we write literals; git applies ours (forward, and
// back with -R) to the very bytes.
TEST(BinaryPatchApplyTest, GitAppliesAModificationBothWays) {
  ScopedTempDir dir;
  const std::string old_content = testing::SomeBinary(200000, 7), new_content = testing::SomeBinary(150001, 8);
  WriteFile(dir / "f.bin", old_content);
  std::string old_id = ShellOutput("git hash-object '" + dir / "f.bin" + "'").substr(0, 40);
  WriteFile(dir / "new", new_content);
  std::string new_id = ShellOutput("git hash-object '" + dir / "new" + "'").substr(0, 40);
  WriteFile(dir / "p.diff", "diff --git a/f.bin b/f.bin\nindex " + old_id + ".." + new_id + " 100644\n" +
                                Patch(old_content, new_content));
  ASSERT_EQ(ShellOutput("cd '" + dir.path() + "' && git apply --binary p.diff && echo ok"), "ok\n");
  EXPECT_EQ(testing::ReadFile(dir / "f.bin"), new_content);
  ASSERT_EQ(ShellOutput("cd '" + dir.path() + "' && git apply -R --binary p.diff && echo ok"), "ok\n");
  EXPECT_EQ(testing::ReadFile(dir / "f.bin"), old_content);
}

}  // namespace
}  // namespace sandboxd
