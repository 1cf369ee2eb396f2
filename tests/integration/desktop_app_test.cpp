// The desktop app path of docs/desktop-app.md: its example, docs/examples/follow-sandbox.sh,
// run exactly as a user would run it (as alice, over a project of hers, with gdbus on the test
// bus), must show the job's captured output, the change-set signal, the diff, and commit the
// job's change into the live project; and the page must quote the script as it is.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "harness.h"

namespace sandboxd::it {
namespace {

constexpr const char* kScript = SANDBOXD_SOURCE_DIR "/docs/examples/follow-sandbox.sh";
constexpr const char* kPage = SANDBOXD_SOURCE_DIR "/docs/desktop-app.md";

TEST(DesktopAppTest, TheExampleFollowsAJobAndItsChangeSetAndCommits) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  auto before = SandboxIds(kAlice);

  Result r = w.RunAs(kAlice, {"sh", kScript, project});
  // Whatever happened, leave no sandbox of the script's behind for the next test.
  for (const auto& id : SandboxIds(kAlice))
    if (!before.count(id)) w.Sandboxctl(kAlice, {"destroy", id});
  ASSERT_EQ(r.status, 0) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
  EXPECT_EQ(r.err, "");

  // The job's captured output, read back with Job.ReadOutput: its first line names the root
  // it ran in, `ls` shows the file it made (in the sandbox), and its last line came after Finished.
  EXPECT_TRUE(Contains(r.out, "  | building in " + project + "\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "  | follow-sandbox.txt\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "  | done\n")) << r.out;
  // The job's signals: its output announced while it ran (the job sleeps a second between
  // outputs, ample time for the monitor to be listening), and its end.
  EXPECT_TRUE(Contains(r.out, "signal: OutputAvailable, ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "signal: Finished (0, 'exited')\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "job finished: exit status 0 (exited)\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "listed:\n  {\"kind\":\"added\",\"new_mode\":420,\"new_size\":14,\"new_type\":\"file\",\"path\":\"follow-sandbox.txt\","
                              "\"review\":\"pending\",\"root\":0,\"type\":\"file\"}\n")) << r.out;
  // The change set: the signal after the job, after the approval, and empty after the commit,
  // in that order.
  size_t after_job = r.out.find("signal: ChangeSetChanged, 1 change(s)\nchanges:\n  added follow-sandbox.txt\n");
  // The live feed named the file while the job ran (read by the script on its way to the
  // change-set signal).
  EXPECT_TRUE(Contains(r.out, "job finished: exit status 0 (exited)\nsignal: ChangesSeen\n  added follow-sandbox.txt\n"
                              "signal: ChangeSetChanged, 1 change(s)\n")) << r.out;
  size_t after_approval = r.out.find("approved: 1\nsignal: ChangeSetChanged, 1 change(s)\n");
  size_t after_commit = r.out.find("committed: 1\nsignal: ChangeSetChanged, 0 change(s)\n");
  EXPECT_NE(after_job, std::string::npos) << r.out;
  EXPECT_NE(after_approval, std::string::npos) << r.out;
  EXPECT_NE(after_commit, std::string::npos) << r.out;
  EXPECT_TRUE(after_job < after_approval && after_approval < after_commit) << r.out;
  // The diff, streamed through the file descriptor gdbus passed.
  EXPECT_TRUE(Contains(r.out,
                       "diff:\n"
                       "  diff --git a/follow-sandbox.txt b/follow-sandbox.txt\n"
                       "  new file mode 100644\n"
                       "  --- /dev/null\n"
                       "  +++ b/follow-sandbox.txt\n"
                       "  @@ -0,0 +1 @@\n"
                       "  +made by a job\n"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "destroyed: /org/sandboxd/Sandbox1/sandbox/")) << r.out;

  // The commit reached the live project, as alice's file; the sandbox is gone.
  EXPECT_EQ(ReadWhole(project + "/follow-sandbox.txt"), "made by a job\n");
  EXPECT_EQ(SandboxIds(kAlice), before);
}

TEST(DesktopAppTest, ThePageQuotesTheScriptVerbatim) {
  // Every line of the page's sh blocks is a line of the script (the example the test above
  // runs), so what a reader copies is what was tested. ```text blocks show output and are free.
  std::string page = ReadWhole(kPage);
  std::string script = ReadWhole(kScript);
  ASSERT_FALSE(page.empty()) << kPage;
  ASSERT_FALSE(script.empty()) << kScript;
  std::set<std::string> script_lines;
  for (const auto& line : Lines(script)) script_lines.insert(line);

  bool in_sh = false;
  int quoted = 0, gdbus = 0;
  for (const auto& line : Lines(page)) {
    if (line.rfind("```", 0) == 0) {
      in_sh = !in_sh && line == "```sh";
      continue;
    }
    if (!in_sh || line.empty()) continue;
    ++quoted;
    if (Contains(line, "gdbus ")) ++gdbus;
    EXPECT_TRUE(script_lines.count(line)) << "docs/desktop-app.md quotes a line the script does not have:\n" << line;
  }
  // The page quotes the calls it explains: one gdbus line at least per method it walks through
  // (CreateSandbox, monitor, Run, GetStatus, ReadOutput, GetChanges, Diff, Approve, Commit, Destroy).
  EXPECT_GE(gdbus, 10) << "the page quotes fewer gdbus calls than it explains";
  EXPECT_GE(quoted, 25);
  // And every method the script calls is one the page names.
  for (const auto& line : Lines(script)) {
    size_t at = line.find("--method org.sandboxd.Sandbox1.");
    if (at == std::string::npos) continue;
    std::string method = line.substr(at + 9);
    method = method.substr(0, method.find(' '));
    EXPECT_TRUE(Contains(page, method)) << "the page never shows " << method;
  }
}

// The package installs the page and the very script tested above where a distribution keeps
// examples (meson's own record of what `meson install` puts where).
TEST(DesktopAppTest, TheScriptAndThePageAreInstalledWithThePackage) {
  auto installed = nlohmann::json::parse(ReadWhole(std::string(SANDBOXD_BUILD_DIR) + "/meson-info/intro-installed.json"));
  const std::string source = SANDBOXD_SOURCE_DIR;
  ASSERT_TRUE(installed.contains(source + "/docs/examples/follow-sandbox.sh")) << installed.dump(2);
  EXPECT_EQ(installed[source + "/docs/examples/follow-sandbox.sh"].get<std::string>().substr(
                installed[source + "/docs/examples/follow-sandbox.sh"].get<std::string>().find("/share/")),
            "/share/doc/sandboxd/examples/follow-sandbox.sh");
  ASSERT_TRUE(installed.contains(source + "/docs/desktop-app.md")) << installed.dump(2);
}

}  // namespace
}  // namespace sandboxd::it
