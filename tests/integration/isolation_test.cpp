// What a job can and cannot reach, one test per isolation property of the security model
// (DESIGN.md "Security model", docs/usage.md, "A job runs as you"), each against the real daemon and
// real bwrap as alice. Where a test denies something inside the job, it first shows on the host,
// as alice, that the thing is really there to be had (the setuid bit works, the listener accepts,
// TIOCSTI injects, ...), so that none of them passes merely because the probe itself is broken.

#include <arpa/inet.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utmp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kExtraGroup = "sbxtest-extra";

passwd& Alice() { return *getpwnam(kAlice); }

std::set<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::set<std::string> words;
  for (std::string word; in >> word;) words.insert(word);
  return words;
}

/// Host files a test made, removed however it ends.
struct RemovedAtEnd {
  std::vector<std::string> paths;
  ~RemovedAtEnd() {
    std::error_code ignored;
    for (const auto& path : paths) fs::remove(path, ignored);
  }
};

/// A shell command as root; its exit status.
int AsRoot(const std::string& command) {
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// `script` as alice on the host, outside any sandbox: the control each test compares with.
Result OnHost(const std::string& script) { return World().RunAs(kAlice, {"sh", "-c", script}); }

/// Makes alice a member of a supplementary group besides her own (idempotent). A new member-
/// ship reaches jobs only once sandboxd's 2-second cache of her credentials has run out.
void GiveAliceASupplementaryGroup() {
  if (getgrnam(kExtraGroup) == nullptr) {
    ASSERT_EQ(AsRoot(std::string("groupadd ") + kExtraGroup), 0);
  }
  gid_t extra = getgrnam(kExtraGroup)->gr_gid;
  int count = 64;
  std::vector<gid_t> groups(count);
  ASSERT_GE(getgrouplist(kAlice, Alice().pw_gid, groups.data(), &count), 0);
  groups.resize(count);
  if (std::find(groups.begin(), groups.end(), extra) != groups.end()) return;
  ASSERT_EQ(AsRoot(std::string("usermod -aG ") + kExtraGroup + " " + kAlice), 0);
  std::this_thread::sleep_for(2100ms);
}

/// A copy of `source` at `dir`/NAME, owned by root, mode 4755, removed with its directory
/// (a root-owned 0755 one, so that nobody but root can swap the file) at the end of the scope.
class SetuidRootCopy {
 public:
  SetuidRootCopy(const std::string& source, const std::string& dir) : dir_(dir), path_(dir + "/" + fs::path(source).filename().string()) {
    fs::create_directory(dir_);
    chmod(dir_.c_str(), 0755);
    fs::copy_file(source, path_, fs::copy_options::overwrite_existing);
    ok_ = chown(path_.c_str(), 0, 0) == 0 && chmod(path_.c_str(), 04755) == 0;
  }
  ~SetuidRootCopy() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  bool ok() const { return ok_; }
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
  bool ok_ = false;
};

/// A long-lived process of alice's on the host, killed at the end of the scope.
class AliceHostProcess {
 public:
  AliceHostProcess() {
    pid_ = fork();
    if (pid_ == 0) {
      if (setgid(Alice().pw_gid) != 0 || setuid(Alice().pw_uid) != 0) _exit(125);
      execl("/bin/sleep", "sleep", "120", static_cast<char*>(nullptr));
      _exit(127);
    }
    // Until it runs sleep it may still be root's (between fork and setuid), and alice could
    // not signal it: a loaded machine showed that race. So wait for the exec.
    for (int tries = 0; tries < 500; ++tries) {
      std::ifstream comm("/proc/" + std::to_string(pid_) + "/comm");
      std::string name;
      if (std::getline(comm, name) && name == "sleep") break;
      usleep(10000);
    }
  }
  ~AliceHostProcess() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

/// A TCP listener of the test process on the host's 127.0.0.1, on a port the kernel picks.
class HostLoopbackListener {
 public:
  HostLoopbackListener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd_, 8) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      return;
    port_ = ntohs(address.sin_port);
  }
  ~HostLoopbackListener() {
    if (fd_ >= 0) close(fd_);
  }
  int port() const { return port_; }
  /// Whether a connection arrives within `wait` (it is accepted and closed).
  bool Accepts(std::chrono::milliseconds wait) const {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
    int connection = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) return false;
    close(connection);
    return true;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

/// `argv` as alice on a fresh pseudo-terminal that is the controlling terminal of her own
/// session, as after a login: what the terminal showed (carriage returns dropped) and the status.
Result OnTerminal(std::vector<std::string> argv) {
  passwd& pw = Alice();
  std::vector<std::string> env = {"HOME=" + std::string(pw.pw_dir), std::string("USER=") + kAlice, "PATH=/usr/bin:/bin",
                                  "LANG=C.UTF-8", "TERM=dumb", "DBUS_SYSTEM_BUS_ADDRESS=" + World().bus_address()};
  std::vector<char*> envp, args;
  for (auto& e : env) envp.push_back(e.data());
  for (auto& a : argv) args.push_back(a.data());
  envp.push_back(nullptr);
  args.push_back(nullptr);
  Result result;
  int master = -1, slave = -1;
  if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return result;
  pid_t pid = fork();
  if (pid == 0) {
    close(master);
    if (login_tty(slave) != 0 || initgroups(kAlice, pw.pw_gid) != 0 || setgid(pw.pw_gid) != 0 || setuid(pw.pw_uid) != 0 ||
        chdir(pw.pw_dir) != 0)
      _exit(125);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(slave);
  auto deadline = std::chrono::steady_clock::now() + 60s;
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t got = read(master, buffer, sizeof buffer);
    if (got <= 0) break;  // EIO once every holder of the terminal has gone
    result.out.append(buffer, static_cast<size_t>(got));
  }
  if (std::chrono::steady_clock::now() >= deadline) {
    ADD_FAILURE() << "timed out on the terminal: " << argv.front();
    kill(pid, SIGKILL);
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out.erase(std::remove(result.out.begin(), result.out.end(), '\r'), result.out.end());
  return result;
}

/// What the process running it knows about its terminal and session, then an attempt to push a
/// character into its terminal's input as if typed (TIOCSTI): "injected" or the errno's name.
constexpr const char* kTerminalProbe = R"py(
import errno, fcntl, os, termios
print("stdin: " + ("terminal" if os.isatty(0) else "no terminal"))
sid, pid = os.getsid(0), os.getpid()
print("session: " + ("led by itself" if sid == pid else "led by pid 1" if sid == 1 else "sid %d, pid %d" % (sid, pid)))
try:
    os.close(os.open("/dev/tty", os.O_RDWR))
    print("controlling terminal: yes")
except OSError as e:
    print("controlling terminal: no (" + errno.errorcode[e.errno] + ")")
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"x")
    print("TIOCSTI: injected")
except OSError as e:
    print("TIOCSTI: " + errno.errorcode[e.errno])
)py";

class IsolationTest : public AliceSandboxTest {
 protected:
  /// `sh -c script` as a job in the sandbox, from alice's home (so in the sandbox's root).
  Result InJob(const std::string& script, const RunOptions& options = {}) const {
    return World().Sandboxctl(kAlice, {"run", id_, "--", "sh", "-c", script}, options);
  }
  /// The directory holding the project: alice's, outside the sandbox's root.
  std::string Outside() const { return fs::path(project_).parent_path().string(); }
};

TEST_F(IsolationTest, JobRunsAsTheOwnerWithHerGroups) {
  GiveAliceASupplementaryGroup();
  if (HasFatalFailure()) return;
  Result host = OnHost("id -G");
  ASSERT_EQ(host.status, 0) << host.err;
  ASSERT_GE(Words(host.out).size(), 2u) << "alice needs a supplementary group for this test: " << host.out;
  std::string uid = std::to_string(Alice().pw_uid), gid = std::to_string(Alice().pw_gid);
  Result job = InJob("id -u; id -g; id -G");
  ASSERT_EQ(job.status, 0) << job.err;
  std::istringstream lines(job.out);
  std::string job_uid, job_gid, job_groups;
  std::getline(lines, job_uid);
  std::getline(lines, job_gid);
  std::getline(lines, job_groups);
  EXPECT_EQ(job_uid, uid);
  EXPECT_EQ(job_gid, gid);
  // As many groups as on the host, the primary one by its number. The job's user namespace
  // maps only the owner's uid and gid (bwrap runs unprivileged), so the others show as the
  // overflow gid (nogroup); the kernel still checks access with the real ones, as below.
  auto job_words = Words(job_groups), host_words = Words(host.out);
  EXPECT_EQ(job_words.size(), host_words.size()) << "id -G in the job: " << job_groups << ", on the host: " << host.out;
  EXPECT_NE(std::find(job_words.begin(), job_words.end(), gid), job_words.end()) << job_groups;
  for (const auto& group : job_words)
    if (group != gid) {
      EXPECT_EQ(group, "65534") << "an unmapped group shows as something else: " << job_groups;
    }

  // Real, effective, saved and file-system ids all alice's: nothing left to regain root with.
  Result status = InJob("grep -E '^(Uid|Gid):' /proc/self/status");
  EXPECT_EQ(status.out, "Uid:\t" + uid + "\t" + uid + "\t" + uid + "\t" + uid + "\nGid:\t" + gid + "\t" + gid + "\t" + gid +
                            "\t" + gid + "\n");

  // The group really grants access: a file only the group may read is readable in the job.
  std::string group_only = Outside() + "/group-only.txt";
  RemovedAtEnd cleanup{{group_only}};
  WriteWhole(group_only, "group\n");
  ASSERT_EQ(chown(group_only.c_str(), 0, getgrnam(kExtraGroup)->gr_gid), 0);
  ASSERT_EQ(chmod(group_only.c_str(), 0640), 0);
  ASSERT_EQ(OnHost("cat " + group_only).out, "group\n");
  Result read = InJob("cat " + group_only);
  EXPECT_EQ(read.status, 0) << read.err;
  EXPECT_EQ(read.out, "group\n");
}

TEST_F(IsolationTest, SetuidRootBinaryGainsNothingUnderNoNewPrivs) {
  // `id -u` prints the effective uid; a setuid-root copy of it prints 0 wherever the bit works.
  SetuidRootCopy id("/usr/bin/id", Outside() + "/setuid");
  ASSERT_TRUE(id.ok());
  std::string uid = std::to_string(Alice().pw_uid);
  ASSERT_EQ(OnHost(id.path() + " -u").out, "0\n") << "the setuid bit does not work at " << id.path() << " on the host";
  Result job = InJob("stat -c %a " + id.path() + " && " + id.path() + " -u && grep NoNewPrivs /proc/self/status");
  ASSERT_EQ(job.status, 0) << job.err;
  EXPECT_EQ(job.out, "4755\n" + uid + "\nNoNewPrivs:\t1\n");
}

TEST_F(IsolationTest, HostIsReadOnlyOutsideTheRoots) {
  // A file alice owns and may write on the host, outside the sandbox's root.
  std::string outside = Outside() + "/outside.txt";
  ASSERT_EQ(OnHost("printf 'before\\n' > " + outside + " && printf 'host\\n' >> " + outside).status, 0);
  auto live = Snapshot(project_);

  Result write = InJob("echo job > " + outside);
  EXPECT_NE(write.status, 0);
  EXPECT_TRUE(Contains(write.err, "Read-only file system")) << write.err;
  Result create = InJob("echo job > \"$HOME/isolation-new-file\"");
  EXPECT_NE(create.status, 0);
  EXPECT_TRUE(Contains(create.err, "Read-only file system")) << create.err;
  EXPECT_EQ(ReadWhole(outside), "before\nhost\n");
  EXPECT_FALSE(fs::exists(Alice().pw_dir + std::string("/isolation-new-file")));

  // The root is writable, and what the job writes there lands in the change set only.
  Result inside = InJob("echo job >> a.txt && echo job > inside.txt");
  EXPECT_EQ(inside.status, 0) << inside.err;
  EXPECT_EQ(Changes(), "M a.txt\nA inside.txt\n");
  EXPECT_EQ(Snapshot(project_), live) << "the job's writes reached the live tree";
}

TEST_F(IsolationTest, TmpAndVarTmpArePrivate) {
  std::vector<std::string> host_files, job_files;
  RemovedAtEnd cleanup;
  for (const char* dir : {"/tmp", "/var/tmp"}) {
    host_files.push_back(std::string(dir) + "/sbx-isolation-host-" + id_);
    job_files.push_back(std::string(dir) + "/sbx-isolation-job-" + id_);
    cleanup.paths.insert(cleanup.paths.end(), {host_files.back(), job_files.back()});
    WriteWhole(host_files.back(), "host\n");
    chmod(host_files.back().c_str(), 0644);
    ASSERT_EQ(OnHost("cat " + host_files.back()).out, "host\n");
  }

  Result listing = InJob("ls -A /tmp /var/tmp");
  EXPECT_EQ(listing.status, 0) << listing.err;
  EXPECT_EQ(listing.out, "/tmp:\n\n/var/tmp:\n") << "the job sees files in /tmp or /var/tmp";
  for (const auto& file : host_files) EXPECT_NE(InJob("test -e " + file).status, 0) << file << " is visible in the job";
  for (const auto& file : job_files) {
    Result wrote = InJob("echo job > " + file + " && cat " + file);
    EXPECT_EQ(wrote.out, "job\n") << wrote.err;
    EXPECT_FALSE(fs::exists(file)) << "the job's " << file << " appeared on the host";
  }
  for (const auto& file : host_files) EXPECT_EQ(ReadWhole(file), "host\n");
}

TEST_F(IsolationTest, DevIsFreshWithoutTheHostsDevices) {
  // What bwrap's --dev creates (console only when the job's output is a terminal: that
  // terminal); anything else in the job's /dev came from the host.
  const std::set<std::string> fresh = {"console", "core", "fd",     "full",   "null", "ptmx",    "pts",
                                       "random",  "shm",  "stderr", "stdin",  "stdout", "tty", "urandom", "zero"};
  std::set<std::string> host_block_devices;
  for (const auto& entry : fs::directory_iterator("/dev"))
    if (entry.is_block_file()) host_block_devices.insert(entry.path().filename().string());
  ASSERT_FALSE(host_block_devices.empty()) << "the host has no block device in /dev to look for";

  Result listing = InJob("ls -A /dev");
  ASSERT_EQ(listing.status, 0) << listing.err;
  std::set<std::string> job_dev = Words(listing.out);
  for (const auto& device : host_block_devices) EXPECT_FALSE(job_dev.count(device)) << "/dev/" << device << " is in the job";
  for (const auto& name : job_dev) EXPECT_TRUE(fresh.count(name)) << "/dev/" << name << " is not one of a fresh /dev";

  Result devices = InJob("echo gone > /dev/null && head -c 4 /dev/zero | od -An -tx1 && head -c 32 /dev/urandom | wc -c");
  EXPECT_EQ(devices.status, 0) << devices.err;
  EXPECT_EQ(devices.out, " 00 00 00 00\n32\n");
}

TEST_F(IsolationTest, PidNamespaceAndProcShowOnlyTheJob) {
  AliceHostProcess sleeper;
  std::string sleeper_pid = std::to_string(sleeper.pid()), daemon_pid = std::to_string(World().daemon_pid());
  // On the host alice can signal her own process, and the daemon is there to see.
  ASSERT_EQ(OnHost("kill -0 " + sleeper_pid).status, 0);
  ASSERT_TRUE(fs::exists("/proc/" + daemon_pid));

  // The glob is expanded by the shell itself, so no helper process shows up in the listing.
  Result pids = InJob("echo $$; cd /proc && echo [0-9]*");
  ASSERT_EQ(pids.status, 0) << pids.err;
  std::istringstream lines(pids.out);
  std::string self, listed;
  std::getline(lines, self);
  std::getline(lines, listed);
  EXPECT_LE(std::stoi(self.empty() ? "0" : self), 2) << "the job is not one of the first pids of a namespace of its own";
  for (const auto& pid : Words(listed))
    EXPECT_TRUE(pid == "1" || pid == self) << "the job sees pid " << pid << " that is neither its init nor itself: " << listed;

  Result signal = InJob("kill -0 " + sleeper_pid);
  EXPECT_NE(signal.status, 0) << "the job could signal alice's host process " << sleeper_pid;
  EXPECT_TRUE(Contains(signal.err, "No such process")) << signal.err;
  EXPECT_NE(InJob("kill -0 " + daemon_pid).status, 0);
  EXPECT_NE(InJob("test -e /proc/" + daemon_pid).status, 0) << "the daemon is visible in the job's /proc";
}

TEST_F(IsolationTest, NoNetworkButAPrivateLoopback) {
  HostLoopbackListener listener;
  ASSERT_NE(listener.port(), 0);
  std::string port = std::to_string(listener.port());
  std::string connect = "bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + port + "'";
  ASSERT_EQ(OnHost(connect).status, 0) << "alice cannot reach the listener from the host";
  ASSERT_TRUE(listener.Accepts(5s));

  Result job = InJob(connect);
  EXPECT_NE(job.status, 0) << "the job connected to the host's 127.0.0.1:" << port;
  EXPECT_FALSE(listener.Accepts(1s)) << "the host's listener saw a connection from the job";

  // The job's loopback is its own: the port the host's listener holds is free there.
  Result own = World().Sandboxctl(kAlice, {"run", id_, "--", "python3", "-c",
                                           "import socket\n"
                                           "server = socket.create_server(('127.0.0.1', " + port + "))\n"
                                           "client = socket.create_connection(('127.0.0.1', " + port + "))\n"
                                           "print('own loopback')\n"});
  EXPECT_EQ(own.status, 0) << own.err;
  EXPECT_EQ(own.out, "own loopback\n");
  // /proc/net/dev lists the interfaces of the job's network namespace.
  Result interfaces = InJob("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
  EXPECT_EQ(interfaces.out, "lo\n");
  // And sysfs, which lists those of the namespace that mounted it (the host's), lists none
  // (issue 40, item 8: the host's interfaces showed, and the demo printed them as the job's).
  Result listed = InJob("ls -A /sys/class/net /sys/devices/virtual/net");
  for (const auto& name : {"eth0", "docker0", "tap0", "veth", "br-"})
    EXPECT_EQ(listed.out.find(name), std::string::npos) << listed.out;
  EXPECT_EQ(Trim(InJob("ls -A /sys/class/net | wc -l").out), "0") << InJob("ls -A /sys/class/net").out;
}

TEST_F(IsolationTest, JobHasASessionOfItsOwnAndCannotTypeIntoTheCallersTerminal) {
  // The probe on the terminal directly: there TIOCSTI works, where the kernel allows it at all
  // (dev.tty.legacy_tiocsti=0 refuses it to everyone without CAP_SYS_ADMIN).
  Result host = OnTerminal({"/usr/bin/python3", "-c", kTerminalProbe});
  EXPECT_TRUE(Contains(host.out, "stdin: terminal\nsession: led by itself\ncontrolling terminal: yes\n")) << host.out;
  if (Trim(ReadWhole("/proc/sys/dev/tty/legacy_tiocsti")) != "0") {
    EXPECT_TRUE(Contains(host.out, "TIOCSTI: injected")) << "TIOCSTI does not work even outside a sandbox:\n" << host.out;
  }

  Result job = OnTerminal({SANDBOXCTL_BIN, "--no-ask-password", "run", id_, "--", "python3", "-c", kTerminalProbe});
  EXPECT_EQ(job.status, 0) << job.out;
  EXPECT_TRUE(Contains(job.out, "stdin: terminal\n")) << "the job's stdin is not sandboxctl's terminal:\n" << job.out;
  // The session is led by the job itself or by its init (bwrap, pid 1, calls setsid before it
  // forks the command): one begun inside the job's pid namespace. sandboxctl's or the daemon's
  // session could not even be named there (getsid would say 0).
  EXPECT_TRUE(Contains(job.out, "session: led by itself\n") || Contains(job.out, "session: led by pid 1\n")) << job.out;
  EXPECT_TRUE(Contains(job.out, "controlling terminal: no")) << job.out;
  EXPECT_TRUE(Contains(job.out, "TIOCSTI: EPERM\n") || Contains(job.out, "TIOCSTI: EIO\n")) << job.out;
}

TEST_F(IsolationTest, EnvironmentIsTheDocumentedSetPlusEnvOptions) {
  // TERM comes from sandboxctl's environment as documented; SBX_LEAK_PROBE (like the bus
  // address sandboxctl itself uses) must not.
  Result env = World().Sandboxctl(kAlice, {"run", id_, "--env", "FOO=bar", "--", "env"},
                                  {.extra_env = {"SBX_LEAK_PROBE=1", "TERM=isolation-term"}});
  ASSERT_EQ(env.status, 0) << env.err;
  std::map<std::string, std::string> variables;
  std::set<std::string> names;
  std::istringstream lines(env.out);
  for (std::string line; std::getline(lines, line);) {
    size_t eq = line.find('=');
    names.insert(line.substr(0, eq));
    if (eq != std::string::npos) variables[line.substr(0, eq)] = line.substr(eq + 1);
  }
  EXPECT_EQ(names, (std::set<std::string>{"FOO", "HOME", "LANG", "LOGNAME", "PATH", "PWD", "SANDBOXD_SANDBOX", "SHELL", "TERM", "USER"}))
      << env.out;
  EXPECT_FALSE(names.count("SBX_LEAK_PROBE")) << env.out;
  EXPECT_EQ(variables["FOO"], "bar");
  EXPECT_EQ(variables["TERM"], "isolation-term");
  EXPECT_EQ(variables["HOME"], Alice().pw_dir);
  EXPECT_EQ(variables["USER"], kAlice);
  EXPECT_EQ(variables["LOGNAME"], kAlice);
  EXPECT_EQ(variables["SHELL"], Alice().pw_shell);
  EXPECT_EQ(variables["LANG"], "C.UTF-8");
  Result name = World().Sandboxctl(kAlice, {"show", id_, "--json"});
  EXPECT_NE(name.out.find("\"name\": \"" + variables["SANDBOXD_SANDBOX"] + "\""), std::string::npos)
      << "SANDBOXD_SANDBOX is not the sandbox's name: " << variables["SANDBOXD_SANDBOX"] << "\n" << name.out;
}

TEST(HostCheckAtStartTest, TheDaemonSaidAtStartThatOverlaysAndJobsWorkHere) {
  SANDBOXD_REQUIRE_WORLD();
  // sandboxd tries an overlay and a job as nobody as it starts (host_check.h); on a machine
  // where either fails it names what is missing instead.
  EXPECT_TRUE(WaitUntil([] { return World().DaemonLog().find("overlayfs and jobs work here") != std::string::npos; })) << World().DaemonLog();
  std::string log = World().DaemonLog();
  EXPECT_EQ(log.find("jobs cannot run here"), std::string::npos) << log;
}

}  // namespace
}  // namespace sandboxd::it
