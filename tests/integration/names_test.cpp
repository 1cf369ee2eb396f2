// Names are data (DESIGN, "Data safety"): a job chooses its file names, and no name may steer
// the owner's terminal or break a diff. Every human output quotes them as git does
// (core.quotePath); --json keeps them exact; `git apply` takes the diff back.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <set>

#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

const std::string kEscape = "evil\033[2K\rname";  // erases the line it is on and returns
const std::string kNewline = "new\nline.txt";

/// Whether `text` holds a byte that moves a terminal's cursor or starts a control sequence.
bool HasControlBytes(const std::string& text) {
  for (unsigned char c : text)
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return true;
  return false;
}

class NamesTest : public AliceSandboxTest {
 protected:
  void SetUp() override {
    AliceSandboxTest::SetUp();
    if (HasFatalFailure()) return;
    // printf's escapes make the names; the job writes them as any program could.
    Job("printf 'x\\n' > \"$(printf 'evil\\033[2K\\rname')\"; printf 'y\\n' > \"$(printf 'new\\nline.txt')\"");
  }
};

TEST_F(NamesTest, ChangesQuotesNamesAsGitDoes) {
  std::string out = Changes();
  EXPECT_FALSE(HasControlBytes(out)) << out;
  EXPECT_NE(out.find("A \"evil\\033[2K\\rname\"\n"), std::string::npos) << out;
  EXPECT_NE(out.find("A \"new\\nline.txt\"\n"), std::string::npos) << out;
  // The names as a program needs them: exact.
  auto json = nlohmann::json::parse(Ctl({"--json", "changes", id_}).out);
  std::set<std::string> paths;
  for (const auto& change : json) paths.insert(change["path"].get<std::string>());
  EXPECT_TRUE(paths.count(kEscape));
  EXPECT_TRUE(paths.count(kNewline));
}

TEST_F(NamesTest, TheDiffQuotesItsHeadersAndGitAppliesIt) {
  Result diff = Ctl({"diff", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_NE(diff.out.find("diff --git \"a/new\\nline.txt\" \"b/new\\nline.txt\"\n"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("+++ \"b/evil\\033[2K\\rname\"\n"), std::string::npos) << diff.out;
  // Only content lines may hold what the files hold; no header does.
  for (size_t at = 0; at < diff.out.size();) {
    size_t end = diff.out.find('\n', at);
    std::string line = diff.out.substr(at, end - at);
    if (!line.empty() && line[0] != '+' && line[0] != '-' && line[0] != ' ') EXPECT_FALSE(HasControlBytes(line)) << line;
    if (line.rfind("+++", 0) == 0 || line.rfind("---", 0) == 0) EXPECT_FALSE(HasControlBytes(line)) << line;
    at = end == std::string::npos ? diff.out.size() : end + 1;
  }
  // git apply makes the same two files in a copy of the live tree.
  std::string copy = project_ + ".copy";
  ASSERT_EQ(World().RunAs(kAlice, {"cp", "-a", project_, copy}).status, 0);
  Result applied = World().RunAs(kAlice, {"git", "apply", "--unsafe-paths", "-"}, {.input = diff.out, .cwd = copy});
  EXPECT_EQ(applied.status, 0) << applied.err;
  EXPECT_EQ(ReadWhole(copy + "/" + kNewline), "y\n");
  EXPECT_EQ(ReadWhole(copy + "/" + kEscape), "x\n");
}

TEST_F(NamesTest, AnErrorNamingANameCannotSteerTheTerminal) {
  Result refused = Ctl({"approve", id_, "no\033[2Ksuch"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_FALSE(HasControlBytes(refused.err)) << refused.err;
  EXPECT_NE(refused.err.find("no\\033[2Ksuch"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace sandboxd::it

namespace sandboxd::it {
namespace {

// Suspend archives the upper and resume restores it: names outside ASCII (UTF-8 or not) come
// back byte for byte. The daemon and its archive helper run in the C locale, where libarchive
// would otherwise try to translate such names and refuse the suspend.
TEST_F(NamesTest, SuspendAndResumeKeepEveryNameByteForByte) {
  Job("printf 'c\\n' > \"$(printf 'caf\\303\\251')\"; printf 'n\\n' > \"$(printf 'raw\\377name')\"");
  Result suspended = Ctl({"suspend", id_});
  ASSERT_EQ(suspended.status, 0) << suspended.err;
  Result resumed = Ctl({"resume", id_});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  Result listed = Ctl({"run", id_, "--", "sh", "-c", "cat \"$(printf 'caf\\303\\251')\" \"$(printf 'raw\\377name')\""});
  EXPECT_EQ(listed.status, 0) << listed.err;
  EXPECT_EQ(listed.out, "c\nn\n");
}


// A name need not be UTF-8, but a D-Bus string must be: such a name travels as its git-quoted
// "wire name" (docs/security.md, "Names are data"), is shown quoted, is named back that way, and goes live as the
// very bytes the job chose. Before, the reply could not be built: `changes` failed for the whole
// sandbox, and a refusal naming such a name took the daemon down.
TEST_F(NamesTest, ANameThatIsNotUtf8IsListedNamedAndCommittedExactly) {
  const std::string raw = "raw\377name", wire = "\"raw\\377name\"";
  Job("printf 'r\\n' > \"$(printf 'raw\\377name')\"");
  std::string out = Changes();
  EXPECT_NE(out.find("A " + wire + "\n"), std::string::npos) << out;
  auto json = nlohmann::json::parse(Ctl({"--json", "changes", id_}).out);
  std::set<std::string> paths;
  for (const auto& change : json) paths.insert(change["path"].get<std::string>());
  EXPECT_TRUE(paths.count(wire)) << json.dump();
  Result approved = Ctl({"approve", id_, "--", wire});
  ASSERT_EQ(approved.status, 0) << approved.err;
  Result committed = Ctl({"commit", id_});
  ASSERT_EQ(committed.status, 0) << committed.err;
  EXPECT_EQ(ReadWhole(project_ + "/" + raw), "r\n");
}

TEST_F(NamesTest, ARefusalNamingANameThatIsNotUtf8IsSentAndTheDaemonGoesOn) {
  const std::string raw = "raw\377name";
  Job("printf 'r\\n' > \"$(printf 'raw\\377name')\"");
  // The live tree gets the same name after the job: a conflict, refused by a message naming it.
  ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "printf 'live\\n' > \"$(printf 'raw\\377name')\""}, {.cwd = project_}).status, 0);
  Result refused = Ctl({"commit", id_, "--all"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("raw\\377name"), std::string::npos) << refused.err;
  EXPECT_EQ(ReadWhole(project_ + "/" + raw), "live\n");
  Result after = Ctl({"--json", "changes", id_});
  EXPECT_EQ(after.status, 0) << after.err;
}
}  // namespace
}  // namespace sandboxd::it
