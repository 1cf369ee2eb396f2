// Issue 40, defect 2: jobs reached the host's unix sockets by path. A job connected to a root
// service's socket in /run (think /run/docker.sock: root for anyone in the docker group), to a
// socket its owner's own agent listens on in their home, and to any socket the host bound
// elsewhere. A job must reach no unix socket that a process outside its sandbox listens on,
// unless the owner names it (`--allow-socket PATH` on create or run); its own sockets work.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "attack_tools.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

/// A python program that connects to each path of its arguments and prints one line per path:
/// "reached PATH" or "refused PATH".
constexpr const char* kProbe =
    "import socket, sys\n"
    "for path in sys.argv[1:]:\n"
    "    c = socket.socket(socket.AF_UNIX)\n"
    "    try:\n"
    "        c.connect(path); print('reached', path)\n"
    "    except OSError:\n"
    "        print('refused', path)\n"
    "    c.close()\n";

/// A stream socket of `user` listening at `path` (made by the listener, mode 0666) until the
/// object goes; the listener accepts and drops connections.
class Listener {
 public:
  Listener(const std::string& user, const std::string& path) : path_(path) {
    const std::string program = "import os, socket\n"
                                "s = socket.socket(socket.AF_UNIX)\n"
                                "s.bind('" + path + "'); os.chmod('" + path + "', 0o666); s.listen(16)\n"
                                "while True: s.accept()[0].close()\n";
    pid_ = SpawnAs(user, {"/usr/bin/timeout", "300", "/usr/bin/python3", "-c", program});
    EXPECT_TRUE(WaitUntil([&] { return Reach(user) == "reached " + path + "\n"; }))
        << user << "'s own connection to " << path << " failed: the test would prove nothing";
  }
  ~Listener() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    World().RunAs("root", {"rm", "-f", path_});
  }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  /// Connects to the socket as `user` on the host.
  std::string Reach(const std::string& user) const { return World().RunAs(user, {"python3", "-c", kProbe, path_}).out; }

 private:
  std::string path_;
  pid_t pid_ = -1;
};

std::string HomeOf(const std::string& user) { return getpwnam(user.c_str())->pw_dir; }

class HostSocketsTest : public AliceSandboxTest {
 protected:
  void SetUp() override {
    AliceSandboxTest::SetUp();
    tag_ = "sbxtest-sock-" + std::to_string(getpid());
    // A root service's socket outside /run, where the host's other daemons keep theirs.
    World().RunAs("root", {"mkdir", "-p", "-m", "0755", "/var/lib/" + tag_});
  }
  void TearDown() override {
    World().RunAs("root", {"rm", "-rf", "/var/lib/" + tag_});
    AliceSandboxTest::TearDown();
  }

  /// What a job of the sandbox (with `options` before the sandbox id) reaches of `paths`.
  std::string JobReaches(const std::vector<std::string>& paths, const std::vector<std::string>& options = {}) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {id_, "--", "python3", "-c", kProbe});
    args.insert(args.end(), paths.begin(), paths.end());
    Result job = Ctl(args);
    EXPECT_EQ(job.status, 0) << job.err;
    return job.out;
  }

  static std::string Expect(const std::vector<std::pair<std::string, bool>>& paths) {
    std::string text;
    for (const auto& [path, reached] : paths) text += std::string(reached ? "reached " : "refused ") + path + "\n";
    return text;
  }

  std::string tag_;
};

TEST_F(HostSocketsTest, AJobReachesNoSocketAProcessOutsideItListensOn) {
  const std::string run = "/run/" + tag_;
  const std::string var_lib = "/var/lib/" + tag_ + "/service.sock";
  const std::string home = HomeOf(kAlice) + "/." + tag_ + "-agent";
  const std::string tmp = "/tmp/" + tag_;
  const std::string live = project_ + "/." + tag_ + "-live";
  Listener root_run("root", run), root_var("root", var_lib), alice_home(kAlice, home), alice_tmp(kAlice, tmp), alice_live(kAlice, live);
  const std::vector<std::string> all = {run, "/var" + run, var_lib, home, tmp, live};
  const std::string none = Expect({{run, false}, {"/var" + run, false}, {var_lib, false}, {home, false}, {tmp, false}, {live, false}});
  EXPECT_EQ(JobReaches(all), none) << "a job without the network";
  EXPECT_EQ(JobReaches(all, {"--network"}), none) << "a job with the network";
  // Its own processes still reach each other's sockets: in its /tmp and in its root.
  Result own = Ctl({"run", id_, "--", "python3", "-c",
                    "import socket\n"
                    "for path in ('/tmp/own.sock', 'own.sock'):\n"
                    "    s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(1)\n"
                    "    c = socket.socket(socket.AF_UNIX); c.connect(path); print('own', path)\n"});
  EXPECT_EQ(own.out, "own /tmp/own.sock\nown own.sock\n") << own.err;
}

TEST_F(HostSocketsTest, ASocketTheOwnerNamesIsReachedAndNoOther) {
  const std::string run = "/run/" + tag_;
  const std::string home = HomeOf(kAlice) + "/." + tag_ + "-agent";
  const std::string var_lib = "/var/lib/" + tag_ + "/service.sock";
  Listener root_run("root", run), alice_home(kAlice, home), root_var("root", var_lib);
  EXPECT_EQ(JobReaches({run, home, var_lib}, {"--allow-socket", run, "--allow-socket", home}),
            Expect({{run, true}, {home, true}, {var_lib, false}}));
  // Named on create, it is the sandbox's: every job reaches it, after a restart too.
  Result created = World().Sandboxctl(kAlice, {"create", "--allow-socket", home, World().MakeProject(kAlice)});
  ASSERT_EQ(created.status, 0) << created.err;
  const std::string second = Trim(created.out);
  auto reaches = [&] {
    Result job = Ctl({"run", second, "--", "python3", "-c", kProbe, home, run});
    return job.out;
  };
  EXPECT_EQ(reaches(), Expect({{home, true}, {run, false}}));
  Result shown = Ctl({"show", second});
  EXPECT_NE(shown.out.find(home), std::string::npos) << shown.out;
  World().KillDaemon();
  ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();
  EXPECT_EQ(reaches(), Expect({{home, true}, {run, false}})) << "after a restart";
  ASSERT_EQ(Ctl({"suspend", second}).status, 0);
  ASSERT_EQ(Ctl({"resume", second}).status, 0);
  EXPECT_EQ(reaches(), Expect({{home, true}, {run, false}})) << "after a suspend and a resume";
  EXPECT_EQ(Ctl({"destroy", second}).status, 0);
}

TEST_F(HostSocketsTest, WhatIsNotAReachableSocketIsRefusedByName) {
  struct Case {
    std::string path, says;
  };
  // A real socket where alice cannot reach: refused in the same words as one that is not there.
  World().RunAs("root", {"mkdir", "-p", "-m", "0700", "/var/lib/" + tag_ + "/private"});
  Listener unreachable("root", "/var/lib/" + tag_ + "/private/x.sock");
  for (const Case& c : std::vector<Case>{{"relative.sock", "is not a socket"},
                                         {"/etc/passwd", "is not a socket"},
                                         {"/nonexistent/" + tag_, "is not a socket"},
                                         {"/var/lib/" + tag_ + "/private/x.sock", "is not a socket"},
                                         {"/run/../etc/x.sock", "\"..\""}}) {
    SCOPED_TRACE(c.path);
    for (const std::string verb : {"run", "create"}) {
      std::vector<std::string> args = verb == "run" ? std::vector<std::string>{"run", "--allow-socket", c.path, id_, "--", "true"}
                                                    : std::vector<std::string>{"create", "--allow-socket", c.path, World().MakeProject(kAlice)};
      Result refused = Ctl(args);
      EXPECT_EQ(refused.status, 1) << verb << ": " << refused.out;
      EXPECT_NE(refused.err.find(c.path), std::string::npos) << verb << ": " << refused.err;
      EXPECT_NE(refused.err.find(c.says), std::string::npos) << verb << ": " << refused.err;
    }
  }
}

}  // namespace
}  // namespace sandboxd::it
