#include "harness.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

namespace sandboxd::it {

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void WriteWhole(const std::string& path, const std::string& content) { std::ofstream(path, std::ios::binary) << content; }

// Set by meson in a sanitized build (tests/sanitize): then a sanitizer's report from any program
// of ours fails the test it came during. Each program halts at its first report
// (daemon/sanitizer_options.cpp), but a halt is not always seen (a helper's stderr reaches a test
// only inside an error message, the daemon's only its log), so the reports are looked for.
// Or told by tests/sanitize (SANDBOXD_IT_SANITIZED=1), which runs this program against the
// sanitized build's programs (BuiltProgram).
bool Sanitized() {
#ifdef SANDBOXD_SANITIZED
  return true;
#else
  static const bool told = getenv("SANDBOXD_IT_SANITIZED") != nullptr;
  return told;
#endif
}

const char* BuiltProgram(const char* built) {
  static const char* other_tree = getenv("SANDBOXD_IT_PROGRAMS");
  if (other_tree == nullptr || *other_tree == '\0') return built;
  static std::mutex mutex;
  static std::map<std::string, std::string> moved;
  std::lock_guard lock(mutex);
  auto [entry, added] = moved.try_emplace(built);
  if (added) {
    const std::string build_dir = SANDBOXD_BUILD_DIR;
    const std::string path = built;
    entry->second = path.rfind(build_dir + "/", 0) == 0 ? std::string(other_tree) + path.substr(build_dir.size()) : path;
  }
  return entry->second.c_str();
}

std::string SanitizerReport(const std::string& text) {
  if (!Sanitized()) return {};
  static constexpr const char* kMarkers[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"};
  constexpr int kMostReports = 3, kLinesEach = 30;
  std::string excerpt;
  size_t from = 0;
  for (int reports = 0; reports < kMostReports; ++reports) {
    size_t found = std::string::npos;
    for (const char* marker : kMarkers) found = std::min(found, text.find(marker, from));
    if (found == std::string::npos) break;
    size_t start = text.rfind('\n', found);
    start = start == std::string::npos ? 0 : start + 1;
    size_t end = start;
    for (int line = 0; line < kLinesEach && end < text.size(); ++line) {
      size_t newline = text.find('\n', end);
      end = newline == std::string::npos ? text.size() : newline + 1;
    }
    excerpt += text.substr(start, end - start);
    from = end;
  }
  return excerpt;
}

namespace {

namespace fs = std::filesystem;

}  // namespace

int System(const std::string& command) {
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

pid_t SpawnRoot(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    setpgid(0, 0);
    for (const auto& e : env) putenv(strdup(e.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  return pid;
}

void StopProcess(pid_t pid) {
  if (pid <= 0) return;
  kill(-pid, SIGTERM);
  kill(pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

namespace {

constexpr const char* kBusConfig = R"(<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=@DIR@/system_bus_socket</listen>
  <listen>unix:path=@JOBDIR@/bus_socket</listen>
  <servicedir>@DIR@/services</servicedir>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
  <include>@SRC@/dbus/org.sandboxd.Sandbox1.conf</include>
  <include>/usr/share/dbus-1/system.d/org.freedesktop.PolicyKit1.conf</include>
</busconfig>
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos; (pos = text.find(from)) != std::string::npos;) text.replace(pos, from.size(), to);
  return text;
}

Harness* world = nullptr;

/// A test that failed while the daemon was down (a restart that timed out) must not take every
/// later test with it: each test starts with a daemon on the bus.
class DaemonKeeper : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override {
    if (world == nullptr || !world->skip_reason().empty()) return;
    world->EnsureDaemon();
    // Nor may the sandboxes a failed test left behind (its ASSERT came before its destroy): a
    // later test that counts what a user holds (limits, the storage cap) would fail too.
    if (last_failed_) DestroyLeftovers();
    last_failed_ = false;
  }
  void DestroyLeftovers() {
    for (const char* user : {kAlice, kBob}) {
      auto listed = nlohmann::json::parse(world->Sandboxctl(user, {"--json", "list"}).out, nullptr, false);
      if (!listed.is_array()) continue;
      for (const auto& sandbox : listed) {
        if (!sandbox.contains("id")) continue;
        std::string id = sandbox["id"].get<std::string>();
        std::fprintf(stderr, "destroying %s's sandbox %s, left by a failed test\n", user, id.c_str());
        world->Sandboxctl(user, {"destroy", id});
      }
    }
  }
  bool last_failed_ = false;
  // A sanitizer's report in sandboxd's log fails the test it came during: the daemon's own, or
  // a helper's that the daemon logged with the helper's failure. (Reports of what the test ran
  // itself are caught in RunAs.) Called while the test is still the current one.
  void OnTestEnd(const ::testing::TestInfo& test) override {
    if (world == nullptr || !world->skip_reason().empty()) return;
    std::string report = world->NewSanitizerReports();
    if (!report.empty()) ADD_FAILURE() << "sanitizer report in sandboxd's log:\n" << report;
    last_failed_ = test.result()->Failed();
  }
};

class WorldEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    world = new Harness();
    if (!world->Start()) std::fprintf(stderr, "integration world not started: %s\n", world->skip_reason().c_str());
    ::testing::UnitTest::GetInstance()->listeners().Append(new DaemonKeeper);
  }
  void TearDown() override {
    if (::testing::UnitTest::GetInstance()->failed_test_count() > 0) {
      std::fprintf(stderr, "---- sandboxd log ----\n%s\n---- end of sandboxd log ----\n", world->DaemonLog().c_str());
    }
    world->Stop();
  }
};

[[maybe_unused]] ::testing::Environment* const kEnvironment = ::testing::AddGlobalTestEnvironment(new WorldEnvironment);

}  // namespace

Harness& World() { return *world; }

bool Harness::Start() {
  if (geteuid() != 0) {
    skip_reason_ = "integration tests need root (they start dbus-daemon, polkitd and sandboxd)";
    return false;
  }
  if (access("/usr/bin/bwrap", X_OK) != 0 || access("/usr/lib/polkit-1/polkitd", X_OK) != 0) {
    skip_reason_ = "bwrap or polkitd is not installed";
    return false;
  }
  char templ[] = "/tmp/sandboxd-it-XXXXXX";
  if (!mkdtemp(templ)) {
    skip_reason_ = "cannot create a temporary directory";
    return false;
  }
  dir_ = templ;
  chmod(dir_.c_str(), 0755);
  char job_visible[] = "/var/lib/sandboxd-it-XXXXXX";
  if (!mkdtemp(job_visible)) {
    skip_reason_ = "cannot create a directory under /var/lib";
    return false;
  }
  job_visible_dir_ = job_visible;
  chmod(job_visible_dir_.c_str(), 0755);
  for (const char* sub : {"actions", "rules", "empty", "services"}) fs::create_directories(dir_ + "/" + sub);
  WriteWhole(dir_ + "/bus.conf",
             Replace(Replace(Replace(kBusConfig, "@DIR@", dir_), "@JOBDIR@", job_visible_dir_), "@SRC@", SANDBOXD_SOURCE_DIR));
  System("cp /usr/share/polkit-1/actions/* '" + dir_ + "/actions/' 2>/dev/null");
  fs::copy_file(std::string(SANDBOXD_SOURCE_DIR) + "/policy/org.sandboxd.sandbox1.policy", dir_ + "/actions/org.sandboxd.sandbox1.policy",
                fs::copy_options::overwrite_existing);
  fs::copy_file(std::string(SANDBOXD_SOURCE_DIR) + "/tests/integration/data/test.rules", dir_ + "/rules/10-sandboxd-tests.rules",
                fs::copy_options::overwrite_existing);
  bus_address_ = "unix:path=" + dir_ + "/system_bus_socket";

  if (!StartBus()) return false;
  if (!EnsureUser(kAlice) || !EnsureUser(kBob)) {
    skip_reason_ = "cannot create the test users";
    return false;
  }
  if (!StartPolkit()) return false;
  if (!StartDaemon()) {
    skip_reason_ = "sandboxd did not start: " + DaemonLog();
    ADD_FAILURE() << skip_reason_;
    return false;
  }
  return true;
}

bool Harness::StartBus() {
  unlink((dir_ + "/system_bus_socket").c_str());
  if (!job_visible_dir_.empty()) unlink((job_visible_dir_ + "/bus_socket").c_str());
  bus_pid_ = SpawnRoot({"dbus-daemon", "--config-file=" + dir_ + "/bus.conf", "--nofork", "--nopidfile"}, {}, dir_ + "/dbus.log");
  if (!WaitUntil([&] { return access((dir_ + "/system_bus_socket").c_str(), F_OK) == 0; })) {
    skip_reason_ = "dbus-daemon did not start: " + ReadWhole(dir_ + "/dbus.log");
    return false;
  }
  return true;
}

bool Harness::StartPolkit() {
  // polkitd reads its actions and rules from fixed paths: give it ours in a mount namespace of
  // its own instead of touching the host's.
  std::string script = "mount --bind '" + dir_ + "/actions' /usr/share/polkit-1/actions && mount --bind '" + dir_ +
                       "/rules' /etc/polkit-1/rules.d && mount --bind '" + dir_ +
                       "/empty' /usr/share/polkit-1/rules.d && exec /usr/lib/polkit-1/polkitd --no-debug";
  polkit_pid_ = SpawnRoot({"unshare", "--mount", "--propagation", "private", "sh", "-c", script},
                          {"DBUS_SYSTEM_BUS_ADDRESS=" + bus_address_}, dir_ + "/polkitd.log");
  if (!WaitForName("org.freedesktop.PolicyKit1")) {
    skip_reason_ = "polkitd did not start: " + ReadWhole(dir_ + "/polkitd.log");
    return false;
  }
  return true;
}

int Harness::RestartBusUnderDaemon() {
  StopProcess(bus_pid_);
  int status = -1;
  if (!WaitUntil([&] { return waitpid(daemon_pid_, &status, WNOHANG) == daemon_pid_; }, std::chrono::seconds(30))) {
    status = -1;
    KillDaemon();
  }
  daemon_pid_ = -1;
  StopProcess(polkit_pid_);
  if (!StartBus() || !StartPolkit() || !StartDaemon()) ADD_FAILURE() << "the world did not come back: " << skip_reason_;
  return status;
}

std::vector<std::string> Harness::DaemonCommand() const {
  // Its own configuration file (missing: the defaults), never the machine's: ConfigPath().
  return {SANDBOXD_BIN, "--state-dir", dir_ + "/state", "--run-dir", dir_ + "/run", "--config", ConfigPath(), "--log-level", "debug"};
}

std::vector<std::string> Harness::DaemonEnvironment() const {
  // meson test sets MALLOC_PERTURB_, which the daemon would inherit, and no service manager
  // gives it: with it glibc fills every block it frees, also the remainder of a free chunk it
  // splits, so each of the ~17,000 small reallocs that building a 22 MB GetChanges reply makes
  // filled a 54 MB free chunk, and the reply took 30-60 s of CPU instead of 1.5 s (seen under
  // meson only: ScaleAttackTest). The sanitizer stage looks for what perturbing would find.
  return {"DBUS_SYSTEM_BUS_ADDRESS=" + bus_address_, std::string("SANDBOXD_HELPER=") + SANDBOXD_HELPER_BIN, "MALLOC_PERTURB_=0"};
}

bool Harness::StartDaemon(const std::vector<std::string>& extra_args, const std::vector<std::string>& extra_env) {
  auto argv = DaemonCommand();
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  auto env = DaemonEnvironment();
  for (const auto& extra : extra_env) {
    // A variable given again replaces the default (getenv would find the first).
    const std::string name = extra.substr(0, extra.find('=') + 1);
    std::erase_if(env, [&](const std::string& entry) { return entry.rfind(name, 0) == 0; });
    env.push_back(extra);
  }
  daemon_pid_ = SpawnRoot(argv, env, dir_ + "/sandboxd.log");
  // A start that recovers (a cut-off suspend of thousands of files, a commit to finish) on a
  // loaded machine takes long: wait while it lives, and no longer once it has died.
  pid_t pid = daemon_pid_;
  bool dead = false;
  bool up = WaitUntil(
      [&] {
        dead = waitpid(pid, nullptr, WNOHANG) == pid;
        return dead || NameOwned("org.sandboxd.Sandbox1");
      },
      std::chrono::seconds(90));
  if (dead) daemon_pid_ = -1;
  return up && !dead;
}

void Harness::EnsureDaemon() {
  int status = 0;
  pid_t ended = daemon_pid_ > 0 ? waitpid(daemon_pid_, &status, WNOHANG) : 0;
  if (daemon_pid_ > 0 && ended == 0 && WaitForName("org.sandboxd.Sandbox1")) return;
  // Tests stop and kill the daemon through StopDaemon and KillDaemon, which reap it: one that
  // ended on its own (a crash, an exit after the last test's checks) is a failure, not noise.
  if (ended == daemon_pid_ && daemon_pid_ > 0)
    ADD_FAILURE() << "sandboxd (pid " << daemon_pid_ << ") ended by itself before this test, "
                  << (WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                          : "exit status " + std::to_string(WEXITSTATUS(status)))
                  << "; its log:\n" << DaemonLog();
  std::fprintf(stderr, "sandboxd was not running at the start of this test: starting it again\n");
  if (ended != daemon_pid_ && daemon_pid_ > 0) KillDaemon();
  daemon_pid_ = -1;
  StartDaemon();
}

void Harness::LetDaemonSeeNewMounts() {
  std::istringstream mounts(ReadWhole("/proc/self/mountinfo"));
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point, options, optional;
    fields >> id >> parent >> device >> root >> point >> options;
    if (point != "/") continue;
    while (fields >> optional && optional != "-")
      if (optional.rfind("shared:", 0) == 0) return;
  }
  StopDaemon();
  StartDaemon();
}

void Harness::StopDaemon() {
  StopProcess(daemon_pid_);
  daemon_pid_ = -1;
  WaitUntil([&] { return !NameOwned("org.sandboxd.Sandbox1"); });
}

bool Harness::NameOwned(const std::string& name) const {
  Result r = RunAs("root", {"gdbus", "call", "--system", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                            "--method", "org.freedesktop.DBus.NameHasOwner", name});
  return r.out.find("true") != std::string::npos;
}

void Harness::ReloadBusConfig() const {
  RunAs("root", {"gdbus", "call", "--system", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method",
                 "org.freedesktop.DBus.ReloadConfig"});
}

void Harness::KillDaemon() {
  if (daemon_pid_ <= 0) return;
  kill(daemon_pid_, SIGKILL);
  waitpid(daemon_pid_, nullptr, 0);
  daemon_pid_ = -1;
  // The bus notices the dead connection at once, but the name must be gone before a restart.
  WaitUntil([&] { return !NameOwned("org.sandboxd.Sandbox1"); });
}

void Harness::Stop() {
  StopProcess(daemon_pid_);
  // LeakSanitizer reports as the daemon exits; this fails the run, not any one test.
  if (std::string report = NewSanitizerReports(); !report.empty())
    ADD_FAILURE() << "sanitizer report in sandboxd's log after the last test:\n" << report;
  StopProcess(polkit_pid_);
  StopProcess(bus_pid_);
  if (!job_visible_dir_.empty()) System("rm -rf --one-file-system '" + job_visible_dir_ + "'");
  if (dir_.empty()) return;
  // Anything still mounted below our directory (a daemon that died mid-way) goes first.
  System("grep -o ' " + dir_ + "/run/[^ ]*' /proc/self/mountinfo | sort -r | xargs -r -n1 umount -l 2>/dev/null");
  System("rm -rf --one-file-system '" + dir_ + "'");
  for (const auto& project : projects_) System("rm -rf --one-file-system '" + project + "'");
}

std::string Harness::DaemonLog() const { return ReadWhole(dir_ + "/sandboxd.log"); }

std::string Harness::MergedView(const std::string& id, size_t root) const {
  return "/proc/" + std::to_string(daemon_pid_) + "/root" + dir_ + "/run/" + id + "/" + std::to_string(root);
}

std::string Harness::DaemonMounts() const { return ReadWhole("/proc/" + std::to_string(daemon_pid_) + "/mountinfo"); }

std::string Harness::NewSanitizerReports() {
  if (!Sanitized() || dir_.empty()) return {};
  std::ifstream in(dir_ + "/sandboxd.log", std::ios::binary);
  in.seekg(static_cast<std::streamoff>(log_checked_));
  std::string fresh{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  // Whole lines only: a report being written as this reads is read whole next time.
  size_t last_newline = fresh.rfind('\n');
  if (last_newline == std::string::npos) return {};
  fresh.resize(last_newline + 1);
  log_checked_ += fresh.size();
  return SanitizerReport(fresh);
}

bool Harness::WaitForName(const std::string& name) const {
  return WaitUntil([&] { return NameOwned(name); });
}

Result Harness::RunAs(const std::string& user, const std::vector<std::string>& argv, const RunOptions& options) const {
  // getpwnam_r: tests call RunAs from several threads at once (the load test), and getpwnam's
  // one static entry would let one thread's call run as another thread's user.
  passwd entry;
  passwd* pw = nullptr;
  char entry_text[4096];
  getpwnam_r(user.c_str(), &entry, entry_text, sizeof entry_text, &pw);
  Result result;
  if (!pw) {
    result.err = "no user " + user;
    return result;
  }
  uid_t uid = pw->pw_uid;
  gid_t gid = pw->pw_gid;
  std::string home = pw->pw_dir;
  std::string cwd = options.cwd.empty() ? home : options.cwd;
  std::vector<std::string> env = {"HOME=" + home, "USER=" + user, "LOGNAME=" + user, "PATH=/usr/bin:/bin:/usr/sbin:/sbin",
                                  "DBUS_SYSTEM_BUS_ADDRESS=" + bus_address_, "LANG=C.UTF-8"};
  // An extra variable of a name set above (PATH) takes its place.
  for (const auto& extra : options.extra_env) {
    std::string name = extra.substr(0, extra.find('=') + 1);
    std::erase_if(env, [&](const std::string& e) { return e.starts_with(name); });
    env.push_back(extra);
  }
  std::vector<char*> envp, args;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) return result;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    setsid();
    if (initgroups(user.c_str(), gid) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(125);
    if (chdir(cwd.c_str()) != 0) _exit(126);
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  size_t written = 0;
  int in_fd = in[1];
  if (options.input.empty()) {
    close(in_fd);
    in_fd = -1;
  } else {
    fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  int out_fd = out[0], err_fd = err[0];
  auto deadline = std::chrono::steady_clock::now() + options.timeout;
  char buf[65536];
  while (out_fd >= 0 || err_fd >= 0) {
    pollfd fds[3];
    int n = 0;
    int idx_in = -1, idx_out = -1, idx_err = -1;
    if (in_fd >= 0) { idx_in = n; fds[n++] = {in_fd, POLLOUT, 0}; }
    if (out_fd >= 0) { idx_out = n; fds[n++] = {out_fd, POLLIN, 0}; }
    if (err_fd >= 0) { idx_err = n; fds[n++] = {err_fd, POLLIN, 0}; }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      ADD_FAILURE() << "timed out: " << argv.front() << " as " << user;
      break;
    }
    if (poll(fds, n, static_cast<int>(left)) < 0 && errno != EINTR) break;
    if (idx_in >= 0 && fds[idx_in].revents) {
      ssize_t w = write(in_fd, options.input.data() + written, options.input.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 || written == options.input.size()) {
        close(in_fd);
        in_fd = -1;
      }
    }
    auto drain = [&](int idx, int& fd, std::string& sink) {
      if (idx < 0 || !fds[idx].revents) return;
      ssize_t r = read(fd, buf, sizeof buf);
      if (r > 0) {
        sink.append(buf, static_cast<size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        close(fd);
        fd = -1;
      }
    };
    drain(idx_out, out_fd, result.out);
    drain(idx_err, err_fd, result.err);
  }
  for (int fd : {in_fd, out_fd, err_fd})
    if (fd >= 0) close(fd);
  int status = 0;
  waitpid(pid, &status, 0);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  // sandboxctl's own report, or a helper's that sandboxd passed on in an error, fails the test
  // even where the test expects the call to fail.
  if (std::string report = SanitizerReport(result.err + result.out); !report.empty())
    ADD_FAILURE() << "sanitizer report from " << argv.front() << " as " << user << ":\n" << report;
  return result;
}

Result Harness::Sandboxctl(const std::string& user, const std::vector<std::string>& args, const RunOptions& options) const {
  std::vector<std::string> argv = {SANDBOXCTL_BIN, "--no-ask-password"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunAs(user, argv, options);
}

Result Harness::Gdbus(const std::string& user, const std::string& path, const std::string& method,
                      const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"gdbus", "call", "--system", "--dest", "org.sandboxd.Sandbox1", "--object-path", path,
                                   "--method", method};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunAs(user, argv);
}

std::string Harness::MakeProject(const std::string& user) const {
  passwd* pw = getpwnam(user.c_str());
  static std::mt19937_64 random{std::random_device{}()};
  std::string top = std::string(pw->pw_dir) + "/it-" + std::to_string(random() % 1000000000);
  projects_.push_back(top);
  std::string project = top + "/proj";
  std::string script = "mkdir -p '" + project + "/sub' && cd '" + project +
                       "' && printf 'alpha\\n' > a.txt && printf '1\\n2\\n3\\n4\\n5\\n' > b.txt && printf 'gamma\\n' > c.txt"
                       " && printf 's\\n' > sub/s.txt && ln -s a.txt link";
  Result r = RunAs(user, {"sh", "-c", script});
  EXPECT_EQ(r.status, 0) << r.err;
  return project;
}

int ThreadsOf(pid_t pid) {
  int count = 0;
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (!dir) return -1;
  while (dirent* entry = readdir(dir))
    if (entry->d_name[0] != '.') ++count;
  closedir(dir);
  return count;
}

long RssKibOf(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

bool EnsureUser(const std::string& name) {
  if (getpwnam(name.c_str()) != nullptr) return true;
  return System("useradd -m -s /bin/sh " + name + " >/dev/null 2>&1") == 0 && getpwnam(name.c_str()) != nullptr;
}

std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> snapshot;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::none); it != fs::recursive_directory_iterator(); ++it) {
    struct stat st;
    std::string path = it->path().string();
    if (lstat(path.c_str(), &st) != 0) continue;
    char mode[16];
    snprintf(mode, sizeof mode, "%o", st.st_mode);
    std::string value = std::string(mode) + " uid=" + std::to_string(st.st_uid);
    if (S_ISREG(st.st_mode)) value += " " + ReadWhole(path);
    if (S_ISLNK(st.st_mode)) value += " -> " + fs::read_symlink(path).string();
    snapshot[path.substr(dir.size())] = value;
  }
  struct stat root;
  lstat(dir.c_str(), &root);
  char mode[16];
  snprintf(mode, sizeof mode, "%o", root.st_mode);
  snapshot["."] = mode;
  return snapshot;
}

std::string Describe(const std::map<std::string, std::string>& snapshot) {
  std::string text;
  for (const auto& [path, value] : snapshot) text += path + ": " + value + "\n";
  return text;
}

std::string DescribeMismatch(const std::map<std::string, std::string>& live, const std::map<std::string, std::string>& before,
                             const std::map<std::string, std::string>& after) {
  auto at = [](const std::map<std::string, std::string>& tree, const std::string& path) {
    auto found = tree.find(path);
    std::string value = found == tree.end() ? "(none)" : found->second;
    for (char& c : value)
      if (c == '\n') c = '|';
    return value.substr(0, 40);
  };
  std::set<std::string> paths;
  for (const auto* tree : {&live, &before, &after})
    for (const auto& [path, value] : *tree) paths.insert(path);
  // Of the paths the commit changes, which the live tree has as before, as after, or as
  // neither: the rarer kinds are what went wrong, so they are listed first.
  std::vector<std::string> as_before, as_after, neither;
  for (const auto& path : paths) {
    std::string now = at(live, path), was = at(before, path), will = at(after, path);
    if (was == will) {
      if (now != was) neither.push_back(path);
      continue;
    }
    (now == was ? as_before : now == will ? as_after : neither).push_back(path);
  }
  std::string text = std::to_string(neither.size()) + " paths as neither, " + std::to_string(as_before.size()) + " as before, " +
                     std::to_string(as_after.size()) + " as after\n";
  auto list = [&](const std::vector<std::string>& kind, const char* label, size_t most) {
    for (size_t i = 0; i < kind.size() && i < most; ++i)
      text += std::string(label) + " " + kind[i] + ": live " + at(live, kind[i]) + "; before " + at(before, kind[i]) + "; after " +
              at(after, kind[i]) + "\n";
  };
  list(neither, "neither", 8);
  list(as_before.size() <= as_after.size() ? as_before : as_after, as_before.size() <= as_after.size() ? "as-before" : "as-after", 8);
  return text;
}

std::string DescribeLineDifference(const std::string& actual, const std::string& expected) {
  auto lines = [](const std::string& text) {
    std::multiset<std::string> found;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) found.insert(line);
    return found;
  };
  const auto have = lines(actual), want = lines(expected);
  std::vector<std::string> extra, missing;
  std::set_difference(have.begin(), have.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::set_difference(want.begin(), want.end(), have.begin(), have.end(), std::back_inserter(missing));
  std::string text = std::to_string(extra.size()) + " lines only in the actual text, " + std::to_string(missing.size()) +
                     " only in the expected one" + (extra.empty() && missing.empty() ? " (the same lines, in another order)" : "") + "\n";
  auto list = [&](const std::vector<std::string>& kind, const char* label) {
    for (size_t i = 0; i < kind.size() && i < 12; ++i) text += std::string(label) + kind[i] + "\n";
    if (kind.size() > 12) text += "  (" + std::to_string(kind.size() - 12) + " more)\n";
  };
  list(extra, "+ ");
  list(missing, "- ");
  return text;
}

bool WaitUntil(const std::function<bool()>& predicate, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return predicate();
}

std::string Trim(const std::string& text) {
  size_t end = text.find_last_not_of(" \n\t");
  return end == std::string::npos ? std::string() : text.substr(0, end + 1);
}

pid_t StartSandboxctl(const std::string& user, const std::vector<std::string>& args, const std::string& err_path) {
  passwd* pw = getpwnam(user.c_str());
  std::string bus = "DBUS_SYSTEM_BUS_ADDRESS=" + World().bus_address();
  std::vector<std::string> argv = {SANDBOXCTL_BIN, "--no-ask-password"};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    char* env[] = {bus.data(), nullptr};
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (err < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(err, 2) < 0) _exit(124);
    if (initgroups(pw->pw_name, pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) _exit(125);
    execve(cargv[0], cargv.data(), env);
    _exit(127);
  }
  return pid;
}

std::set<std::string> SandboxIds(const std::string& user) {
  Result list = World().Sandboxctl(user, {"--json", "list"});
  EXPECT_EQ(list.status, 0) << list.err;
  std::set<std::string> ids;
  for (const auto& entry : nlohmann::json::parse(list.out)) ids.insert(entry["id"].get<std::string>());
  return ids;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

Result Ctl(const std::vector<std::string>& args) { return World().Sandboxctl(kAlice, args); }

}  // namespace sandboxd::it
