// Text over the 16 MiB that libgit2 gets whole, through what users see of it: the diff (as git
// prints it), the hunk count and the partial merge, the latter two through the real
// sandboxd-text-helper where the test may run it as another user.

#include <fcntl.h>
#include <gtest/gtest.h>

#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/credentials.h"
#include "base/errors.h"
#include "unique_fd.h"
#include "git_diff.h"
#include "helper_clients/helper_client.h"
#include "temp_dir.h"
#include "text/diff_writer.h"

namespace sandboxd {
namespace {

using testing::GitDiffNoIndex;
using testing::ReadFile;
using testing::ScopedTempDir;
using testing::WriteFile;

constexpr size_t kBigBytes = size_t{20} << 20;

/// About kBigBytes of numbered lines. Lines start with a letter, so every line is a "function"
/// line for hunk headers, as in C sources: the header names the line before each hunk.
const std::vector<std::string>& BigLines() {
  static const std::vector<std::string> lines = [] {
    std::vector<std::string> out;
    size_t bytes = 0;
    for (size_t i = 1; bytes < kBigBytes; ++i) {
      out.push_back("line " + std::to_string(i) + ": the quick brown fox\n");
      bytes += out.back().size();
    }
    return out;
  }();
  return lines;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  text.reserve(kBigBytes + 4096);
  for (const auto& line : lines) text += line;
  return text;
}

/// The big text with edits `which` (1 to 5) made, far apart: 1 and 4 change a line, 2 inserts
/// one, 3 deletes one, 5 changes two neighbouring lines.
std::string Edited(const std::set<int>& which) {
  std::vector<std::string> lines = BigLines();
  const size_t n = lines.size();
  auto at = [n](int k) { return n * static_cast<size_t>(k) / 6; };
  // From the last edit back, so that earlier positions stay put.
  if (which.count(5)) {
    lines[at(5)] = "edited five\n";
    lines[at(5) + 1] = "edited five again\n";
  }
  if (which.count(4)) lines[at(4)] = "edited four\n";
  if (which.count(3)) lines.erase(lines.begin() + static_cast<long>(at(3)));
  if (which.count(2)) lines.insert(lines.begin() + static_cast<long>(at(2)), "inserted two\n");
  if (which.count(1)) lines[at(1)] = "edited one\n";
  return Join(lines);
}

class BigTextTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    old_text_ = new std::string(Edited({}));
    new_text_ = new std::string(Edited({1, 2, 3, 4, 5}));
  }
  static void TearDownTestSuite() {
    delete old_text_;
    delete new_text_;
  }
  void SetUp() override {
    mkdir((dir_ / "lower").c_str(), 0755);
    mkdir((dir_ / "upper").c_str(), 0755);
    lower_.reset(open((dir_ / "lower").c_str(), O_PATH | O_DIRECTORY));
    upper_.reset(open((dir_ / "upper").c_str(), O_PATH | O_DIRECTORY));
    WriteFile(L("big.log"), *old_text_);
    WriteFile(U("big.log"), *new_text_);
  }
  std::string L(const std::string& p) { return dir_ / ("lower/" + p); }
  std::string U(const std::string& p) { return dir_ / ("upper/" + p); }
  static Change Modified(const std::string& path) {
    return {path, ChangeKind::kModified, EntryType::kFile, EntryType::kFile, 0644, 0644};
  }
  std::string Diff(const std::string& path) {
    std::string text;
    for (const auto& file : DiffChange(Modified(path), lower_.get(), upper_.get(), DiffOptions{})) text += file.Text();
    return text;
  }

  static std::string* old_text_;
  static std::string* new_text_;
  ScopedTempDir dir_;
  UniqueFd lower_, upper_;
};

std::string* BigTextTest::old_text_ = nullptr;
std::string* BigTextTest::new_text_ = nullptr;

TEST_F(BigTextTest, TextOverSixteenMiBIsDiffedAsGitDiffsIt) {
  ASSERT_GT(old_text_->size(), size_t{16} << 20);
  auto files = DiffChange(Modified("big.log"), lower_.get(), upper_.get(), DiffOptions{});
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].header.find("Binary"), std::string::npos) << files[0].header;
  EXPECT_EQ(files[0].hunks.size(), 5u);
  EXPECT_EQ(files[0].Text(), GitDiffNoIndex(L("big.log"), U("big.log"), "big.log"));
}

TEST_F(BigTextTest, WriteDiffStreamsTheSameTextAndSingleHunks) {
  std::string whole = Diff("big.log");
  UniqueFd out(open((dir_ / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  ASSERT_TRUE(WriteDiff({Modified("big.log")}, lower_.get(), upper_.get(), DiffOptions{}, out.get()));
  EXPECT_EQ(ReadFile(dir_ / "out"), whole);

  // `diff big.log:2 big.log:4`: the file's header and those two hunks, as numbered above.
  auto files = DiffChange(Modified("big.log"), lower_.get(), upper_.get(), DiffOptions{});
  ASSERT_EQ(files.at(0).hunks.size(), 5u);
  DiffOptions only;
  only.only_hunks["big.log"] = {{2, 0}, {4, 0}};
  UniqueFd partial(open((dir_ / "partial").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  ASSERT_TRUE(WriteDiff({Modified("big.log")}, lower_.get(), upper_.get(), only, partial.get()));
  const auto& hunks = files[0].hunks;
  EXPECT_EQ(ReadFile(dir_ / "partial"),
            files[0].header + hunks[1].header + "\n" + hunks[1].body + hunks[3].header + "\n" + hunks[3].body);
  only.only_hunks["big.log"] = {{6, 0}};
  EXPECT_THROW(WriteDiff({Modified("big.log")}, lower_.get(), upper_.get(), only, partial.get()), Error);
}

TEST_F(BigTextTest, ANulInTheFirst8000BytesKeepsABigFileBinary) {
  std::string early = *new_text_;
  early[100] = '\0';
  WriteFile(U("early-nul.log"), early);
  WriteFile(L("early-nul.log"), *old_text_);
  EXPECT_EQ(Diff("early-nul.log"), testing::GitDiffAsShown(L("early-nul.log"), U("early-nul.log"), "early-nul.log"));
  EXPECT_NE(Diff("early-nul.log").find("\nBinary files a/early-nul.log and b/early-nul.log differ\n"), std::string::npos);
  std::string late = *new_text_;
  late[9000] = '\0';  // past git's probe: still text
  WriteFile(U("late-nul.log"), late);
  WriteFile(L("late-nul.log"), *old_text_);
  std::string diff = Diff("late-nul.log");
  EXPECT_EQ(diff.find("Binary"), std::string::npos);
  EXPECT_EQ(diff, GitDiffNoIndex(L("late-nul.log"), U("late-nul.log"), "late-nul.log"));
}

TEST_F(BigTextTest, FilesOverGitsBigFileThresholdAreBinary) {
  // Sparse files: text for git's 8000-byte probe, then 513 MiB in all, above the 512 MiB
  // core.bigFileThreshold past which git shows any file as binary.
  for (const std::string& path : {L("huge.log"), U("huge.log")}) {
    WriteFile(path, (path == L("huge.log") ? "a" : "b") + BigLines().front() + std::string(9000, 'x') + "\n");
    ASSERT_EQ(truncate(path.c_str(), off_t{513} << 20), 0);
  }
  // The ids are git hash-object's of the two files (git itself would diff these as text: its
  // size rule applies only to sizes that differ, see docs/performance.md, "Big text files").
  EXPECT_EQ(Diff("huge.log"),
            "diff --git a/huge.log b/huge.log\nindex 64dd4e2..404c976 100644\nBinary files a/huge.log and b/huge.log differ\n");
}

/// `hunks` and `merge` through the real sandboxd-text-helper, run as nobody (needs root).
class BigTextHelperTest : public BigTextTest {
 protected:
  void SetUp() override {
    BigTextTest::SetUp();
    if (geteuid() != 0) GTEST_SKIP() << "needs root to run sandboxd-text-helper as another user";
    helper_ = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "../../daemon/sandboxd-helper";
    if (access(helper_.c_str(), X_OK) != 0) GTEST_SKIP() << "no sandboxd-helper at " << helper_;
    try {
      user_ = LookupUser(65534);
    } catch (const Error&) {
      GTEST_SKIP() << "no user 65534 (nobody) to run sandboxd-text-helper as";
    }
    chmod(dir_.path().c_str(), 0755);
  }
  std::string helper_;
  std::optional<HelperPrograms> programs_;
  HelperPrograms& Programs() {
    if (!programs_) programs_.emplace(helper_);
    return *programs_;
  }
  UserCredentials user_;
};

TEST_F(BigTextHelperTest, HunksCountsTheFiveHunksTheDiffShows) {
  HelperRoot root{lower_.get(), upper_.get(), "", {Modified("big.log")}, {}, {}};
  auto counts = CountHunksAsOwner(Programs(), user_, {root});
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].at("big.log").hunks, 5);
  EXPECT_EQ(counts[0].size(), 1u);
}

TEST_F(BigTextHelperTest, MergeTakesExactlyTheApprovedHunks) {
  UniqueFd out(open((dir_ / "merged").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  MergeHunksAsOwner(Programs(), user_, lower_.get(), upper_.get(), "big.log", HunkPick{{2, 4}}, out.get());
  EXPECT_TRUE(ReadFile(dir_ / "merged") == Edited({2, 4})) << "the merge of hunks 2 and 4 is not the text with edits 2 and 4";

  UniqueFd all(open((dir_ / "all").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  MergeHunksAsOwner(Programs(), user_, lower_.get(), upper_.get(), "big.log", HunkPick{{1, 2, 3, 4, 5}}, all.get());
  EXPECT_TRUE(ReadFile(dir_ / "all") == *new_text_);

  UniqueFd none(open((dir_ / "none").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  try {
    MergeHunksAsOwner(Programs(), user_, lower_.get(), upper_.get(), "big.log", HunkPick{{2, 6}}, none.get());
    ADD_FAILURE() << "hunk 6 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kNotFound);
    EXPECT_EQ(std::string(e.what()), "big.log: hunk 6 does not exist: the change has 5 hunks");
  }
  EXPECT_EQ(ReadFile(dir_ / "none"), "") << "a refused merge leaves its output empty";
}

}  // namespace
}  // namespace sandboxd
