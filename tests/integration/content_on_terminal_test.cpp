// What a job wrote, shown to a person: on a terminal every control byte of content but TAB is
// shown visibly (DESIGN, "Data safety"), so that no byte can end a line early, move the cursor
// or erase what was shown; a pipe gets the exact bytes. The attack of issue 39: a line
// "echo harmless<NUL>; echo PWNED" past byte 8000 (so the file is text) showed as
// "+echo harmless", and bash would run the rest after the commit.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conversation.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

using namespace std::string_literals;

/// The lines of a terminal's screen that hold `part` (each without the CR the terminal puts
/// before its newline).
std::vector<std::string> LinesWith(const std::string& screen, const std::string& part) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < screen.size();) {
    size_t end = screen.find('\n', start);
    if (end == std::string::npos) end = screen.size();
    std::string line = screen.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (Contains(line, part)) lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

/// evil.sh: 3000 numbered lines live; the job rewrites lines 2000, 2003 and 2004 (past byte
/// 8000) into one hunk of two runs, which review's s splits into two parts.
class ContentOnTerminalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    project_ = World().MakeProject(kAlice);
    ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "seq 1 3000 > evil.sh"}, {.cwd = project_}).status, 0);
    id_ = Trim(Ctl({"create", project_}).out);
    ASSERT_FALSE(id_.empty());
    Result job = Ctl({"run", id_, "--", "sh", "-c",
                      "{ seq 1 1999; printf 'echo harmless\\000; echo PWNED\\n'; seq 2001 2002; "
                      "printf 'echo carriage\\rreturn\\n'; printf 'echo erase\\033[2Kline\\033[1Aup\\n'; seq 2005 3000; } > evil.sh"});
    ASSERT_EQ(job.status, 0) << job.err;
  }
  void TearDown() override {
    if (!id_.empty()) Ctl({"destroy", id_});
  }
  Result Ctl(const std::vector<std::string>& args) { return World().Sandboxctl(kAlice, args, {.cwd = project_}); }

  /// Every line of `screen` that shows one of the job's three lines shows all of it, its
  /// control bytes marked; `at_least` such lines of each.
  void ExpectEveryByteShown(const std::string& screen, size_t at_least) {
    auto harmless = LinesWith(screen, "echo harmless");
    EXPECT_GE(harmless.size(), at_least) << screen;
    for (const auto& line : harmless) EXPECT_TRUE(Contains(line, "^@") && Contains(line, "; echo PWNED")) << line;
    auto carriage = LinesWith(screen, "echo carriage");
    EXPECT_GE(carriage.size(), at_least) << screen;
    for (const auto& line : carriage) EXPECT_TRUE(Contains(line, "^M") && Contains(line, "return")) << line;
    auto erase = LinesWith(screen, "echo erase");
    EXPECT_GE(erase.size(), at_least) << screen;
    for (const auto& line : erase) EXPECT_TRUE(Contains(line, "^[") && Contains(line, "[2Kline") && Contains(line, "[1Aup")) << line;
  }
  /// Not one of the job's bytes reached the terminal as it is.
  void ExpectNoRawControlBytes(const std::string& screen) {
    EXPECT_FALSE(Contains(screen, "\0"s)) << screen;
    EXPECT_FALSE(Contains(screen, "\033[2K")) << screen;
    EXPECT_FALSE(Contains(screen, "\033[1A")) << screen;
    EXPECT_FALSE(Contains(screen, "carriage\rreturn")) << screen;
  }

  std::string project_, id_;
};

TEST_F(ContentOnTerminalTest, DiffOnATerminalShowsEveryControlByte) {
  Conversation diff(kAlice, project_, {"--no-pager", "diff", id_});
  EXPECT_EQ(diff.Finish(), 0) << diff.screen();
  ExpectEveryByteShown(diff.screen(), 1);
  ExpectNoRawControlBytes(diff.screen());
}

// less runs with LESS=FRX, and -R passes escape sequences through: sandboxctl renders the
// bytes before they reach it.
TEST_F(ContentOnTerminalTest, DiffThroughThePagerShowsEveryControlByte) {
  Conversation diff(kAlice, project_, {"diff", id_}, "", 50, 100);
  EXPECT_EQ(diff.Finish(), 0) << diff.screen();
  ExpectEveryByteShown(diff.screen(), 1);
}

// A hunk, and each part of it once s splits it.
TEST_F(ContentOnTerminalTest, ReviewShowsEveryControlByteOfHunksAndParts) {
  Conversation review(kAlice, project_, {"review", id_});
  ASSERT_TRUE(review.Answer("(1/1) Approve this hunk", "s")) << review.screen();
  ASSERT_TRUE(review.WaitFor("Split into 2 hunks")) << review.screen();
  ASSERT_TRUE(review.Answer("(1.1/1) Approve this hunk", "n")) << review.screen();
  ASSERT_TRUE(review.Answer("(1.2/1) Approve this hunk", "n")) << review.screen();
  EXPECT_EQ(review.Finish(), 0) << review.screen();
  ExpectEveryByteShown(review.screen(), 2);
  ExpectNoRawControlBytes(review.screen());
}

// Not a terminal: the exact bytes, for git apply and scripts.
TEST_F(ContentOnTerminalTest, DiffThroughAPipeKeepsTheExactBytes) {
  Result diff = Ctl({"diff", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_TRUE(Contains(diff.out, "\n+echo harmless\0; echo PWNED\n"s)) << diff.out;
  EXPECT_TRUE(Contains(diff.out, "\n+echo carriage\rreturn\n+echo erase\033[2Kline\033[1Aup\n")) << diff.out;
}

}  // namespace
}  // namespace sandboxd::it
