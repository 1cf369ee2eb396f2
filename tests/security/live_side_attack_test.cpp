// Issue 40, item 4: "the change set shows what only root can see". The daemon (root) computed
// the change set by comparing the upper layer with the live tree as root: a root-only 0700
// directory under a directory a job made anew (opaque in the upper) was listed as deletions
// with the names, sizes and modes beneath it, and a file the job wrote over a root-only one
// came out `P` (or not at all) when its bytes were the secret's and `M` when not: an oracle of
// content the owner cannot read. The live side of every comparison is read with the owner's
// credentials (DESIGN, "Security model"). Each attack is made as alice would make it: jobs and
// sandboxctl; root only places its own files in her project, as an admin (or her own `mv` of a
// directory root left her) would.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <map>
#include <sstream>
#include <string>

#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

/// Root's file at `path`, mode `mode`, owned by root.
void WriteRootFile(const std::string& path, const std::string& content, mode_t mode) {
  WriteWhole(path, content);
  ASSERT_EQ(chown(path.c_str(), 0, 0), 0);
  ASSERT_EQ(chmod(path.c_str(), mode), 0);
}

void MakeRootDirectory(const std::string& path) {
  ASSERT_EQ(mkdir(path.c_str(), 0700), 0) << path;
  ASSERT_EQ(chmod(path.c_str(), 0700), 0);
}

/// The line `changes` prints for `path`, the path itself left out ("" when none names it).
std::string LineOf(const std::string& changes, const std::string& path) {
  std::istringstream lines(changes);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() < 2) continue;
    std::string rest = line.substr(2);
    if (rest == path) return line.substr(0, 1);
    if (rest.rfind(path + " ", 0) == 0) return line.substr(0, 1) + rest.substr(path.size());
  }
  return "";
}

/// The `--json changes` entry of `path`, without its path (null when none names it).
nlohmann::json EntryOf(const nlohmann::json& listed, const std::string& path) {
  for (const auto& entry : listed)
    if (entry.value("path", "") == path) {
      nlohmann::json rest = entry;
      rest.erase("path");
      return rest;
    }
  return nullptr;
}

/// The section of a `diff` about `path`, with the path written as "PATH".
std::string DiffSectionOf(const std::string& diff, const std::string& path) {
  std::string start = "diff --git a/" + path + " b/" + path + "\n";
  size_t from = diff.find(start);
  if (from == std::string::npos) return "";
  size_t to = diff.find("diff --git ", from + start.size());
  std::string section = diff.substr(from, to == std::string::npos ? std::string::npos : to - from);
  for (size_t at; (at = section.find(path)) != std::string::npos;) section.replace(at, path.size(), "PATH");
  return section;
}

class LiveSideAttackTest : public AliceSandboxTest {};

// Attack 1: the job makes sub/ anew (opaque in the upper), and a vault/ beneath it holding two
// guesses; root's 0700 vault/ (and a locked/ beside it) then sits under the live sub/. On the
// host alice sees that vault/ and locked/ exist and their modes, nothing beneath.
TEST_F(LiveSideAttackTest, AnOpaqueDirectoryOverRootsDirectoryShowsNothingBeneathIt) {
  Job("rm -rf sub && mkdir -p sub/vault && echo mine > sub/new && printf 'GUESS-1\\n' > sub/vault/key-right && "
      "printf 'GUESS-1\\n' > sub/vault/key-wrong && printf 'GUESS-1\\n' > sub/vault/key-absent");
  std::string vault = project_ + "/sub/vault", locked = project_ + "/sub/locked";
  MakeRootDirectory(vault);
  WriteRootFile(vault + "/key-right", "GUESS-1\n", 0600);
  WriteRootFile(vault + "/key-wrong", "GUESS-2\n", 0600);
  WriteRootFile(vault + "/payroll-2026.csv", "SALARY,1000000\n", 0640);
  MakeRootDirectory(vault + "/inner-plans");
  WriteRootFile(vault + "/inner-plans/merger.txt", "ACQUIRE\n", 0600);
  MakeRootDirectory(locked);
  WriteRootFile(locked + "/confidential-memo.txt", "MEMO\n", 0600);
  // The control: on the host alice can list neither.
  ASSERT_NE(World().RunAs(kAlice, {"ls", vault}).status, 0);
  ASSERT_NE(World().RunAs(kAlice, {"ls", locked}).status, 0);

  std::string changes = Changes();
  Result json = Ctl({"--json", "changes", id_});
  ASSERT_EQ(json.status, 0) << json.err;
  Result diff = Ctl({"diff", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  for (const char* secret : {"payroll", "inner-plans", "merger", "confidential-memo"}) {
    EXPECT_FALSE(Contains(changes, secret)) << "changes names " << secret << " in root's 0700 directory:\n" << changes;
    EXPECT_FALSE(Contains(json.out, secret)) << "changes --json names " << secret << ":\n" << json.out;
    EXPECT_FALSE(Contains(diff.out + diff.err, secret)) << "diff names " << secret << ":\n" << diff.out << diff.err;
  }
  // Nothing beneath them at all, whatever its name: the directories' own entries only.
  auto listed = nlohmann::json::parse(json.out);
  for (const auto& entry : listed) {
    std::string path = entry.value("path", "");
    EXPECT_TRUE(path.rfind("sub/locked/", 0) != 0) << "an entry beneath root's locked/: " << entry.dump();
    if (path.rfind("sub/vault/", 0) == 0) {
      EXPECT_TRUE(path == "sub/vault/key-right" || path == "sub/vault/key-wrong" || path == "sub/vault/key-absent")
          << "an entry beneath root's vault/: " << entry.dump();
    }
  }
  // locked/ is gone from the sandbox's view: its deletion, as alice can see it (the name and
  // mode in her own sub/), with nothing beneath.
  EXPECT_EQ(LineOf(changes, "sub/locked"), "D") << changes;
  // The job's guesses in vault/ are told apart by nothing but their names: not by whether root's
  // vault/ holds a file of that name (key-absent: it does not), nor by whether its bytes are the
  // guess (key-right) or not (key-wrong).
  EXPECT_NE(LineOf(changes, "sub/vault/key-right"), "") << "the job's file is not shown:\n" << changes;
  for (const char* other : {"sub/vault/key-wrong", "sub/vault/key-absent"}) {
    EXPECT_EQ(LineOf(changes, "sub/vault/key-right"), LineOf(changes, other)) << changes;
    EXPECT_EQ(EntryOf(listed, "sub/vault/key-right"), EntryOf(listed, other)) << json.out;
    EXPECT_EQ(DiffSectionOf(diff.out, "sub/vault/key-right"), DiffSectionOf(diff.out, other)) << diff.out;
  }
}

// Attack 2: root's 0600 files in alice's own directory, which she may remove and write again
// but not read. The job writes the same guess of the same length in place of each; one guess
// is right. Whatever it writes, and whatever mode it gives, the change set says the same of
// both, and so does the diff.
TEST_F(LiveSideAttackTest, AGuessAtARootOnlyFileIsShownTheSameRightOrWrong) {
  WriteRootFile(project_ + "/pin-right", "hunter2\n", 0600);
  WriteRootFile(project_ + "/pin-wrong", "hunter3\n", 0600);
  WriteRootFile(project_ + "/quiet-right", "hunter2\n", 0600);
  WriteRootFile(project_ + "/quiet-wrong", "hunter3\n", 0600);
  ASSERT_NE(World().RunAs(kAlice, {"cat", project_ + "/pin-right"}).status, 0) << "the control: alice cannot read it";
  Job("for f in pin-right pin-wrong quiet-right quiet-wrong; do rm -f $f && printf 'hunter2\\n' > $f; done && "
      "chmod 644 pin-right pin-wrong && chmod 600 quiet-right quiet-wrong");

  std::string changes = Changes();
  Result json = Ctl({"--json", "changes", id_});
  ASSERT_EQ(json.status, 0) << json.err;
  auto listed = nlohmann::json::parse(json.out);
  Result diff = Ctl({"diff", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  for (std::string name : {"pin", "quiet"}) {
    std::string right = name + "-right", wrong = name + "-wrong";
    EXPECT_NE(LineOf(changes, right), "") << "the job's write over " << right << " is not shown:\n" << changes;
    EXPECT_EQ(LineOf(changes, right), LineOf(changes, wrong)) << "a right guess is told from a wrong one:\n" << changes;
    EXPECT_EQ(EntryOf(listed, right), EntryOf(listed, wrong)) << json.out;
    EXPECT_EQ(DiffSectionOf(diff.out, right), DiffSectionOf(diff.out, wrong)) << diff.out;
    EXPECT_FALSE(Contains(diff.out, "hunter3")) << "the diff shows root's file:\n" << diff.out;
  }
}

}  // namespace
}  // namespace sandboxd::it
