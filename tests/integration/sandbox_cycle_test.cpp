// The whole cycle as an unprivileged user: create → run → changes → diff → commit, with the
// live tree checked byte for byte before and after; job exit status, streams and isolation.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness.h"

namespace sandboxd::it {
namespace {

constexpr const char* kEdits =
    "echo beta >> a.txt && rm c.txt && echo new > new.txt && mkdir -p nd/deeper && echo x > nd/deeper/x"
    " && chmod 700 sub && ln -sf b.txt link && touch b.txt && chmod 755 sub/s.txt";

std::string CreateSandbox(const std::string& user, const std::string& dir) {
  Result r = World().Sandboxctl(user, {"create", dir});
  EXPECT_EQ(r.status, 0) << r.err;
  return Trim(r.out);
}

TEST(SandboxCycleTest, CreateRunChangesDiffCommit) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  // The expected result: the same edits made directly on a copy.
  std::string copy = project + "-expected";
  ASSERT_EQ(w.RunAs(kAlice, {"cp", "-a", project, copy}).status, 0);
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", kEdits}, {.cwd = copy}).status, 0);
  auto before = Snapshot(project);
  auto expected = Snapshot(copy);

  std::string id = CreateSandbox(kAlice, project);
  ASSERT_FALSE(id.empty());
  Result run = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", kEdits}, {.cwd = project});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(Snapshot(project), before) << "the live tree changed before the commit";

  Result changes = w.Sandboxctl(kAlice, {"changes", id});
  ASSERT_EQ(changes.status, 0) << changes.err;
  EXPECT_EQ(changes.out,
            "M a.txt\n"
            "D c.txt\n"
            "M link\n"
            "A nd\n"
            "A nd/deeper\n"
            "A nd/deeper/x\n"
            "A new.txt\n"
            "P sub\n"
            "P sub/s.txt\n");

  Result json = w.Sandboxctl(kAlice, {"--json", "changes", id});
  ASSERT_EQ(json.status, 0) << json.err;
  auto parsed = nlohmann::json::parse(json.out);
  ASSERT_EQ(parsed.size(), 9u);
  EXPECT_EQ(parsed[0]["path"], "a.txt");
  EXPECT_EQ(parsed[0]["kind"], "modified");
  EXPECT_EQ(parsed[0]["root"], 0);
  EXPECT_EQ(parsed[1]["kind"], "deleted");
  EXPECT_EQ(parsed[7]["kind"], "mode-changed");

  Result diff = w.Sandboxctl(kAlice, {"diff", id});
  ASSERT_EQ(diff.status, 0) << diff.err;
  for (const char* expected_text :
       {"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n alpha\n+beta\n",
        "diff --git a/c.txt b/c.txt\ndeleted file mode 100644\n", "-gamma\n",
        "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n",
        "diff --git a/sub b/sub\nold mode 040755\nnew mode 040700\n", "-a.txt\n", "+b.txt\n"})
    EXPECT_NE(diff.out.find(expected_text), std::string::npos) << "missing:\n" << expected_text << "\nin:\n" << diff.out;
  Result one = w.Sandboxctl(kAlice, {"diff", id, "new.txt"});
  EXPECT_EQ(one.out, "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n");
  EXPECT_EQ(Snapshot(project), before);

  Result commit = w.Sandboxctl(kAlice, {"commit", id, "--all"});
  ASSERT_EQ(commit.status, 0) << commit.err;
  auto after = Snapshot(project);
  EXPECT_EQ(after, expected) << "live:\n" << Describe(after) << "expected:\n" << Describe(expected);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", id}).out, "");
  // The sandbox stays usable after a commit.
  EXPECT_EQ(w.Sandboxctl(kAlice, {"run", id, "--", "cat", "new.txt"}, {.cwd = project}).out, "new\n");
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST(SandboxCycleTest, ExitStatusAndOutputPassThrough) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  std::string id = CreateSandbox(kAlice, project);
  Result r = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "kill -TERM $$"}).status, 128 + SIGTERM);
  Result input = w.Sandboxctl(kAlice, {"run", id, "--", "tr", "a-z", "A-Z"}, {.input = "hello\n"});
  EXPECT_EQ(input.out, "HELLO\n");
  // Outlives the daemon thread that handled the call (bwrap's parent-death signal is per thread).
  Result slow = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "sleep 1; echo done"});
  EXPECT_EQ(slow.status, 0) << slow.err;
  EXPECT_EQ(slow.out, "done\n");
  Result missing = w.Sandboxctl(kAlice, {"run", id, "--", "/no/such/program"});
  EXPECT_NE(missing.status, 0);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST(SandboxCycleTest, OutputStreamsWhileTheJobRuns) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  std::string id = CreateSandbox(kAlice, project);
  passwd* pw = getpwnam(kAlice);
  int to_job[2], from_job[2];
  ASSERT_EQ(pipe(to_job), 0);
  ASSERT_EQ(pipe(from_job), 0);
  std::string bus = "DBUS_SYSTEM_BUS_ADDRESS=" + w.bus_address();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(to_job[0], 0);
    dup2(from_job[1], 1);
    close(to_job[1]);
    close(from_job[0]);
    if (setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) _exit(125);
    char* env[] = {bus.data(), nullptr};
    execle(SANDBOXCTL_BIN, SANDBOXCTL_BIN, "run", id.c_str(), "--", "sh", "-c", "echo first; read line; echo second $line",
           static_cast<char*>(nullptr), env);
    _exit(127);
  }
  close(to_job[0]);
  close(from_job[1]);
  std::string seen;
  char buf[256];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (seen.find("first\n") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{from_job[0], POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      ssize_t n = read(from_job[0], buf, sizeof buf);
      if (n <= 0) break;
      seen.append(buf, static_cast<size_t>(n));
    }
  }
  ASSERT_EQ(seen, "first\n") << "the job's first line did not arrive while it was still running";
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), 0) << "sandboxctl ended before its job was given input";
  ASSERT_EQ(write(to_job[1], "go\n", 3), 3);
  close(to_job[1]);
  while (ssize_t n = read(from_job[0], buf, sizeof buf)) {
    if (n < 0) break;
    seen.append(buf, static_cast<size_t>(n));
  }
  close(from_job[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(seen, "first\nsecond go\n");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST(SandboxCycleTest, JobIsTheOwnerWithoutNetworkAndWithPrivateTmp) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  std::string id = CreateSandbox(kAlice, project);
  passwd* pw = getpwnam(kAlice);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"run", id, "--", "id", "-u"}).out, std::to_string(pw->pw_uid) + "\n");
  // /proc/net/dev lists the interfaces of the job's own network namespace: loopback only.
  Result net = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"});
  EXPECT_EQ(net.out, "lo\n");
  std::string marker = "/tmp/sandboxd-it-marker-" + id;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "echo x > " + marker + " && cat " + marker}).out, "x\n");
  EXPECT_NE(access(marker.c_str(), F_OK), 0) << "the job's /tmp is the host's";
  // The host outside the roots is read-only.
  Result write_home = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "echo x > $HOME/outside-root"});
  EXPECT_NE(write_home.status, 0);
  EXPECT_NE(access((std::string(pw->pw_dir) + "/outside-root").c_str(), F_OK), 0);
  // The daemon's pid namespace is not the job's.
  Result ps = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "ls /proc | grep -c '^[0-9]'"});
  EXPECT_LT(std::stoi(ps.out.empty() ? "999" : ps.out), 5) << ps.out;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST(SandboxCycleTest, DiscardAndDestroy) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  auto before = Snapshot(project);
  Result created = w.Sandboxctl(kAlice, {"create", "--name", "throwaway", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  ASSERT_EQ(w.Sandboxctl(kAlice, {"run", "throwaway", "--", "sh", "-c", "rm -rf sub; echo z > z"}, {.cwd = project}).status, 0);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", "throwaway"}).out, "D sub\nA z\n");
  EXPECT_EQ(w.Sandboxctl(kAlice, {"discard", "throwaway"}).status, 0);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", "throwaway"}).out, "");
  EXPECT_EQ(Snapshot(project), before);
  auto show = nlohmann::json::parse(w.Sandboxctl(kAlice, {"--json", "show", "throwaway"}).out);
  EXPECT_EQ(show["id"], id);
  EXPECT_EQ(show["name"], "throwaway");
  EXPECT_EQ(show["state"], "active");
  EXPECT_EQ(show["owner"], getpwnam(kAlice)->pw_uid);
  EXPECT_EQ(show["roots"], nlohmann::json::array({project}));
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", "throwaway"}).status, 0);
  auto list = nlohmann::json::parse(w.Sandboxctl(kAlice, {"--json", "list"}).out);
  for (const auto& entry : list) EXPECT_NE(entry["id"], id);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"show", id}).status, 1);
  EXPECT_EQ(Snapshot(project), before);
  // Its files go after the reply; they must be gone soon after.
  EXPECT_TRUE(WaitUntil([&] { return access((w.dir() + "/state/sandboxes/" + id).c_str(), F_OK) != 0; }));
  EXPECT_TRUE(WaitUntil([&] { return access((w.dir() + "/run/" + id).c_str(), F_OK) != 0; }));
}

TEST(SandboxCycleTest, ChangeSetSignalFollowsJobsAndDiscard) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  std::string id = CreateSandbox(kAlice, project);
  std::string log = w.dir() + "/monitor-" + id + ".log";
  passwd* pw = getpwnam(kAlice);
  std::string bus = "DBUS_SYSTEM_BUS_ADDRESS=" + w.bus_address();
  std::string path = "/org/sandboxd/Sandbox1/sandbox/" + id;
  pid_t monitor = fork();
  if (monitor == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    dup2(fd, 1);
    if (setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) _exit(125);
    char* env[] = {bus.data(), nullptr};
    execle("/usr/bin/gdbus", "gdbus", "monitor", "--system", "--dest", "org.sandboxd.Sandbox1", "--object-path", path.c_str(),
           static_cast<char*>(nullptr), env);
    _exit(127);
  }
  auto log_text = [&] {
    std::ifstream in(log);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  ASSERT_TRUE(WaitUntil([&] { return log_text().find("Monitoring signals") != std::string::npos; })) << log_text();
  ASSERT_EQ(w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "echo a > one; echo b > two"}).status, 0);
  EXPECT_TRUE(WaitUntil([&] { return log_text().find("ChangeSetChanged (uint32 2,)") != std::string::npos; })) << log_text();
  ASSERT_EQ(w.Sandboxctl(kAlice, {"discard", id}).status, 0);
  EXPECT_TRUE(WaitUntil([&] { return log_text().find("ChangeSetChanged (uint32 0,)") != std::string::npos; })) << log_text();
  kill(monitor, SIGTERM);
  waitpid(monitor, nullptr, 0);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
