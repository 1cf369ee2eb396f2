// Every bad input gets its named D-Bus error and, through sandboxctl, exit status 1 with a
// message naming the path or sandbox; the daemon survives them all.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include "harness.h"

namespace sandboxd::it {
namespace {

constexpr const char* kManager = "/org/sandboxd/Sandbox1";
constexpr const char* kCreate = "org.sandboxd.Sandbox1.Manager.CreateSandbox";

Result RawCreate(const std::string& user, const std::string& root, const std::string& flags = "uint64 0") {
  return World().Gdbus(user, kManager, kCreate, {"['" + root + "']", "@a{sv} {}", flags});
}

void ExpectRefused(const std::string& dir, const std::string& error, const std::string& fragment) {
  Harness& w = World();
  Result raw = RawCreate(kAlice, dir);
  EXPECT_NE(raw.err.find("org.sandboxd.Sandbox1.Error." + error), std::string::npos) << dir << ": " << raw.err;
  Result ctl = w.Sandboxctl(kAlice, {"create", dir});
  EXPECT_EQ(ctl.status, 1) << dir << ": " << ctl.out << ctl.err;
  EXPECT_NE(ctl.err.find(fragment), std::string::npos) << dir << ": " << ctl.err;
  EXPECT_EQ(std::count(ctl.err.begin(), ctl.err.end(), '\n'), 1) << "one line: " << ctl.err;
}

TEST(BadInputTest, RootsThatCannotBeSandboxed) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  Result relative = RawCreate(kAlice, "proj");
  EXPECT_NE(relative.err.find("org.sandboxd.Sandbox1.Error.InvalidPath"), std::string::npos) << relative.err;
  EXPECT_NE(relative.err.find("proj"), std::string::npos) << relative.err;
  ExpectRefused(project + "/missing", "InvalidPath", project + "/missing");
  ExpectRefused(project + "/a.txt", "InvalidPath", project + "/a.txt");
  ExpectRefused("/proc", "InvalidPath", "/proc");
  ExpectRefused("/", "InvalidPath", "/");
  ExpectRefused("/usr/share", "InvalidPath", "/usr/share");  // exists, but alice cannot write it
  ExpectRefused(w.dir() + "/state", "InvalidPath", w.dir() + "/state");
}

TEST(BadInputTest, OverlappingSandboxes) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", project + "/sub"}).out);
  ASSERT_FALSE(id.empty());
  ExpectRefused(project + "/sub", "Overlap", id);  // the same directory
  ExpectRefused(project, "Overlap", id);           // its parent
  ASSERT_EQ(w.RunAs(kAlice, {"mkdir", project + "/sub/inner"}).status, 0);
  ExpectRefused(project + "/sub/inner", "Overlap", id);  // a child
  // Bob's sandbox over his own directory is not an overlap with alice's.
  std::string bobs = w.MakeProject(kBob);
  std::string bob_id = Trim(w.Sandboxctl(kBob, {"create", bobs}).out);
  EXPECT_FALSE(bob_id.empty());
  EXPECT_EQ(w.Sandboxctl(kBob, {"destroy", bob_id}).status, 0);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST(BadInputTest, UnknownSandboxEmptyCommandAndUnknownFlags) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  for (const auto& verb : {"show", "changes", "diff", "commit", "discard", "destroy"}) {
    Result r = w.Sandboxctl(kAlice, {verb, "no-such-sandbox"});
    EXPECT_EQ(r.status, 1) << verb;
    EXPECT_NE(r.err.find("no-such-sandbox"), std::string::npos) << verb << ": " << r.err;
  }
  Result lookup = w.Gdbus(kAlice, kManager, "org.sandboxd.Sandbox1.Manager.GetSandbox", {"no-such-sandbox"});
  EXPECT_NE(lookup.err.find("org.sandboxd.Sandbox1.Error.NotFound"), std::string::npos) << lookup.err;

  std::string project = w.MakeProject(kAlice);
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", project}).out);
  ASSERT_FALSE(id.empty());
  Result empty = w.Sandboxctl(kAlice, {"run", id, "--"});
  EXPECT_EQ(empty.status, 1) << empty.err;
  EXPECT_NE(empty.err.find(id), std::string::npos) << empty.err;
  std::string path = "/org/sandboxd/Sandbox1/sandbox/" + id;
  Result raw_empty = w.Gdbus(kAlice, path, "org.sandboxd.Sandbox1.Sandbox.Run",
                             {"@as []", "''", "@a{ss} {}", "@a{sh} {}", "@a{sv} {}", "uint64 0"});
  EXPECT_NE(raw_empty.err.find("org.sandboxd.Sandbox1.Error.InvalidArgument"), std::string::npos) << raw_empty.err;
  Result outside = w.Sandboxctl(kAlice, {"run", "--cwd", "/etc", id, "--", "true"});
  EXPECT_EQ(outside.status, 1);
  EXPECT_NE(outside.err.find("/etc"), std::string::npos) << outside.err;
  Result flags = RawCreate(kAlice, project + "/sub", "uint64 4");
  EXPECT_NE(flags.err.find("org.sandboxd.Sandbox1.Error.InvalidArgument"), std::string::npos) << flags.err;
  Result commit_flags = w.Gdbus(kAlice, path, "org.sandboxd.Sandbox1.Sandbox.Commit", {"@as []", "uint64 8"});
  EXPECT_NE(commit_flags.err.find("org.sandboxd.Sandbox1.Error.InvalidArgument"), std::string::npos) << commit_flags.err;
  Result unknown_option = w.Gdbus(kAlice, kManager, kCreate, {"['" + project + "/sub']", "{'colour': <'blue'>}", "uint64 0"});
  EXPECT_NE(unknown_option.err.find("colour"), std::string::npos) << unknown_option.err;
  Result bad_name = w.Sandboxctl(kAlice, {"create", "--name", "bad/name", project + "/sub"});
  EXPECT_EQ(bad_name.status, 1);
  EXPECT_NE(bad_name.err.find("bad/name"), std::string::npos) << bad_name.err;
  Result bad_selector = w.Sandboxctl(kAlice, {"diff", id, "not-a-change.txt"});
  EXPECT_EQ(bad_selector.status, 1);
  EXPECT_NE(bad_selector.err.find("not-a-change.txt"), std::string::npos) << bad_selector.err;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"frobnicate"}).status, 2);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// sandboxd's own command line: bad usage is 2 whatever the mistake, with one line naming it;
// --version is 0. (Nothing starts: the mistakes are caught before the bus is touched.)
TEST(BadInputTest, SandboxdRefusesBadUsageWithStatusTwo) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--bogus"}, {"--idle-exit", "soon"}, {"--log-level", "loud"}}) {
    std::vector<std::string> argv = {SANDBOXD_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    Result refused = w.RunAs("root", argv);
    EXPECT_EQ(refused.status, 2) << args.front() << ": " << refused.err;
    EXPECT_NE(refused.err.find(args.back() == "--bogus" ? "--bogus" : args.back()), std::string::npos) << refused.err;
  }
  EXPECT_EQ(w.RunAs("root", {SANDBOXD_BIN, "--version"}).status, 0);
}

// A word where a verb goes that is none is named: "unknown verb", with the word as typed (no
// byte of it steering the terminal), status 2; not "a subcommand is required".
TEST(BadInputTest, AnUnknownVerbIsNamed) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  for (const std::vector<std::string>& args : {std::vector<std::string>{"frobnicate"}, {"--json", "frobnicate", "x"}, {"\x1b[31mfrobnicate"}}) {
    Result refused = w.Sandboxctl(kAlice, args);
    EXPECT_EQ(refused.status, 2) << refused.err;
    EXPECT_NE(refused.err.find("unknown verb "), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("frobnicate"), std::string::npos) << refused.err;
    EXPECT_EQ(refused.err.find('\x1b'), std::string::npos) << refused.err;
  }
  // A known verb with a mistake after it keeps CLI11's own words for that mistake.
  Result extra = w.Sandboxctl(kAlice, {"list", "extra"});
  EXPECT_EQ(extra.status, 2);
  EXPECT_EQ(extra.err.find("unknown verb"), std::string::npos) << extra.err;
  EXPECT_NE(extra.err.find("extra"), std::string::npos) << extra.err;
}

// A job id that names no job: one sentence naming it, status 1 (not the bus's "unknown object").
TEST(BadInputTest, AJobThatIsNoneIsNamed) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  for (const char* verb : {"logs", "cancel"}) {
    Result refused = w.Sandboxctl(kAlice, {verb, "0123456789abcdef"});
    EXPECT_EQ(refused.status, 1) << verb << ": " << refused.err;
    EXPECT_NE(refused.err.find("no job 0123456789abcdef is known"), std::string::npos) << refused.err;
    EXPECT_EQ(refused.err.find("UnknownObject"), std::string::npos) << refused.err;
  }
}

// An error about a sandbox the user named by its name says that name, as typed, beside the id
// the daemon's words use.
TEST(BadInputTest, ErrorsNameTheSandboxAsTyped) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  Result made = w.Sandboxctl(kAlice, {"create", "--name", "typed-name", project});
  ASSERT_EQ(made.status, 0) << made.err;
  std::string id = made.out.substr(0, made.out.find('\n'));
  ASSERT_EQ(w.Sandboxctl(kAlice, {"suspend", "typed-name"}).status, 0);
  Result refused = w.Sandboxctl(kAlice, {"changes", "typed-name"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("sandbox typed-name (" + id + ") is suspended"), std::string::npos) << refused.err;
  Result by_id = w.Sandboxctl(kAlice, {"changes", id});
  EXPECT_NE(by_id.err.find("sandbox " + id + " is suspended"), std::string::npos) << by_id.err;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", "typed-name"}).status, 0);
}

TEST(BadInputTest, DaemonSurvivedEverything) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  EXPECT_EQ(kill(w.daemon_pid(), 0), 0) << w.DaemonLog();
  Result list = w.Sandboxctl(kAlice, {"list"});
  EXPECT_EQ(list.status, 0) << list.err;
}

}  // namespace
}  // namespace sandboxd::it
