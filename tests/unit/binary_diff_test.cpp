// `diff --binary` (DiffOptions::binary) is git's `git diff --binary`: `git apply --binary` of it
// on a copy of the live tree gives the sandbox's tree exactly (what `commit --all` lands), for
// every kind of change; a file on its own reads as git writes it. The form without --binary has
// git's index line before "Binary files ... differ", so that git takes every header for a patch.

#include "text/diff_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "unique_fd.h"
#include "git_diff.h"
#include "helpers/helper_operations.h"
#include "model/change_json.h"
#include "shell_output.h"
#include "temp_dir.h"
#include "unprivileged.h"

namespace sandboxd {
namespace {

using testing::ReadFile;
using testing::ScopedTempDir;
using testing::ShellOutput;
using testing::WriteFile;

std::string LinesEndingWith(int from, int to, const std::string& end = "\n") {
  std::string text;
  for (int i = from; i <= to; ++i) text += "line " + std::to_string(i) + end;
  return text;
}

Change Of(const std::string& path, ChangeKind kind, EntryType old_type, EntryType new_type, mode_t old_mode = 0644,
          mode_t new_mode = 0644) {
  return {path, kind, old_type, new_type, old_type == EntryType::kNone ? 0u : old_mode, new_type == EntryType::kNone ? 0u : new_mode};
}

class BinaryDiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mkdir((dir_ / "lower").c_str(), 0755);
    mkdir((dir_ / "upper").c_str(), 0755);
    lower_.reset(open((dir_ / "lower").c_str(), O_PATH | O_DIRECTORY));
    upper_.reset(open((dir_ / "upper").c_str(), O_PATH | O_DIRECTORY));
  }
  std::string L(const std::string& p) { return dir_ / ("lower/" + p); }
  std::string U(const std::string& p) { return dir_ / ("upper/" + p); }
  /// WriteDiff's whole output.
  std::string Diff(const std::vector<Change>& changes, const DiffOptions& options, const std::vector<Rename>& renames = {}) {
    UniqueFd out(open((dir_ / "out.diff").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    EXPECT_TRUE(WriteDiff(changes, lower_.get(), upper_.get(), options, out.get(), renames));
    return ReadFile(dir_ / "out.diff");
  }
  /// `git apply ARGS` of `patch` in a fresh copy of the live tree; its stderr when it fails.
  std::string ApplyInCopy(const std::string& patch, const std::string& args = "--binary") {
    WriteFile(dir_ / "in.diff", patch);
    // HOME: no one's git configuration but git's defaults (and one that nobody may read).
    return ShellOutput("rm -rf '" + dir_ / "copy" + "' && cp -a '" + L("") + "' '" + dir_ / "copy" + "' && cd '" + dir_ / "copy" +
                       "' && HOME='" + dir_.path() + "' git apply " + args + " '" + dir_ / "in.diff" + "' 2>&1 && echo applied");
  }
  /// Every entry below `top`, sorted: its type, whether a file is executable (all that git
  /// keeps of a mode), a symlink's target. Contents are compared with diff -r.
  std::string Tree(const std::string& top) {
    // NUL-terminated: a name may hold a newline.
    std::string listing = ShellOutput("cd '" + top + "' && find . -mindepth 1 -printf '%y %m %p -> %l\\0' | LC_ALL=C sort -z -k3");
    std::string tree;
    for (size_t at = 0; at < listing.size();) {
      size_t end = listing.find('\0', at);
      std::string line = listing.substr(at, end - at);
      at = end + 1;
      size_t mode_end = line.find(' ', 2);
      std::string mode = line.substr(2, mode_end - 2);
      bool executable = (std::stoul(mode, nullptr, 8) & 0111) != 0;
      tree += line.substr(0, 2) + (line[0] == 'f' ? (executable ? "x" : "-") : "") + line.substr(mode_end) + "\n";
    }
    return tree;
  }
  ScopedTempDir dir_;
  UniqueFd lower_, upper_;
};

// What commit --all lands, every kind of change at once, through git apply --binary.
TEST_F(BinaryDiffTest, GitApplyOfTheBinaryDiffGivesTheSandboxsTree) {
  const std::string old_bin = testing::SomeBinary(70000, 1), new_bin = testing::SomeBinary(90001, 2);
  // Modified, added and deleted binary files; one binary by its size alone (max_text_bytes below).
  WriteFile(L("mod.bin"), old_bin);
  WriteFile(U("mod.bin"), new_bin);
  WriteFile(U("new.bin"), testing::SomeBinary(5000, 3));
  WriteFile(L("del.bin"), testing::SomeBinary(300, 4));
  WriteFile(L("big.log"), LinesEndingWith(1, 3000));
  WriteFile(U("big.log"), LinesEndingWith(1, 1500) + "changed\n" + LinesEndingWith(1502, 3000));
  // Text with a NUL past git's first 8000 bytes, CRLF lines, no newline at the end.
  WriteFile(L("nul.txt"), LinesEndingWith(1, 1000));
  WriteFile(U("nul.txt"), LinesEndingWith(1, 999) + std::string("echo harmless\0; echo PWNED\n", 27));
  WriteFile(L("crlf.txt"), LinesEndingWith(1, 5, "\r\n"));
  WriteFile(U("crlf.txt"), LinesEndingWith(1, 2, "\r\n") + "three\r\n" + LinesEndingWith(4, 5, "\r\n"));
  WriteFile(L("noeol.txt"), "one\ntwo");
  WriteFile(U("noeol.txt"), "one\ntwo\nthree");
  // Names git quotes, spaces, UTF-8.
  WriteFile(U("name with spaces.txt"), "spaces\n");
  WriteFile(U("new\nline.txt"), "newline\n");
  WriteFile(U("caf\xc3\xa9.bin"), std::string("\0caf\xc3\xa9", 6));
  // Modes: the same bytes with a new mode (text and binary), new bytes and a new mode.
  WriteFile(L("run.sh"), "echo\n", 0644);
  WriteFile(U("run.sh"), "echo\n", 0755);
  WriteFile(L("tool.bin"), std::string("\0tool", 5), 0644);
  WriteFile(U("tool.bin"), std::string("\0tool", 5), 0755);
  WriteFile(L("grown.bin"), std::string("\0grown", 6), 0755);
  WriteFile(U("grown.bin"), std::string("\0grown up", 9), 0644);
  // Symlinks: retargeted, added, a file that became one; empty files added and deleted.
  symlink("mod.bin", L("link").c_str());
  symlink("new.bin", U("link").c_str());
  symlink("nowhere", U("new-link").c_str());
  WriteFile(L("t"), std::string("\0was a file", 11));
  symlink("crlf.txt", U("t").c_str());
  WriteFile(U("empty"), "");
  WriteFile(L("was-empty"), "");
  // A directory deleted with what it held, a rename into a new directory.
  mkdir(L("gone").c_str(), 0755);
  WriteFile(L("gone/a.bin"), std::string("\0a", 2));
  WriteFile(L("gone/b.txt"), "b\n");
  WriteFile(L("old.bin"), testing::SomeBinary(2000, 5));
  mkdir(U("moved").c_str(), 0755);
  WriteFile(U("moved/new.bin"), testing::SomeBinary(2000, 5));
  // Unchanged live files stay as they are.
  WriteFile(L("same.txt"), "same\n");
  WriteFile(U("same.txt"), "same\n");

  const auto kFile = EntryType::kFile, kNone = EntryType::kNone, kLink = EntryType::kSymlink, kDir = EntryType::kDirectory;
  std::vector<Change> changes = {
      Of("big.log", ChangeKind::kModified, kFile, kFile),
      Of("caf\xc3\xa9.bin", ChangeKind::kAdded, kNone, kFile),
      Of("crlf.txt", ChangeKind::kModified, kFile, kFile),
      Of("del.bin", ChangeKind::kDeleted, kFile, kNone),
      Of("empty", ChangeKind::kAdded, kNone, kFile),
      Of("gone", ChangeKind::kDeleted, kDir, kNone, 0755, 0),
      Of("grown.bin", ChangeKind::kModified, kFile, kFile, 0755, 0644),
      Of("link", ChangeKind::kModified, kLink, kLink, 0777, 0777),
      Of("mod.bin", ChangeKind::kModified, kFile, kFile),
      Of("moved", ChangeKind::kAdded, kNone, kDir, 0, 0755),
      Of("moved/new.bin", ChangeKind::kAdded, kNone, kFile),
      Of("name with spaces.txt", ChangeKind::kAdded, kNone, kFile),
      Of("new\nline.txt", ChangeKind::kAdded, kNone, kFile),
      Of("new-link", ChangeKind::kAdded, kNone, kLink, 0, 0777),
      Of("new.bin", ChangeKind::kAdded, kNone, kFile),
      Of("noeol.txt", ChangeKind::kModified, kFile, kFile),
      Of("nul.txt", ChangeKind::kModified, kFile, kFile),
      Of("old.bin", ChangeKind::kDeleted, kFile, kNone),
      Of("run.sh", ChangeKind::kModeChanged, kFile, kFile, 0644, 0755),
      Of("t", ChangeKind::kTypeChanged, kFile, kLink, 0644, 0777),
      Of("tool.bin", ChangeKind::kModeChanged, kFile, kFile, 0644, 0755),
      Of("was-empty", ChangeKind::kDeleted, kFile, kNone),
  };
  DiffOptions options;
  options.max_text_bytes = 20000;  // big.log (38 KB) is binary by its size, nul.txt (11 KB) text
  options.binary = true;
  std::string diff = Diff(changes, options, {{"old.bin", "moved/new.bin"}});
  EXPECT_NE(diff.find("GIT binary patch\n"), std::string::npos);
  EXPECT_EQ(diff.find("Binary files"), std::string::npos) << diff;
  EXPECT_NE(diff.find(std::string("\n+echo harmless\0; echo PWNED\n", 28)), std::string::npos) << "nul.txt is text";
  // What git reads of it, and what it makes of the live tree.
  EXPECT_EQ(ApplyInCopy(diff, "--binary --check"), "applied\n");
  ASSERT_EQ(ApplyInCopy(diff), "applied\n");
  EXPECT_EQ(Tree(dir_ / "copy"), Tree(U("")));
  EXPECT_EQ(ShellOutput("diff -r --no-dereference '" + dir_ / "copy" + "' '" + U("") + "' && echo same"), "same\n");
  // And back: git apply -R of it on the result gives the live tree again.
  WriteFile(dir_ / "in.diff", diff);
  EXPECT_EQ(ShellOutput("cd '" + dir_ / "copy" + "' && git apply -R --binary '" + dir_ / "in.diff" + "' 2>&1 && echo applied"), "applied\n");
  EXPECT_EQ(ShellOutput("diff -r --no-dereference '" + dir_ / "copy" + "' '" + L("") + "' && echo same"), "same\n");

  // Without --binary, git reads the same diff for what it is (every file), and applies all but
  // what it has no data for.
  options.binary = false;
  std::string plain = Diff(changes, options, {{"old.bin", "moved/new.bin"}});
  EXPECT_EQ(plain.find("GIT binary patch"), std::string::npos);
  EXPECT_EQ(ApplyInCopy(plain, "--stat >/dev/null"), "applied\n");
  EXPECT_EQ(ApplyInCopy(plain, "--check --exclude=*.bin --exclude=big.log --exclude=t"), "applied\n");
}

std::string GitBinaryDiff(const std::string& old_path, const std::string& new_path, const std::string& shown,
                          const std::string& flags = "--binary") {
  return testing::GitDiffAsShown(old_path, new_path, shown, flags);
}

// One file at a time, the bytes git writes: added and deleted binary files (git writes literals
// there too), text files with their index lines, empty files, symlinks' modes.
TEST_F(BinaryDiffTest, EachFileReadsAsGitDiffBinaryWritesIt) {
  WriteFile(U("new.bin"), testing::SomeBinary(100000, 9));
  WriteFile(L("del.bin"), testing::SomeBinary(333, 10));
  WriteFile(L("t.txt"), LinesEndingWith(1, 20));
  WriteFile(U("t.txt"), LinesEndingWith(1, 9) + "ten\n" + LinesEndingWith(11, 20));
  WriteFile(U("e"), "");
  WriteFile(L("x.bin"), std::string("\0x", 2), 0644);
  WriteFile(U("x.bin"), std::string("\0x", 2), 0755);
  DiffOptions binary;
  binary.binary = true;
  auto one = [&](const Change& change, const DiffOptions& options) {
    std::string text;
    for (const auto& file : DiffChange(change, lower_.get(), upper_.get(), options)) text += file.Text();
    return text;
  };
  EXPECT_EQ(one(Of("new.bin", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile), binary),
            GitBinaryDiff("/dev/null", U("new.bin"), "new.bin"));
  EXPECT_EQ(one(Of("del.bin", ChangeKind::kDeleted, EntryType::kFile, EntryType::kNone), binary),
            GitBinaryDiff(L("del.bin"), "/dev/null", "del.bin"));
  EXPECT_EQ(one(Of("t.txt", ChangeKind::kModified, EntryType::kFile, EntryType::kFile), binary),
            GitBinaryDiff(L("t.txt"), U("t.txt"), "t.txt"));
  EXPECT_EQ(one(Of("e", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile), binary), GitBinaryDiff("/dev/null", U("e"), "e"));
  EXPECT_EQ(one(Of("x.bin", ChangeKind::kModeChanged, EntryType::kFile, EntryType::kFile, 0644, 0755), binary),
            GitBinaryDiff(L("x.bin"), U("x.bin"), "x.bin"));
  // Without --binary: git's plain form, abbreviated ids before "Binary files".
  EXPECT_EQ(one(Of("new.bin", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile), DiffOptions{}),
            GitBinaryDiff("/dev/null", U("new.bin"), "new.bin", ""));
  EXPECT_EQ(one(Of("del.bin", ChangeKind::kDeleted, EntryType::kFile, EntryType::kNone), DiffOptions{}),
            GitBinaryDiff(L("del.bin"), "/dev/null", "del.bin", ""));
  EXPECT_EQ(one(Of("x.bin", ChangeKind::kModeChanged, EntryType::kFile, EntryType::kFile, 0644, 0755), DiffOptions{}),
            GitBinaryDiff(L("x.bin"), U("x.bin"), "x.bin", ""));
  symlink("a", L("l").c_str());
  symlink("b", U("l").c_str());
  std::string link = one(Of("l", ChangeKind::kModified, EntryType::kSymlink, EntryType::kSymlink, 0777, 0777), binary);
  EXPECT_NE(link.find("\nindex 2e65efe..63d8dbd 120000\n--- a/l\n"), std::string::npos) << link;
}

// A side the owner cannot read has no id: the header still reads as a patch, and git refuses
// to apply it rather than take it for an absent file (which zeros would say), with --binary too.
TEST_F(BinaryDiffTest, AnUnreadableSideHasNoIdAndNoPatch) {
  WriteFile(L("secret.bin"), std::string("\0live", 5));
  WriteFile(U("secret.bin"), std::string("\0sandbox", 8), 0);
  WriteFile(L("next.txt"), "a\n");
  WriteFile(U("next.txt"), "b\n");
  const std::string live_id = ShellOutput("git hash-object '" + L("secret.bin") + "'").substr(0, 40);
  std::vector<Change> changes = {Of("secret.bin", ChangeKind::kModified, EntryType::kFile, EntryType::kFile, 0644, 0),
                                 Of("next.txt", ChangeKind::kModified, EntryType::kFile, EntryType::kFile)};
  testing::RunAsNobody nobody(dir_.path());  // root would read a mode-000 file
  for (bool binary : {false, true}) {
    DiffOptions options;
    options.binary = binary;
    std::string diff = Diff(changes, options);
    const size_t digits = binary ? 40 : 7;
    EXPECT_NE(diff.find("diff --git a/secret.bin b/secret.bin\nold mode 100644\nnew mode 100000\nindex " + live_id.substr(0, digits) +
                        ".." + std::string(digits, '?') + "\nBinary files a/secret.bin and b/secret.bin differ\n"),
              std::string::npos)
        << diff;
    EXPECT_EQ(diff.find("GIT binary patch"), std::string::npos) << diff;
    EXPECT_EQ(ApplyInCopy(diff, "--stat >/dev/null"), "applied\n");
    std::string refused = ApplyInCopy(diff, "--binary --check");
    EXPECT_NE(refused.find("cannot apply binary patch to 'secret.bin' without full index line"), std::string::npos) << refused;
    EXPECT_EQ(ApplyInCopy(diff, "--check --exclude=secret.bin"), "applied\n");
  }
}

// The text helper's `diff` takes the wish from its request (each root's "binary": true, as
// RunHelper writes Diff's option "binary").
TEST_F(BinaryDiffTest, TheTextHelpersDiffTakesBinaryFromItsRequest) {
  WriteFile(U("new.bin"), std::string("\0new", 4));
  nlohmann::json change = ChangeToJson(Of("new.bin", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile));
  for (bool binary : {false, true}) {
    UniqueFd out(open((dir_ / "out.diff").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    nlohmann::json request = {{"op", "diff"}, {"output_fd", out.get()}, {"roots", nlohmann::json::array()}};
    request["roots"].push_back({{"live_fd", lower_.get()}, {"upper_fd", upper_.get()}, {"prefix", ""},
                                {"changes", nlohmann::json::array({change})}, {"renames", nlohmann::json::array()}, {"binary", binary}});
    TextHelperOperations().at(HelperOp::kDiff)(request);
    std::string diff = ReadFile(dir_ / "out.diff");
    EXPECT_EQ(diff.find("GIT binary patch\n") != std::string::npos, binary) << diff;
    EXPECT_EQ(diff.find("Binary files /dev/null and b/new.bin differ\n") != std::string::npos, !binary) << diff;
  }
}

}  // namespace
}  // namespace sandboxd
