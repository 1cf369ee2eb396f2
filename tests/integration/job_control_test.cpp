// Control over jobs: timeouts, Ctrl-C, a client that goes away, jobs for clients that pass no
// streams, the network on polkit's say-so, and many jobs at once. Every way a job can be
// stopped must leave none of its processes behind (daemonised grandchildren included).

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;

/// Whether a process of alice's has exactly `command` as its command line (pgrep -f from the
/// host, which sees the processes of every job's pid namespace too). Exactly: sandboxctl's own
/// command line, which holds the job's script, must not count.
bool AliceRuns(const std::string& command) {
  return World().RunAs("root", {"pgrep", "-u", kAlice, "-f", "^" + command + "$"}).status == 0;
}

/// A job that leaves a daemonised grandchild (its own session, parent gone) and a child in the
/// background, then waits: every one of them must die with the job. Each sleep's length is the
/// marker pgrep looks for.
std::string TreeScript(const std::string& marker) {
  return "setsid sleep " + marker + " & sleep " + marker + " & (sleep " + marker + " &) ; sleep " + marker;
}

int WaitForExit(pid_t pid, std::chrono::seconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(20ms);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

using JobControlTest = AliceSandboxTest;

TEST_F(JobControlTest, ATimeoutKillsTheWholeTreeAndSaysSo) {
  auto start = std::chrono::steady_clock::now();
  Result r = Ctl({"run", "--timeout", "2", id_, "--", "sh", "-c", TreeScript("301")});
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status, 128 + SIGKILL) << r.err;
  EXPECT_NE(r.err.find("ran out of time"), std::string::npos) << r.err;
  EXPECT_GE(took, 2s);
  EXPECT_LT(took, 30s);
  EXPECT_TRUE(WaitUntil([] { return !AliceRuns("sleep 301"); })) << "a process of the job outlived its timeout";
  EXPECT_NE(World().DaemonLog().find("ended: timeout"), std::string::npos);
}

TEST_F(JobControlTest, MalformedTimeoutsAreRefusedBeforeAnythingRuns) {
  for (const char* bad : {"0", "-5", "soon", "10w", "1234567890123", "400d"}) {
    Result r = Ctl({"run", "--timeout", bad, id_, "--", "touch", "ran"});
    EXPECT_NE(r.status, 0) << bad;
    EXPECT_NE(r.err.find("timeout"), std::string::npos) << bad << ": " << r.err;
  }
  EXPECT_EQ(Changes(), "") << "a refused run ran anyway";
}

TEST_F(JobControlTest, CtrlCInSandboxctlCancelsTheJobAndEveryProcessOfIt) {
  std::string err = World().dir() + "/ctrl-c.err";
  pid_t ctl = StartSandboxctl(kAlice, {"run", id_, "--", "sh", "-c", TreeScript("302")}, err);
  ASSERT_TRUE(WaitUntil([] { return AliceRuns("sleep 302"); })) << ReadWhole(err);
  kill(ctl, SIGINT);
  int status = WaitForExit(ctl, 20s);
  EXPECT_EQ(status, 130) << "not as a shell tells an interrupted command\n" << ReadWhole(err);
  EXPECT_TRUE(WaitUntil([] { return !AliceRuns("sleep 302"); })) << "a process of the job outlived its cancel";
}

// Everything from the command's first word is the command's, as with docker run or sudo: its
// options are never sandboxctl's (`--version` used to print sandboxctl's version).
TEST_F(JobControlTest, TheCommandBeginsAtItsFirstWordWithoutDashDash) {
  Result version = Ctl({"run", id_, "echo", "--version", "-la"});
  EXPECT_EQ(version.status, 0) << version.err;
  EXPECT_EQ(version.out, "--version -la\n") << version.err;
  Result listed = Ctl({"run", "--env", "A=b", id_, "ls", "-la"});
  EXPECT_EQ(listed.status, 0) << listed.err;
  EXPECT_NE(listed.out.find("a.txt"), std::string::npos) << listed.out;
  Result options = Ctl({"run", "--timeout", "60", id_, "sh", "-c", "echo $0-$1", "--help", "--cwd"});
  EXPECT_EQ(options.out, "--help---cwd\n") << options.err;
  Result marked = Ctl({"run", id_, "--", "echo", "--", "x"});
  EXPECT_EQ(marked.out, "-- x\n") << "a \"--\" before the command is still the separator, one after it the command's";
}

// A command that cannot be run ends as a shell says it: 127 for one that does not exist, 126 for
// one that cannot be executed, with one plain line naming it (not a sandbox that failed).
TEST_F(JobControlTest, ACommandThatDoesNotExistExits127AndOneThatCannotRunExits126) {
  Result missing = Ctl({"run", id_, "no-such-command-42", "x"});
  EXPECT_EQ(missing.status, 127) << missing.err;
  EXPECT_EQ(missing.err, "sandboxd: no-such-command-42: command not found\n");
  Result not_executable = Ctl({"run", id_, "./a.txt"});
  EXPECT_EQ(not_executable.status, 126) << not_executable.err;
  EXPECT_EQ(not_executable.err, "sandboxd: cannot run ./a.txt: Permission denied\n");
  Result no_path = Ctl({"run", id_, "./missing"});
  EXPECT_EQ(no_path.status, 127) << no_path.err;
  EXPECT_EQ(no_path.err, "sandboxd: cannot run ./missing: No such file or directory\n");
}

/// Starts `script` as a job with captured output (no streams passed, as a desktop app may) and
/// returns its id.
std::string StartCapturedJob(const std::string& sandbox_id, const std::string& script) {
  Result run = World().Gdbus(kAlice, "/org/sandboxd/Sandbox1/sandbox/" + sandbox_id, "org.sandboxd.Sandbox1.Sandbox.Run",
                             {"['sh', '-c', '" + script + "']", "''", "{}", "{}", "{}", "0"});
  EXPECT_EQ(run.status, 0) << run.err;
  size_t slash = run.out.rfind('/');
  return slash == std::string::npos ? "" : run.out.substr(slash + 1, run.out.find('\'', slash) - slash - 1);
}

// jobs, logs and cancel, as systemctl and docker have them; a sandbox whose job runs is not
// destroyed under it unless asked to (--cancel-jobs), and the refusal names the job.
TEST_F(JobControlTest, JobsLogsAndCancelAsTheirNamesSay) {
  std::string job = StartCapturedJob(id_, "echo first; sleep 304");
  ASSERT_EQ(job.size(), 16u) << job;
  ASSERT_TRUE(WaitUntil([&] { return Ctl({"logs", job}).out == "first\n"; })) << Ctl({"logs", job}).err;
  Result listed = Ctl({"jobs", id_});
  EXPECT_EQ(listed.status, 0) << listed.err;
  EXPECT_NE(listed.out.find(job + "  "), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("running"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("sh -c echo first; sleep 304"), std::string::npos) << listed.out;
  EXPECT_NE(Ctl({"jobs"}).out.find(job), std::string::npos) << "jobs without a sandbox lists every sandbox's";

  Result refused = Ctl({"destroy", id_});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("has 1 running job(s): " + job + " (sh -c echo first; sleep 304)"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--cancel-jobs"), std::string::npos) << refused.err;
  EXPECT_TRUE(AliceRuns("sleep 304")) << "a refused destroy ended the job";

  Result cancelled = Ctl({"cancel", job});
  EXPECT_EQ(cancelled.status, 0) << cancelled.err;
  EXPECT_TRUE(WaitUntil([] { return !AliceRuns("sleep 304"); }));
  // (Listed finished once the daemon has counted it out, a moment after its processes are gone.)
  Result json;
  EXPECT_TRUE(WaitUntil([&] { return (json = Ctl({"--json=short", "jobs", id_})).out.find("\"finished\"") != std::string::npos; }));
  EXPECT_NE(json.out.find("\"id\":\"" + job + "\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"reason\":\"cancelled\""), std::string::npos) << json.out;
  EXPECT_EQ(std::count(json.out.begin(), json.out.end(), '\n'), 1) << "--json=short is one line:\n" << json.out;
  Result pretty = Ctl({"--json", "jobs", id_});
  EXPECT_EQ(pretty.status, 0) << pretty.err;
  EXPECT_GT(std::count(pretty.out.begin(), pretty.out.end(), '\n'), 1) << "--json alone is indented:\n" << pretty.out;
  EXPECT_EQ(Ctl({"--json=pretty", "jobs", id_}).out, pretty.out);
  Result unknown_style = Ctl({"--json=true", "jobs", id_});
  EXPECT_EQ(unknown_style.status, 2) << "--json=true is not a style: refused, not read as --json";
  EXPECT_NE(unknown_style.err.find("takes pretty or short, not 'true'"), std::string::npos) << unknown_style.err;
  EXPECT_EQ(Ctl({"logs", "-f", job}).out, "first\n") << "following a finished job prints what it wrote and ends";
  EXPECT_EQ(Ctl({"cancel", "not-a-job"}).status, 2);
}

// The day around an agent: run -d prints the job's id and returns, its output kept for logs;
// jobs shows start, end and duration; logs of a job that wrote to its caller's own streams
// says why it has nothing; output past the cap says it was cut; cancel of a job that ended
// says so.
TEST_F(JobControlTest, DetachedJobsTheirTimesAndWhatLogsAndCancelSay) {
  Result detached = Ctl({"run", "-d", id_, "--", "sh", "-c", "echo detached; sleep 306"});
  ASSERT_EQ(detached.status, 0) << detached.err;
  std::string job = detached.out.substr(0, detached.out.find('\n'));
  ASSERT_EQ(job.size(), 16u) << detached.out;
  ASSERT_TRUE(WaitUntil([&] { return Ctl({"logs", job}).out == "detached\n"; })) << Ctl({"logs", job}).err;
  EXPECT_TRUE(AliceRuns("sleep 306")) << "the detached job ended with sandboxctl";
  Result listed = Ctl({"jobs", id_});
  EXPECT_NE(listed.out.find("STARTED              ENDED                DURATION"), std::string::npos) << listed.out;
  EXPECT_EQ(Ctl({"cancel", job}).status, 0);
  ASSERT_TRUE(WaitUntil([&] { return Ctl({"--json=short", "jobs", id_}).out.find("\"cancelled\"") != std::string::npos; }));
  Result again = Ctl({"cancel", job});
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.err.find("Job " + job + " had already ended (cancelled, status 137): nothing was cancelled."), std::string::npos) << again.err;

  // A job run with our own streams: logs says why it has nothing.
  ASSERT_EQ(Ctl({"run", id_, "--", "sh", "-c", "echo to-the-terminal; sleep 1.2"}).status, 0);
  Result json = Ctl({"--json=short", "jobs", id_});
  auto jobs = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(jobs.is_array()) << json.out;
  std::string attached;
  for (const auto& listed_job : jobs) {
    if (listed_job["captured"] == "") attached = listed_job["id"];
    if (listed_job["id"] == job) EXPECT_EQ(listed_job["captured"], "stdout and stderr") << json.out;
    EXPECT_GE(listed_job["ended_usec"].get<uint64_t>(), listed_job["started_usec"].get<uint64_t>()) << json.out;
    EXPECT_TRUE(listed_job.contains("output_truncated")) << json.out;
  }
  ASSERT_FALSE(attached.empty()) << json.out;
  Result logs = Ctl({"logs", attached});
  EXPECT_EQ(logs.status, 1);
  EXPECT_EQ(logs.out, "");
  EXPECT_NE(logs.err.find("job " + attached + " wrote to the streams of whoever started it"), std::string::npos) << logs.err;
  // Its duration: at least the 1.2 s it slept, in tenths (a busy machine may add some).
  listed = Ctl({"jobs", id_});
  std::smatch duration;
  const std::string line = listed.out.substr(listed.out.find(attached));
  ASSERT_TRUE(std::regex_search(line, duration, std::regex("  ([0-9]+)\\.([0-9])s  "))) << listed.out;
  EXPECT_GE(std::stoi(duration[1]) * 10 + std::stoi(duration[2]), 12) << listed.out;

  // Output past the cap: logs says it was cut.
  Result big = Ctl({"run", "-d", id_, "--", "sh", "-c", "head -c 9000000 /dev/zero"});
  std::string big_job = big.out.substr(0, big.out.find('\n'));
  Result followed = Ctl({"logs", "-f", big_job});
  EXPECT_EQ(followed.status, 0) << followed.err;
  EXPECT_EQ(followed.out.size(), 8388608u);
  EXPECT_NE(followed.err.find("sandboxd kept only the first 8388608 bytes of job " + big_job + "'s output"), std::string::npos) << followed.err;
}

// watch follows the live feed, a line per path as the job writes, and ends when the sandbox goes.
TEST_F(JobControlTest, WatchShowsWhatJobsWriteAsTheyWriteIt) {
  const std::string ctl = SANDBOXCTL_BIN;
  // Waits are for what watch says, never for a time: it listens once it says "Watching", and
  // has seen the job's end once it prints the count (a busy machine may take its time).
  const std::string wait_for = "for i in $(seq 600); do grep -q \"$1\" $2 && break; sleep 0.05; done";
  const std::string script = "until_seen() { " + wait_for + "; }; " + ctl + " watch " + id_ +
                             " > watched.out 2> watched.err & watcher=$!; until_seen Watching watched.err; " + ctl + " run " + id_ +
                             " -- sh -c 'echo x > made.txt; sleep 0.6; rm a.txt'; until_seen '= 2 changes' watched.out; " + ctl + " destroy " + id_ +
                             "; wait $watcher; echo status=$?; cat watched.out; cat watched.err";
  Result watched = World().RunAs(kAlice, {"sh", "-c", script}, {.cwd = World().MakeProject(kAlice), .timeout = std::chrono::seconds(60)});
  EXPECT_EQ(watched.status, 0) << watched.err;
  EXPECT_NE(watched.out.find("status=0\n"), std::string::npos) << watched.out;
  EXPECT_NE(watched.out.find("A made.txt\n"), std::string::npos) << watched.out;
  EXPECT_NE(watched.out.find("D a.txt\n"), std::string::npos) << watched.out;
  EXPECT_NE(watched.out.find("= 2 changes in all\n"), std::string::npos) << watched.out;
  EXPECT_NE(watched.out.find("Sandbox " + id_ + " is gone."), std::string::npos) << watched.out;
  id_.clear();  // destroyed by the script
}

TEST_F(JobControlTest, LogsFollowsAJobToItsEndAndDestroyCanCancelJobs) {
  std::string job = StartCapturedJob(id_, "echo one; sleep 1; echo two");
  Result followed = Ctl({"logs", "--follow", job});
  EXPECT_EQ(followed.status, 0) << followed.err;
  EXPECT_EQ(followed.out, "one\ntwo\n");
  StartCapturedJob(id_, "sleep 305");
  ASSERT_TRUE(WaitUntil([] { return AliceRuns("sleep 305"); }));
  Result destroyed = Ctl({"destroy", "--cancel-jobs", id_});
  EXPECT_EQ(destroyed.status, 0) << destroyed.err;
  EXPECT_TRUE(WaitUntil([] { return !AliceRuns("sleep 305"); }));
  if (destroyed.status == 0) id_.clear();
}

// A job listed as finished no longer holds its sandbox: its end is told only once the daemon has
// counted it out (a job's end checks the decisions bound to bytes, here an approval of a 1 GiB
// file made while it ran, which takes a while). A client that saw "finished" and went on to
// destroy was refused as Busy, and destroy --cancel-jobs skipped the job it saw finished.
TEST_F(JobControlTest, AJobListedFinishedNoLongerHoldsItsSandbox) {
  std::string job = StartCapturedJob(id_, "truncate -s 1G big.bin; while [ ! -e go ]; do sleep 0.02; done; sleep 2");
  ASSERT_EQ(job.size(), 16u) << job;
  ASSERT_TRUE(WaitUntil([&] { return Ctl({"changes", id_}).out.find("big.bin") != std::string::npos; })) << Changes();
  Result approved = Ctl({"approve", id_, "big.bin"});
  ASSERT_EQ(approved.status, 0) << approved.err;
  Job("touch go");
  auto listed_finished = [&] {
    for (const auto& listed : nlohmann::json::parse(Ctl({"--json=short", "jobs", id_}).out))
      if (listed["id"] == job) return listed["state"] == "finished";
    return false;
  };
  ASSERT_TRUE(WaitUntil(listed_finished, 60s));
  Result destroyed = Ctl({"destroy", id_});
  EXPECT_EQ(destroyed.status, 0) << destroyed.err;
  if (destroyed.status == 0) id_.clear();
}

TEST_F(JobControlTest, AClientThatLeavesTheBusTakesItsJobWithIt) {
  pid_t ctl = StartSandboxctl(kAlice, {"run", id_, "--", "sh", "-c", TreeScript("303")});
  ASSERT_TRUE(WaitUntil([] { return AliceRuns("sleep 303"); }));
  kill(ctl, SIGKILL);  // no chance to cancel: only the bus can tell the daemon
  WaitForExit(ctl, 5s);
  EXPECT_TRUE(WaitUntil([] { return !AliceRuns("sleep 303"); })) << "the job outlived the client that ran it";
  // The daemon logs the end once its monitor has seen it, a moment after the processes are gone.
  EXPECT_TRUE(WaitUntil([] { return World().DaemonLog().find("ended: disconnected") != std::string::npos; })) << World().DaemonLog();
}

TEST_F(JobControlTest, AJobWithCapturedOutputRunsOnAfterItsCallerAndAnnouncesItsOutput) {
  std::string sandbox = "/org/sandboxd/Sandbox1/sandbox/" + id_;
  // gdbus passes no streams and leaves the bus as soon as Run answers.
  Result run = World().Gdbus(kAlice, sandbox, "org.sandboxd.Sandbox1.Sandbox.Run",
                             {"['sh', '-c', 'sleep 1; echo first; sleep 0.5; echo second; sleep 1; echo done > finished']",
                              "''", "{}", "{}", "{}", "0"});
  ASSERT_EQ(run.status, 0) << run.err;
  size_t quote = run.out.find('\'');
  ASSERT_NE(quote, std::string::npos) << run.out;
  std::string job = run.out.substr(quote + 1, run.out.find('\'', quote + 1) - quote - 1);

  // The monitor listens as alice: a job's signals go to its owner's connections only.
  std::string monitor_out = World().dir() + "/job-monitor.out";
  passwd* pw = getpwnam(kAlice);
  ASSERT_NE(pw, nullptr);
  std::string bus = "DBUS_SYSTEM_BUS_ADDRESS=" + World().bus_address();
  pid_t monitor = fork();
  if (monitor == 0) {
    int fd = open(monitor_out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    if (setgroups(0, nullptr) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) _exit(125);
    char* env[] = {bus.data(), nullptr};
    execle("/usr/bin/gdbus", "gdbus", "monitor", "--system", "--dest", "org.sandboxd.Sandbox1", "--object-path", job.c_str(),
           static_cast<char*>(nullptr), env);
    _exit(127);
  }
  Result wait = World().Gdbus(kAlice, job, "org.sandboxd.Sandbox1.Job.Wait");
  EXPECT_EQ(wait.status, 0) << wait.err;
  EXPECT_EQ(wait.out, "(0, 'exited')\n");
  EXPECT_TRUE(WaitUntil([&] { return ReadWhole(monitor_out).find("Job.Finished") != std::string::npos; }));
  kill(monitor, SIGTERM);
  waitpid(monitor, nullptr, 0);
  std::string signals = ReadWhole(monitor_out);
  EXPECT_NE(signals.find("org.sandboxd.Sandbox1.Job.OutputAvailable (uint64 6,)"), std::string::npos) << signals;
  EXPECT_NE(signals.find("org.sandboxd.Sandbox1.Job.Finished (0, 'exited')"), std::string::npos) << signals;
  Result output = World().Gdbus(kAlice, job, "org.sandboxd.Sandbox1.Job.ReadOutput", {"0", "100"});
  // gdbus shows the bytes one by one: "first\n" then "second\n".
  EXPECT_NE(output.out.find("0x66, 0x69, 0x72, 0x73, 0x74, 0x0a, 0x73"), std::string::npos) << output.out;
  EXPECT_NE(Changes().find("A finished"), std::string::npos);
}

TEST_F(JobControlTest, FiftyMegabytesArriveIntactThroughOurStreamsAndCappedWhenCaptured) {
  // 50 MiB of numbered lines: any byte lost, doubled or reordered shows in the count or order.
  const std::string script = "seq -w 1 6553600";
  Result streamed = Ctl({"run", id_, "--", "sh", "-c", script});
  ASSERT_EQ(streamed.status, 0) << streamed.err;
  ASSERT_EQ(streamed.out.size(), 52428800u);
  EXPECT_EQ(streamed.out.substr(0, 16), "0000001\n0000002\n");
  EXPECT_EQ(streamed.out.substr(52428800 - 8), "6553600\n");

  // With no streams passed, the output is captured up to the cap (8 MiB) and the rest dropped.
  std::string sandbox = "/org/sandboxd/Sandbox1/sandbox/" + id_;
  Result run = World().Gdbus(kAlice, sandbox, "org.sandboxd.Sandbox1.Sandbox.Run", {"['sh', '-c', '" + script + "']", "''", "{}", "{}", "{}", "0"});
  ASSERT_EQ(run.status, 0) << run.err;
  size_t quote = run.out.find('\'');
  std::string job = run.out.substr(quote + 1, run.out.find('\'', quote + 1) - quote - 1);
  Result wait = World().Gdbus(kAlice, job, "org.sandboxd.Sandbox1.Job.Wait");
  EXPECT_EQ(wait.out, "(0, 'exited')\n") << wait.err;
  Result status = World().Gdbus(kAlice, job, "org.sandboxd.Sandbox1.Job.GetStatus");
  EXPECT_NE(status.out.find("'output_truncated': <true>"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("'output_cap': <uint64 8388608>"), std::string::npos) << status.out;
  // The last captured line is whole and in order: byte 8 MiB - 8 starts line 1048576.
  Result tail = World().Gdbus(kAlice, job, "org.sandboxd.Sandbox1.Job.ReadOutput", {"8388600", "100"});
  EXPECT_EQ(tail.out, "([byte 0x31, 0x30, 0x34, 0x38, 0x35, 0x37, 0x36, 0x0a],)\n") << tail.out;  // "1048576\n"
}

TEST_F(JobControlTest, TheNetworkOnlyWithPolkitsConsent) {
  // The interfaces of the job's own network namespace (/sys would show the host's: sysfs shows
  // the namespace of whoever mounted it).
  std::vector<std::string> interfaces = {"sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort"};
  // Offline, a job sees only its private loopback.
  std::vector<std::string> offline_args = {"run", id_, "--"};
  offline_args.insert(offline_args.end(), interfaces.begin(), interfaces.end());
  Result offline = Ctl(offline_args);
  EXPECT_EQ(offline.status, 0) << offline.err;
  EXPECT_EQ(offline.out, "lo\n");
  // The test rules let alice have the network: the host's interfaces are there.
  std::vector<std::string> online_args = {"run", "--network", id_, "--"};
  online_args.insert(online_args.end(), interfaces.begin(), interfaces.end());
  Result online = Ctl(online_args);
  Result host = World().RunAs("root", interfaces);
  EXPECT_EQ(online.status, 0) << online.err;
  EXPECT_EQ(online.out, host.out);
  EXPECT_NE(online.out, "lo\n") << "this machine has no interface but lo: the test proves nothing";
}

// With the network a job shares the host's network namespace, where abstract unix sockets live
// (X11's, session buses'): it reaches none that a process outside its sandbox listens on
// (issue 40, item 2), and its own processes still reach each other's.
TEST_F(JobControlTest, AJobWithTheNetworkReachesNoAbstractSocketOfTheHost) {
  const std::string name = "sbxtest-abstract-" + std::to_string(getpid());
  const std::string listen = "import socket, sys\n"
                             "s = socket.socket(socket.AF_UNIX)\n"
                             "s.bind('\\0" + name + "')\n"
                             "s.listen(4)\n"
                             "print('listening', flush=True)\n"
                             "s.settimeout(20)\n"
                             "while True:\n"
                             "    try: s.accept()[0].close()\n"
                             "    except OSError: break\n";
  const std::string connect = "import socket\n"
                              "c = socket.socket(socket.AF_UNIX)\n"
                              "c.connect('\\0" + name + "')\n"
                              "print('connected')\n";
  std::thread listener([&] { World().RunAs(kAlice, {"timeout", "20", "python3", "-c", listen}); });
  ASSERT_TRUE(WaitUntil([&] { return World().RunAs(kAlice, {"python3", "-c", connect}).out == "connected\n"; }))
      << "the host's own connection failed: the test proves nothing";
  Result job = Ctl({"run", "--network", id_, "--", "python3", "-c", connect});
  EXPECT_NE(job.status, 0) << "the job reached the host's abstract socket @" << name;
  EXPECT_EQ(job.out, "");
  // Its own abstract socket, between its own processes, works.
  Result own = Ctl({"run", "--network", id_, "--", "python3", "-c",
                    "import socket\n"
                    "s = socket.socket(socket.AF_UNIX); s.bind('\\0" + name + "-own'); s.listen(1)\n"
                    "c = socket.socket(socket.AF_UNIX); c.connect('\\0" + name + "-own')\n"
                    "print('own')\n"});
  EXPECT_EQ(own.out, "own\n") << own.err;
  World().RunAs("root", {"pkill", "-f", "--", name});
  listener.join();
}

TEST(JobNetworkTest, ASandboxCreatedWithTheNetworkAsksOnceAndItsJobsHaveIt) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  Result created = w.Sandboxctl(kAlice, {"create", "--network", w.MakeProject(kAlice)});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  Result show = w.Sandboxctl(kAlice, {"show", id});
  EXPECT_NE(show.out.find("Network: yes"), std::string::npos) << show.out;
  // No --network on the run: the sandbox's own setting gives it the host's interfaces.
  Result online = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort"});
  EXPECT_EQ(online.status, 0) << online.err;
  EXPECT_NE(online.out, "lo\n");
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);

  // Bob may not have the network: his sandbox is not even created.
  std::string bobs = w.MakeProject(kBob);
  Result refused = w.Sandboxctl(kBob, {"create", "--network", bobs});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("not authorized"), std::string::npos) << refused.err;
  Result list = w.Sandboxctl(kBob, {"list"});
  EXPECT_EQ(list.out.find(bobs), std::string::npos) << list.out;
}

TEST(JobNetworkTest, RefusedByPolkitTheJobNeverRuns) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kBob);
  Result created = w.Sandboxctl(kBob, {"create", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  Result r = w.Sandboxctl(kBob, {"run", "--network", id, "--", "touch", "online"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("not authorized"), std::string::npos) << r.err;
  Result changes = w.Sandboxctl(kBob, {"changes", id});
  EXPECT_EQ(changes.out, "") << "a refused job ran";
  EXPECT_EQ(w.Sandboxctl(kBob, {"destroy", id}).status, 0);
}

TEST(ManyJobsTest, FiftyJobsAtOnceAllEndRightWhileTheBusStaysResponsive) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  constexpr int kSandboxes = 5, kJobsEach = 10;
  std::vector<std::string> ids;
  for (int s = 0; s < kSandboxes; ++s) {
    Result created = w.Sandboxctl(kAlice, {"create", w.MakeProject(kAlice)});
    ASSERT_EQ(created.status, 0) << created.err;
    ids.push_back(Trim(created.out));
  }
  std::vector<std::pair<pid_t, int>> jobs;  // sandboxctl pid, the exit status its job chooses
  for (int s = 0; s < kSandboxes; ++s)
    for (int j = 0; j < kJobsEach; ++j) {
      int status = (s * kJobsEach + j) % 7;
      jobs.push_back({StartSandboxctl(kAlice, {"run", ids[s], "--", "sh", "-c", "sleep 10; exit " + std::to_string(status)}), status});
    }
  ASSERT_TRUE(WaitUntil([] { return AliceRuns("sleep 10"); }));
  // While they run (10 s), a call answers at once rather than queueing behind them.
  auto start = std::chrono::steady_clock::now();
  Result list = w.Sandboxctl(kAlice, {"list"});
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(list.status, 0) << list.err;
  EXPECT_LT(took, 5s) << "list took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
  for (const auto& [pid, expected] : jobs) EXPECT_EQ(WaitForExit(pid, 120s), expected);
  for (const auto& id : ids) EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST(JobCgroupTest, WhatADeadDaemonsJobsLeftIsKilledAtTheNextStart) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string log = w.DaemonLog();
  const std::string marker = "jobs run in cgroups below ";
  size_t at = log.find(marker);
  if (at == std::string::npos) GTEST_SKIP() << "this machine ends jobs through their pid namespace";
  std::string parent = log.substr(at + marker.size(), log.find(':', at + marker.size()) - at - marker.size());
  // A job's cgroup with a process in it, as a daemon killed outright could leave behind.
  std::string leftover = parent + "/job-leftover-test";
  ASSERT_EQ(mkdir(leftover.c_str(), 0755), 0) << strerror(errno);
  pid_t sleeper = fork();
  if (sleeper == 0) {
    std::string self = std::to_string(getpid());
    int procs = open((leftover + "/cgroup.procs").c_str(), O_WRONLY);
    if (procs < 0 || write(procs, self.data(), self.size()) < 0) _exit(126);
    execlp("sleep", "sleep", "779", nullptr);
    _exit(127);
  }
  ASSERT_TRUE(WaitUntil([&] { return World().RunAs("root", {"pgrep", "-f", "^sleep 779$"}).status == 0; }));
  w.KillDaemon();
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  EXPECT_EQ(WaitForExit(sleeper, 10s), 128 + SIGKILL);
  EXPECT_TRUE(WaitUntil([&] { return access(leftover.c_str(), F_OK) != 0; })) << leftover << " is still there";
}

/// The daemon's parked job starter (job_starts_ahead.h): its pid, or 0 when none is parked.
pid_t ParkedStarterOf(pid_t daemon) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream status(entry.path() / "status");
    std::string line, comm;
    pid_t parent = 0;
    while (std::getline(status, line)) {
      if (line.rfind("Name:", 0) == 0) comm = line.substr(line.find_first_not_of(" \t", 5));
      if (line.rfind("PPid:", 0) == 0) parent = std::stoi(line.substr(5));
    }
    if (comm == "sandboxd-job-st" && parent == daemon) return std::stoi(name);
  }
  return 0;
}

// The next job's start, made ahead: a root process parked in cgroups of its own. A daemon killed
// outright takes it along (its socket's end, and its parent-death signal), and the next start
// removes its groups and parks a new one, through which a job runs.
TEST(JobCgroupTest, AParkedStarterDiesWithItsDaemonAndTheNextStartSweepsItsGroups) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  if (w.DaemonLog().find("jobs run in cgroups below ") == std::string::npos) GTEST_SKIP() << "no job cgroups here: nothing is parked";
  pid_t parked = 0;
  ASSERT_TRUE(WaitUntil([&] { return (parked = ParkedStarterOf(w.daemon_pid())) != 0; })) << "no parked job starter";
  std::vector<std::string> groups;
  {
    std::ifstream cgroups("/proc/" + std::to_string(parked) + "/cgroup");
    for (std::string line; std::getline(cgroups, line);) {
      // "N:controllers:/path": the v1 pids and memory groups and the cgroup2 one, each "job-<id>".
      std::string path = line.substr(line.find(':', line.find(':') + 1) + 1);
      if (path.find("/job-") == std::string::npos) continue;
      std::string controllers = line.substr(line.find(':') + 1, line.find(':', line.find(':') + 1) - line.find(':') - 1);
      std::string mount = controllers.empty() ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup/" + controllers;
      if (controllers.empty() && access("/sys/fs/cgroup/unified", F_OK) != 0) mount = "/sys/fs/cgroup";
      groups.push_back(mount + path);
    }
  }
  ASSERT_FALSE(groups.empty()) << "the parked starter is in no job's group";
  for (const auto& group : groups) ASSERT_EQ(access(group.c_str(), F_OK), 0) << group;
  w.KillDaemon();
  EXPECT_TRUE(WaitUntil([&] { return kill(parked, 0) != 0; })) << "the parked starter outlived its daemon";
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  for (const auto& group : groups)
    EXPECT_TRUE(WaitUntil([&] { return access(group.c_str(), F_OK) != 0; })) << group << " is still there";
  pid_t again = 0;
  EXPECT_TRUE(WaitUntil([&] { return (again = ParkedStarterOf(w.daemon_pid())) != 0; })) << "no starter parked after the start";
  EXPECT_NE(again, parked);
  std::string sandbox = w.Sandboxctl(kAlice, {"create", w.MakeProject(kAlice)}).out;
  while (!sandbox.empty() && sandbox.back() == '\n') sandbox.pop_back();
  // (Its own cgroup namespace shows the job "/": that it runs through the starter is the unit
  // tests' to show, that one runs at all is this one's.)
  Result ran = w.Sandboxctl(kAlice, {"run", sandbox, "--", "echo", "ran"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(ran.out, "ran\n");
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", sandbox}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
