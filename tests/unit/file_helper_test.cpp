// The file helper of sandboxctl mcp's file tools (client/file_helper.h), on a real directory:
// what an agent reads, writes and edits stays beneath the root, whatever symlinks the tree (a
// job's work) holds; writes are whole and keep a file's bits; an edit takes one occurrence only.

#include "file_helper.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "temp_dir.h"
#include "unique_fd.h"

namespace sandboxctl::file_helper {
namespace {

using sandboxd::UniqueFd;
using sandboxd::testing::ScopedTempDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

class FileHelperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    root_ = dir_ / "root";
    outside_ = dir_ / "outside";
    ASSERT_EQ(mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(outside_.c_str(), 0755), 0);
    Spit(outside_ + "/secret", "secret\n");
    fd_ = UniqueFd(open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(fd_);
  }
  /// The refusal's message, or "" when `call` did not refuse.
  template <typename Call>
  static std::string RefusalOf(Call call) {
    try {
      call();
    } catch (const Refusal& refusal) {
      return refusal.message;
    }
    return "";
  }

  ScopedTempDir dir_;
  std::string root_, outside_;
  UniqueFd fd_;
};

TEST_F(FileHelperTest, ReadsWholeFilesAndLineRanges) {
  Spit(root_ + "/a.txt", "one\ntwo\nthree");
  ReadAnswer whole = ReadText(fd_.get(), "a.txt", 1, std::nullopt);
  EXPECT_EQ(whole.text, "one\ntwo\nthree");
  EXPECT_EQ(whole.total_lines, 3u);
  EXPECT_EQ(whole.lines, 3u);
  EXPECT_FALSE(whole.cut);
  ReadAnswer middle = ReadText(fd_.get(), "a.txt", 2, 1);
  EXPECT_EQ(middle.text, "two\n");
  EXPECT_EQ(middle.first_line, 2u);
  EXPECT_EQ(middle.lines, 1u);
  EXPECT_EQ(ReadText(fd_.get(), "a.txt", 3, 5).text, "three");
  EXPECT_EQ(RefusalOf([&] { ReadText(fd_.get(), "a.txt", 4, std::nullopt); }), "a.txt has 3 lines; line 4 is past its end");
  Spit(root_ + "/empty", "");
  EXPECT_EQ(ReadText(fd_.get(), "empty", 1, std::nullopt).text, "");
}

TEST_F(FileHelperTest, ALongFileIsCutAtALineEndAndALongLineAtACharactersEnd) {
  std::string line(1000, 'x');
  line += "\n";
  std::string text;
  while (text.size() <= kReadBytes) text += line;
  Spit(root_ + "/long", text);
  ReadAnswer read = ReadText(fd_.get(), "long", 1, std::nullopt);
  EXPECT_TRUE(read.cut);
  EXPECT_LE(read.text.size(), kReadBytes);
  EXPECT_EQ(read.text.size() % line.size(), 0u) << "a line was split";
  EXPECT_EQ(read.total_lines, text.size() / line.size());

  // One line of two-byte characters, longer than an answer: cut between two characters.
  std::string wide;
  while (wide.size() <= kReadBytes + 1) wide += "\xc3\xa9";
  Spit(root_ + "/wide", "x" + wide);
  ReadAnswer cut = ReadText(fd_.get(), "wide", 1, std::nullopt);
  EXPECT_TRUE(cut.cut);
  EXPECT_GT(cut.text.size(), kReadBytes - 2);
  EXPECT_EQ(cut.text.size() % 2, 1u) << "a character was split";
}

TEST_F(FileHelperTest, WhatIsNotATextFileIsRefusedByName) {
  Spit(root_ + "/bin", std::string("a\0b", 3));
  EXPECT_EQ(RefusalOf([&] { ReadText(fd_.get(), "bin", 1, std::nullopt); }).rfind("bin is not text (3 bytes", 0), 0u);
  Spit(root_ + "/latin1", "caf\xe9\n");
  EXPECT_NE(RefusalOf([&] { ReadText(fd_.get(), "latin1", 1, std::nullopt); }).find("is not text"), std::string::npos);
  ASSERT_EQ(mkfifo((root_ + "/fifo").c_str(), 0644), 0);
  // Refused at once, not left waiting for a writer that never comes.
  EXPECT_EQ(RefusalOf([&] { ReadText(fd_.get(), "fifo", 1, std::nullopt); }), "fifo is not a regular file");
  ASSERT_EQ(mkdir((root_ + "/dir").c_str(), 0755), 0);
  EXPECT_EQ(RefusalOf([&] { ReadText(fd_.get(), "dir", 1, std::nullopt); }), "dir is a directory: list_dir lists it");
  EXPECT_EQ(RefusalOf([&] { ReadText(fd_.get(), "nothing", 1, std::nullopt); }), "nothing does not exist in the sandbox");
}

TEST_F(FileHelperTest, SymlinksAreFollowedOnlyWhileTheyStayBeneathTheRoot) {
  Spit(root_ + "/a.txt", "inside\n");
  ASSERT_EQ(symlink("a.txt", (root_ + "/in").c_str()), 0);
  ASSERT_EQ(symlink((outside_ + "/secret").c_str(), (root_ + "/absolute").c_str()), 0);
  ASSERT_EQ(symlink("../outside/secret", (root_ + "/relative").c_str()), 0);
  ASSERT_EQ(symlink("../outside", (root_ + "/dirlink").c_str()), 0);
  ASSERT_EQ(symlink(root_.c_str(), (root_ + "/self").c_str()), 0);  // absolute, though it names the root
  EXPECT_EQ(ReadText(fd_.get(), "in", 1, std::nullopt).text, "inside\n");
  for (const char* path : {"absolute", "relative", "dirlink/secret", "self/a.txt"})
    EXPECT_NE(RefusalOf([&] { ReadText(fd_.get(), path, 1, std::nullopt); }).find("leads out of the sandbox's root"), std::string::npos) << path;
  EXPECT_NE(RefusalOf([&] { ListDirectory(fd_.get(), "dirlink"); }).find("leads out of the sandbox's root"), std::string::npos);

  // A write through a directory symlink that leads out makes and writes nothing outside.
  EXPECT_NE(RefusalOf([&] { WriteWhole(fd_.get(), "dirlink/planted", "x"); }).find("leads out"), std::string::npos);
  EXPECT_NE(RefusalOf([&] { WriteWhole(fd_.get(), "dirlink/new/planted", "x"); }).find("leads out"), std::string::npos);
  EXPECT_NE(access((outside_ + "/planted").c_str(), F_OK), 0);
  EXPECT_NE(access((outside_ + "/new").c_str(), F_OK), 0);
  // A symlink at the path itself is never written through, even to a file inside.
  EXPECT_EQ(RefusalOf([&] { WriteWhole(fd_.get(), "in", "x"); }),
            "in is a symlink (to a.txt); files are written only at their own path, never through a symlink");
  EXPECT_NE(RefusalOf([&] { WriteWhole(fd_.get(), "absolute", "x"); }).find("is a symlink"), std::string::npos);
  EXPECT_NE(RefusalOf([&] { EditOnce(fd_.get(), "absolute", "secret", "x"); }).find("is a symlink"), std::string::npos);
  EXPECT_EQ(Slurp(outside_ + "/secret"), "secret\n");
  EXPECT_EQ(Slurp(root_ + "/a.txt"), "inside\n");
}

TEST_F(FileHelperTest, WritesAreWholeMakeParentsAndKeepAFilesBits) {
  WriteAnswer made = WriteWhole(fd_.get(), "src/deep/new.txt", "hello\n");
  EXPECT_TRUE(made.created);
  EXPECT_EQ(Slurp(root_ + "/src/deep/new.txt"), "hello\n");

  Spit(root_ + "/run.sh", "#!/bin/sh\n");
  ASSERT_EQ(chmod((root_ + "/run.sh").c_str(), 0750), 0);
  WriteAnswer replaced = WriteWhole(fd_.get(), "run.sh", "#!/bin/sh\necho hi\n");
  EXPECT_FALSE(replaced.created);
  struct stat st;
  ASSERT_EQ(stat((root_ + "/run.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(Slurp(root_ + "/run.sh"), "#!/bin/sh\necho hi\n");

  ASSERT_EQ(mkdir((root_ + "/dir").c_str(), 0755), 0);
  EXPECT_EQ(RefusalOf([&] { WriteWhole(fd_.get(), "dir", "x"); }), "dir is a directory");
  Spit(root_ + "/file", "x");
  EXPECT_NE(RefusalOf([&] { WriteWhole(fd_.get(), "file/below", "x"); }).find("not a directory"), std::string::npos);
  EXPECT_NE(RefusalOf([&] { WriteWhole(fd_.get(), "big", std::string(kWriteBytes + 1, 'x')); }).find("at most 16 MiB"), std::string::npos);
  // Nothing half-written is left behind: no temporary files beside the ones written.
  std::string listed = ListDirectory(fd_.get(), ".").dump();
  EXPECT_EQ(listed.find(".sandboxd-write"), std::string::npos) << listed;
}

TEST_F(FileHelperTest, AnEditReplacesTheOneOccurrenceOrRefuses) {
  Spit(root_ + "/code.py", "def f():\n    return 1\n\ndef g():\n    return 1\n");
  ASSERT_EQ(chmod((root_ + "/code.py").c_str(), 0600), 0);
  EXPECT_EQ(RefusalOf([&] { EditOnce(fd_.get(), "code.py", "return 1", "return 2"); }),
            "old_text occurs 2 times in code.py; include more of the text around it so that it occurs once");
  EXPECT_NE(RefusalOf([&] { EditOnce(fd_.get(), "code.py", "return 3", "x"); }).find("old_text does not occur in code.py"), std::string::npos);
  EXPECT_NE(RefusalOf([&] { EditOnce(fd_.get(), "code.py", "", "x"); }).find("old_text is empty"), std::string::npos);
  EXPECT_NE(RefusalOf([&] { EditOnce(fd_.get(), "code.py", "def", "def"); }).find("the same"), std::string::npos);
  EXPECT_EQ(Slurp(root_ + "/code.py"), "def f():\n    return 1\n\ndef g():\n    return 1\n") << "a refused edit changed the file";

  EditAnswer edited = EditOnce(fd_.get(), "code.py", "def g():\n    return 1", "def g():\n    return 2");
  EXPECT_EQ(edited.line, 4u);
  EXPECT_EQ(Slurp(root_ + "/code.py"), "def f():\n    return 1\n\ndef g():\n    return 2\n");
  struct stat st;
  ASSERT_EQ(stat((root_ + "/code.py").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  // Overlapping occurrences count: "aa" is twice in "aaa", and either could be meant.
  Spit(root_ + "/aaa", "aaa");
  EXPECT_NE(RefusalOf([&] { EditOnce(fd_.get(), "aaa", "aa", "b"); }).find("occurs 2 times"), std::string::npos);
  Spit(root_ + "/bin", std::string("a\0b", 3));
  EXPECT_NE(RefusalOf([&] { EditOnce(fd_.get(), "bin", "a", "b"); }).find("is not text"), std::string::npos);
  EXPECT_EQ(RefusalOf([&] { EditOnce(fd_.get(), "none", "a", "b"); }), "none does not exist in the sandbox");
}

TEST_F(FileHelperTest, AListingIsSortedTypedAndNamesEveryByte) {
  Spit(root_ + "/b.txt", "12345");
  ASSERT_EQ(mkdir((root_ + "/a").c_str(), 0755), 0);
  ASSERT_EQ(symlink("b.txt", (root_ + "/c").c_str()), 0);
  Spit(root_ + "/caf\xe9", "");
  auto listed = ListDirectory(fd_.get(), ".");
  EXPECT_EQ(listed["total"], 4);
  const auto& entries = listed["entries"];
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0]["name"], "a");
  EXPECT_EQ(entries[0]["type"], "directory");
  EXPECT_EQ(entries[1]["name"], "b.txt");
  EXPECT_EQ(entries[1]["size"], 5);
  EXPECT_EQ(entries[2]["target"], "b.txt");
  EXPECT_EQ(entries[3]["name"], "\"caf\\351\"") << "a name that is not UTF-8 travels quoted";
  EXPECT_EQ(RefusalOf([&] { ListDirectory(fd_.get(), "b.txt"); }), "b.txt is not a directory: read_file reads a file");

  for (size_t i = 0; i <= kListedEntries; ++i) Spit(root_ + "/a/" + std::to_string(i), "");
  auto many = ListDirectory(fd_.get(), "a");
  EXPECT_EQ(many["total"], kListedEntries + 1);
  EXPECT_EQ(many["entries"].size(), kListedEntries);
}

}  // namespace
}  // namespace sandboxctl::file_helper
