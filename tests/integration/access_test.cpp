// Only the owner may see or touch a sandbox, by sandboxctl and by raw D-Bus calls; a commit
// polkit refuses changes nothing.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "conversation.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

constexpr const char* kAccessDenied = "org.freedesktop.DBus.Error.AccessDenied";

TEST(AccessTest, AnotherUserCanNeitherSeeNorTouchASandbox) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  Result created = w.Sandboxctl(kAlice, {"create", "--name", "private", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  ASSERT_EQ(w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "echo secret > s.txt"}).status, 0);
  auto before = Snapshot(project);
  std::string changes_before = w.Sandboxctl(kAlice, {"changes", id}).out;
  ASSERT_EQ(changes_before, "A s.txt\n");

  auto list = nlohmann::json::parse(w.Sandboxctl(kBob, {"--json", "list"}).out);
  for (const auto& entry : list) EXPECT_NE(entry["id"], id);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"show", id}, {"show", "private"}, {"changes", id}, {"diff", id}, {"run", id, "--", "true"},
           {"commit", id, "--all"}, {"discard", id}, {"destroy", id}}) {
    Result r = w.Sandboxctl(kBob, args);
    EXPECT_EQ(r.status, 1) << args[0] << ": " << r.out << r.err;
    EXPECT_TRUE(r.err.find(id) != std::string::npos || r.err.find("private") != std::string::npos)
        << "the message should name the sandbox: " << r.err;
  }

  Result lookup = w.Gdbus(kBob, "/org/sandboxd/Sandbox1", "org.sandboxd.Sandbox1.Manager.GetSandbox", {id});
  EXPECT_NE(lookup.err.find("org.sandboxd.Sandbox1.Error.NotFound"), std::string::npos) << lookup.err;
  std::string path = "/org/sandboxd/Sandbox1/sandbox/" + id;
  for (const auto& [method, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"GetChanges", {}},
           {"GetInfo", {}},
           {"Commit", {"@as []", "uint64 2"}},
           {"Approve", {"@a(suu) []", "uint64 2"}},
           {"Reject", {"@a(suu) []", "uint64 2"}},
           {"Discard", {}},
           {"Destroy", {}},
           {"Run", {"['touch', 'x']", "''", "@a{ss} {}", "@a{sh} {}", "@a{sv} {}", "uint64 0"}}}) {
    Result r = w.Gdbus(kBob, path, "org.sandboxd.Sandbox1.Sandbox." + method, args);
    EXPECT_NE(r.status, 0) << method;
    EXPECT_NE(r.err.find(kAccessDenied), std::string::npos) << method << ": " << r.err;
  }
  EXPECT_EQ(Snapshot(project), before);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", id}).out, changes_before) << "bob's attempts changed alice's sandbox";
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST(AccessTest, CommitDeniedByPolkitChangesNothing) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kBob);
  std::string id = Trim(w.Sandboxctl(kBob, {"create", project}).out);
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(w.Sandboxctl(kBob, {"run", id, "--", "sh", "-c", "echo more >> a.txt; rm b.txt"}).status, 0);
  auto before = Snapshot(project);
  Result commit = w.Sandboxctl(kBob, {"commit", id, "--all"});
  EXPECT_EQ(commit.status, 1);
  EXPECT_NE(commit.err.find("not authorized"), std::string::npos) << commit.err;
  EXPECT_NE(commit.err.find(id), std::string::npos) << commit.err;
  Result raw = w.Gdbus(kBob, "/org/sandboxd/Sandbox1/sandbox/" + id, "org.sandboxd.Sandbox1.Sandbox.Commit", {"@as []", "uint64 3"});
  EXPECT_NE(raw.err.find(kAccessDenied), std::string::npos) << raw.err;
  // Nothing approved, nothing taken: polkit is not asked, so a commit of nothing is no refusal
  // (and never a password prompt).
  Result nothing = w.Sandboxctl(kBob, {"commit", id});
  EXPECT_EQ(nothing.status, 0) << nothing.err;
  EXPECT_EQ(nothing.err.find("not authorized"), std::string::npos) << nothing.err;
  EXPECT_EQ(Snapshot(project), before);
  EXPECT_EQ(w.Sandboxctl(kBob, {"changes", id}).out, "M a.txt\nD b.txt\n");
  EXPECT_EQ(w.Sandboxctl(kBob, {"destroy", id}).status, 0);
}

TEST(AccessTest, RootMayActOnAnySandboxButWritesAsTheOwner) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kBob);
  std::string id = Trim(w.Sandboxctl(kBob, {"create", project}).out);
  ASSERT_EQ(w.Sandboxctl(kBob, {"run", id, "--", "sh", "-c", "echo by-bob > made.txt"}).status, 0);
  // Root is authorized without polkit (as systemd's daemons do), yet the file is bob's.
  Result commit = w.Sandboxctl("root", {"commit", id, "--all"});
  ASSERT_EQ(commit.status, 0) << commit.err;
  auto after = Snapshot(project);
  ASSERT_TRUE(after.count("/made.txt"));
  EXPECT_NE(after["/made.txt"].find("uid=" + std::to_string(getpwnam(kBob)->pw_uid)), std::string::npos) << after["/made.txt"];
  EXPECT_EQ(w.Sandboxctl(kBob, {"destroy", id}).status, 0);
}

/// polkit's agent helper (polkit-agent-helper-1) is setuid, so it ignores DBUS_SYSTEM_BUS_ADDRESS
/// and answers polkitd through the system bus at its standard path: while this lives, that path
/// leads to the test's bus. Where a system bus of the machine's is there already, it cannot.
class StandardBusPath {
 public:
  StandardBusPath() {
    if (access(kPath, F_OK) == 0) return;
    std::string address = World().bus_address();
    std::string socket = address.substr(address.find('=') + 1);
    mkdir("/run/dbus", 0755);
    made_ = symlink(socket.c_str(), kPath) == 0;
  }
  ~StandardBusPath() {
    if (made_) unlink(kPath);
  }
  bool made() const { return made_; }

 private:
  static constexpr const char* kPath = "/run/dbus/system_bus_socket";
  bool made_ = false;
};

// No login session here (no logind), as over a plain ssh or in a container: polkit can reach a
// person only through an agent registered for sandboxctl's own process. Dave, whom no rule
// lets commit, is asked for his password on his terminal (polkit's auth_self default), types
// it, and the commit goes through; before, he heard only "authentication is required".
TEST(AccessTest, ThePasswordPromptAppearsOnTheTerminalWithoutALoginSession) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  StandardBusPath standard;
  if (!standard.made()) GTEST_SKIP() << "a system bus of this machine's listens at /run/dbus/system_bus_socket";
  const std::string dave = "sbxtest-dave";
  ASSERT_TRUE(EnsureUser(dave));
  ASSERT_EQ(w.RunAs("root", {"sh", "-c", "echo 'sbxtest-dave:Dave-Pw-4321' | chpasswd"}).status, 0);
  std::string project = w.MakeProject(dave);
  Result created = w.Sandboxctl(dave, {"create", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  ASSERT_EQ(w.Sandboxctl(dave, {"run", id, "sh", "-c", "echo asked > asked.txt"}).status, 0);

  Conversation commit(dave, project, {"commit", id, "--all"});
  ASSERT_TRUE(commit.WaitFor("Password: ")) << "no password prompt on the terminal:\n" << commit.screen();
  // Typed once the agent reads it: it turns echo off with TCSAFLUSH after the prompt, which
  // throws away what was typed before (as a person would find, typing ahead).
  ASSERT_TRUE(WaitUntil([&] { return (commit.Modes().c_lflag & ECHO) == 0; })) << "the agent never turned echo off";
  commit.Type("Dave-Pw-4321\n");
  EXPECT_EQ(commit.Finish(), 0) << commit.screen();
  EXPECT_EQ(ReadWhole(project + "/asked.txt"), "asked\n") << commit.screen();
  EXPECT_EQ(w.Sandboxctl(dave, {"destroy", id}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
