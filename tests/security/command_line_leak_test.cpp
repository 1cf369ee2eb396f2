// Attack 6 of the security review, third part: bwrap's command line, readable by every user in
// ps, named the owner's roots and hidden paths. What must hold: bwrap gets them through an fd.

#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>

#include "attack_tools.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

/// The command lines of `uid`'s processes named `comm`, as bob reads them from /proc.
std::vector<std::string> CommandLinesAsBob(uid_t uid, const std::string& comm) {
  Result r = World().RunAs(kBob, {"sh", "-c",
                                  "for d in /proc/[0-9]*; do [ \"$(stat -c %u $d 2>/dev/null)\" = " + std::to_string(uid) +
                                      " ] && [ \"$(cat $d/comm 2>/dev/null)\" = " + comm +
                                      " ] && tr '\\0' ' ' < $d/cmdline && echo; done; true"});
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

class CommandLineLeakTest : public AliceSandboxTest {};

TEST_F(CommandLineLeakTest, OtherUsersCannotReadRootsOrHiddenPathsInPs) {
  std::string hidden = project_.substr(0, project_.rfind('/')) + "/secret-notes";
  ASSERT_EQ(World().RunAs(kAlice, {"mkdir", "-p", hidden}).status, 0);
  pid_t job = StartSandboxctl(kAlice, {"run", "--hide", hidden, id_, "--", "sleep", "30"});
  std::vector<std::string> lines;
  // This job's bwrap is the one running "sleep 30" (another test run on the machine may have
  // jobs of alice's too: every one of them is checked for leaks).
  auto ours = [&] {
    return std::any_of(lines.begin(), lines.end(), [](const std::string& line) { return line.find("sleep 30") != std::string::npos; });
  };
  ASSERT_TRUE(WaitUntil([&] { return (lines = CommandLinesAsBob(UidOf(kAlice), "bwrap"), ours()); }, std::chrono::seconds(20)))
      << "bob sees no bwrap of alice's running the job's command: the test would prove nothing";
  for (const auto& line : lines) {
    EXPECT_EQ(line.find(project_), std::string::npos) << "bob reads alice's root in ps: " << line;
    EXPECT_EQ(line.find("secret-notes"), std::string::npos) << "bob reads alice's hidden path in ps: " << line;
  }
  kill(job, SIGINT);
  waitpid(job, nullptr, 0);
}

}  // namespace
}  // namespace sandboxd::it
