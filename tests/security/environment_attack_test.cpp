// Attack 1 of the security review: a job's environment ran code on the host. Sandbox.Run's
// `env` was bwrap's own environment, and bwrap runs on the host as the owner before it builds
// the sandbox: a job wrote a shared library into its root and the owner ran a job with
// LD_PRELOAD pointing at it through the merged view; the library then wrote into the live tree
// with no commit. What must hold: the job's variables reach only the command.

#include <gtest/gtest.h>
#include <unistd.h>

#include "attack_tools.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

/// Writes "pwned" to $PWN_TARGET from wherever it is loaded.
constexpr const char* kPreload = R"(
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void pwn(void) {
  const char* target = getenv("PWN_TARGET");
  if (!target) return;
  int fd = open(target, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) { write(fd, "pwned\n", 6); close(fd); }
}
)";

class EnvironmentAttackTest : public AliceSandboxTest {};

TEST_F(EnvironmentAttackTest, LdPreloadFromTheSandboxNeverRunsOnTheHost) {
  std::string library = CompileC("pwn-preload.so", kPreload, /*shared=*/true);
  ASSERT_FALSE(library.empty());
  // Control: the library does its work when it is loaded on the host as alice.
  std::string control = project_ + "/control-pwned";
  Result host = World().RunAs(kAlice, {"env", "LD_PRELOAD=" + library, "PWN_TARGET=" + control, "true"});
  ASSERT_EQ(host.status, 0) << host.err;
  ASSERT_EQ(ReadWhole(control), "pwned\n") << "the probe library does not work; the test would prove nothing";
  unlink(control.c_str());

  // The attack: the job puts the library into its root; the owner preloads it from the merged
  // view, outside every job: there where bwrap starts (a namespace of the daemon's, where the
  // job's own view is mounted at that path; base/private_mounts.h).
  Job("cp '" + library + "' x.so");
  std::string merged_library = World().dir() + "/run/" + id_ + "/0/x.so";
  ASSERT_EQ(access((World().MergedView(id_) + "/x.so").c_str(), R_OK), 0) << merged_library;
  std::string target = project_ + "/pwned";
  Result run = Ctl({"run", "--env", "LD_PRELOAD=" + merged_library, "--env", "PWN_TARGET=" + target, id_, "--", "true"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(ReadWhole(target), "") << "code from the sandbox ran on the host and wrote into the live tree";
  EXPECT_EQ(access(target.c_str(), F_OK), -1);

  // Preloaded into the command itself (where it belongs), its writes stay in the sandbox.
  Result inside = Ctl({"run", "--env", "LD_PRELOAD=" + project_ + "/x.so", "--env", "PWN_TARGET=" + target, id_, "--", "true"});
  EXPECT_EQ(inside.status, 0) << inside.err;
  EXPECT_EQ(access(target.c_str(), F_OK), -1) << "the command's write reached the live tree";
  EXPECT_NE(Changes().find("A pwned\n"), std::string::npos) << Changes();
}

TEST_F(EnvironmentAttackTest, BadVariableNamesAreRefused) {
  for (const std::string& entry : std::vector<std::string>{"=x", "A=B=C"}) {
    // "A=B=C" is the variable A with value "B=C": fine. "=x" has no name.
    Result r = Ctl({"run", "--env", entry, id_, "--", "sh", "-c", "echo \"$A\""});
    if (entry == "=x") {
      EXPECT_EQ(r.status, 2) << r.out << r.err;
    } else {
      EXPECT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(r.out, "B=C\n");
    }
  }
  // Straight over D-Bus, where sandboxctl's own checks are not in the way.
  std::string path = "/org/sandboxd/Sandbox1/sandbox/" + id_;
  for (const std::string& env : std::vector<std::string>{"{'': 'x'}", "{'A=B': 'x'}"}) {
    Result r = World().Gdbus(kAlice, path, "org.sandboxd.Sandbox1.Sandbox.Run",
                             {"['true']", "''", "@a{ss} " + env, "@a{sh} {}", "@a{sv} {}", "uint64 0"});
    EXPECT_NE(r.status, 0) << env;
    EXPECT_NE(r.err.find("org.sandboxd.Sandbox1.Error.InvalidArgument"), std::string::npos) << env << ": " << r.err;
  }
}

}  // namespace
}  // namespace sandboxd::it
