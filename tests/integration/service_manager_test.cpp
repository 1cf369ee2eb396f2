// sandboxd under a service manager, with the real parts: the sd_notify protocol (READY=1,
// STATUS=, WATCHDOG=1) read from a notify socket as systemd reads it; D-Bus activation by the
// test bus's own dbus-daemon from an activation file, and --idle-exit ending the daemon until
// the next call starts it again; and a real systemd-journald (in a mount namespace of the
// test's own) receiving each sandbox's lines with SANDBOX_ID=, SANDBOX_OWNER_UID= and JOB_ID=.

#include <gtest/gtest.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "harness.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;

/// The receiving end of NOTIFY_SOCKET, as systemd holds it.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
    unlink(path.c_str());
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~NotifySocket() {
    close(fd_);
    unlink(path_.c_str());
  }
  bool bound() const { return bound_; }
  /// Messages until `done` says enough or `timeout` passes; all of them, in order.
  std::vector<std::string> ReadUntil(const std::function<bool(const std::vector<std::string>&)>& done,
                                     std::chrono::milliseconds timeout) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (!done(messages_) && std::chrono::steady_clock::now() < end) {
      pollfd poller{fd_, POLLIN, 0};
      if (poll(&poller, 1, 100) <= 0) continue;
      char buffer[4096];
      ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n > 0) messages_.emplace_back(buffer, n);
    }
    return messages_;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
  std::vector<std::string> messages_;
};

size_t CountContaining(const std::vector<std::string>& messages, const std::string& needle) {
  size_t count = 0;
  for (const auto& message : messages) count += message.find(needle) != std::string::npos;
  return count;
}

TEST(ServiceManagerTest, NotifiesReadinessStatusAndWatchdogPings) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  NotifySocket notify(w.dir() + "/notify");
  ASSERT_TRUE(notify.bound());
  w.StopDaemon();
  ASSERT_TRUE(w.StartDaemon({}, {"NOTIFY_SOCKET=" + w.dir() + "/notify", "WATCHDOG_USEC=600000"})) << w.DaemonLog();
  auto messages = notify.ReadUntil([](const auto& m) { return CountContaining(m, "WATCHDOG=1") >= 3; }, 5s);
  EXPECT_GE(CountContaining(messages, "READY=1"), 1u);
  EXPECT_GE(CountContaining(messages, "WATCHDOG=1"), 3u) << "pinged every 300 ms, half the watchdog period";
  EXPECT_GE(CountContaining(messages, "STATUS="), 1u);
  EXPECT_NE(w.DaemonLog().find("pinging the systemd watchdog every 300 ms"), std::string::npos);

  // STATUS= follows what runs.
  std::string id = Trim(Ctl({"create", w.MakeProject(kAlice)}).out);
  ASSERT_FALSE(id.empty());
  pid_t job = StartSandboxctl(kAlice, {"run", id, "--", "sleep", "30"});
  messages = notify.ReadUntil([](const auto& m) { return CountContaining(m, "STATUS=1 sandbox, 1 job running") > 0; }, 10s);
  EXPECT_GE(CountContaining(messages, "STATUS=1 sandbox, 1 job running"), 1u) << "no STATUS= line told of the running job";
  kill(job, SIGINT);
  waitpid(job, nullptr, 0);
  messages = notify.ReadUntil([](const auto& m) { return CountContaining(m, "STATUS=1 sandbox, no job running") > 0; }, 10s);
  EXPECT_GE(CountContaining(messages, "STATUS=1 sandbox, no job running"), 1u);
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);

  w.StopDaemon();
  EXPECT_GE(CountContaining(notify.ReadUntil([](const auto& m) { return CountContaining(m, "STOPPING=1") > 0; }, 5s), "STOPPING=1"), 1u);
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
}

/// An activation file starting the test daemon (with `extra` options) from dbus-daemon.
void WriteActivationFile(const std::string& extra) {
  Harness& w = World();
  std::string command;
  for (const auto& word : w.DaemonEnvironment()) command += word + " ";
  for (const auto& word : w.DaemonCommand()) command += word + " ";
  // dbus-daemon runs Exec= itself, without a shell: the shell here only sends the daemon's
  // output where the test's other daemons write theirs.
  WriteWhole(w.ServicesDir() + "/org.sandboxd.Sandbox1.service",
             "[D-BUS Service]\nName=org.sandboxd.Sandbox1\nExec=/bin/sh -c 'exec env " + command + extra + " >>" + w.dir() +
                 "/sandboxd.log 2>&1'\nUser=root\n");
  w.ReloadBusConfig();
}

size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

TEST(ServiceManagerTest, ACallStartsTheDaemonAndIdleExitEndsItWithEverySandboxKept) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  std::string id = Trim(Ctl({"create", "--name", "activated", project}).out);
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "echo changed > a.txt"}).status, 0);
  w.StopDaemon();
  ASSERT_FALSE(w.NameOwned("org.sandboxd.Sandbox1"));
  WriteActivationFile("--idle-exit 2");
  const std::string exit_line = "idle for 2 s: exiting";
  size_t exits_before = Occurrences(w.DaemonLog(), exit_line);

  // The first call starts it and is answered, the sandbox and its change intact.
  Result list = Ctl({"list"});
  ASSERT_EQ(list.status, 0) << list.err << w.DaemonLog();
  EXPECT_NE(list.out.find(id), std::string::npos) << list.out;
  EXPECT_EQ(Ctl({"changes", "activated"}).out, "M a.txt\n");

  // Idle for 2 s, it goes, and its name with it.
  EXPECT_TRUE(WaitUntil([&] { return !w.NameOwned("org.sandboxd.Sandbox1"); }, 15s)) << "still running after 15 s idle";
  EXPECT_EQ(Occurrences(w.DaemonLog(), exit_line), exits_before + 1) << w.DaemonLog();

  // The next call starts it again; a job longer than the idle time keeps it.
  Result run = Ctl({"run", "activated", "--", "sh", "-c", "sleep 4; echo again >> a.txt"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(Occurrences(w.DaemonLog(), exit_line), exits_before + 1) << "it left while a job ran";
  Result diff = Ctl({"diff", "activated"});
  EXPECT_NE(diff.out.find("+again"), std::string::npos) << diff.out;
  EXPECT_TRUE(WaitUntil([&] { return !w.NameOwned("org.sandboxd.Sandbox1"); }, 15s));

  std::remove((w.ServicesDir() + "/org.sandboxd.Sandbox1.service").c_str());
  w.ReloadBusConfig();
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

TEST(ServiceManagerTest, TheJournalHasEachSandboxsStoryByItsFields) {
  SANDBOXD_REQUIRE_WORLD();
  if (access("/lib/systemd/systemd-journald", X_OK) != 0) GTEST_SKIP() << "systemd-journald is not installed";
  Harness& w = World();
  std::string journal = w.dir() + "/journal";
  std::filesystem::create_directories(journal);
  w.StopDaemon();
  // journald and sandboxd share a mount namespace whose /run is the test's own: journald's
  // sockets are at fixed paths there, and the host's /run stays untouched. The daemon leaves
  // after 3 idle seconds; then journald goes.
  std::string daemon;
  for (const auto& word : w.DaemonEnvironment()) daemon += word + " ";
  for (const auto& word : w.DaemonCommand()) daemon += word + " ";
  std::string script = "mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal /run/log/journal && mount --bind " + journal +
                       " /run/log/journal && { [ ! -d /var/log/journal ] || mount --bind " + journal +
                       " /var/log/journal; } && /lib/systemd/systemd-journald & journald=$!; "
                       "for i in $(seq 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done; "
                       "env JOURNAL_STREAM=0:0 " + daemon + " --idle-exit 3 >>" + w.dir() + "/sandboxd.log 2>&1; "
                       "kill $journald; wait $journald";
  pid_t world = fork();
  if (world == 0) {
    execlp("unshare", "unshare", "--mount", "--propagation", "private", "sh", "-c", script.c_str(), nullptr);
    _exit(127);
  }
  ASSERT_TRUE(WaitUntil([&] { return w.NameOwned("org.sandboxd.Sandbox1"); }, 15s)) << w.DaemonLog();

  std::string id = Trim(Ctl({"create", w.MakeProject(kAlice)}).out);
  std::string other = Trim(Ctl({"create", w.MakeProject(kAlice)}).out);
  ASSERT_FALSE(id.empty() || other.empty());
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "echo new > new.txt"}).status, 0);
  ASSERT_EQ(Ctl({"commit", id, "--all"}).status, 0);
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
  EXPECT_EQ(Ctl({"destroy", other}).status, 0);
  int status = 0;
  ASSERT_EQ(waitpid(world, &status, 0), world);

  Result story = w.RunAs("root", {"journalctl", "-D", journal, "--no-pager", "-o", "json", "SANDBOX_ID=" + id});
  ASSERT_EQ(story.status, 0) << story.err;
  std::string owner = std::to_string(getpwnam(kAlice)->pw_uid);
  std::vector<std::string> messages;
  std::string job_id;
  std::istringstream lines(story.out);
  for (std::string line; std::getline(lines, line);) {
    auto entry = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(entry.is_discarded()) << line;
    std::string message = entry.value("MESSAGE", "");
    messages.push_back(message);
    EXPECT_EQ(entry.value("SANDBOX_OWNER_UID", ""), owner) << message;
    EXPECT_EQ(entry.value("SYSLOG_IDENTIFIER", ""), "sandboxd") << message;
    EXPECT_EQ(message.find(other), std::string::npos) << "another sandbox's line: " << message;
    if (message.find("job ") == 0) {
      EXPECT_FALSE(entry.value("JOB_ID", "").empty()) << message;
      if (job_id.empty()) job_id = entry.value("JOB_ID", "");
      EXPECT_NE(message.find(entry.value("JOB_ID", "")), std::string::npos) << message;
    }
  }
  std::string all;
  for (const auto& message : messages) all += message + "\n";
  for (const char* step : {"created by uid", "started in sandbox", "ended: exited 0", "committed 1 changes", "destroyed"})
    EXPECT_NE(all.find(step), std::string::npos) << "no line saying '" << step << "' in\n" << all;
  Result by_job = w.RunAs("root", {"journalctl", "-D", journal, "--no-pager", "-o", "cat", "JOB_ID=" + job_id});
  EXPECT_EQ(Occurrences(by_job.out, "\n"), 2u) << "a job's lines are its start and its end:\n" << by_job.out;

  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
}

/// `systemd-analyze verify` on a unit as meson makes it, pointing at the built daemon (an
/// uninstalled ExecStart= would be all it finds otherwise): the system unit as root, the user
/// unit (`--user`) as alice. It warns on unknown keys and bad values without failing, so any
/// output counts as a finding.
Result VerifyUnit(const std::string& source, bool user_unit, const std::string& extra_line) {
  Harness& w = World();
  std::string unit = ReadWhole(std::string(SANDBOXD_SOURCE_DIR) + "/" + source);
  for (size_t at; (at = unit.find("@sbindir@/sandboxd")) != std::string::npos;) unit.replace(at, 18, SANDBOXD_BIN);
  unit += extra_line;
  std::string dir = w.dir() + (user_unit ? "/user-units" : "/units");
  std::filesystem::create_directories(dir + "/runtime");
  chmod(dir.c_str(), 0755);
  WriteWhole(dir + "/sandboxd.service", unit);
  if (!user_unit) return w.RunAs("root", {"systemd-analyze", "verify", "--man=no", dir + "/sandboxd.service"});
  w.RunAs("root", {"chown", kAlice, dir + "/runtime"});
  return w.RunAs(kAlice, {"systemd-analyze", "--user", "verify", "--man=no", dir + "/sandboxd.service"},
                 {.extra_env = {"XDG_RUNTIME_DIR=" + dir + "/runtime"}});
}

TEST(ServiceManagerTest, SystemdAnalyzeVerifyFindsNothingInTheUnits) {
  SANDBOXD_REQUIRE_WORLD();
  if (access("/usr/bin/systemd-analyze", X_OK) != 0) GTEST_SKIP() << "systemd-analyze is not installed";
  for (auto [source, user_unit] : {std::pair{"systemd/sandboxd.service.in", false}, std::pair{"systemd/user/sandboxd.service.in", true}}) {
    SCOPED_TRACE(source);
    Result clean = VerifyUnit(source, user_unit, "");
    EXPECT_EQ(clean.status, 0) << clean.err;
    EXPECT_EQ(clean.out + clean.err, "");
    // The check itself can fail: a misspelt directive is reported.
    Result typo = VerifyUnit(source, user_unit, "[Service]\nWatchdogSecs=30s\n");
    EXPECT_NE(typo.err.find("WatchdogSecs"), std::string::npos) << typo.out << typo.err;
  }
}

}  // namespace
}  // namespace sandboxd::it
