#pragma once
/// The integration-test world, started once per test binary with real parts: a private
/// system-like dbus-daemon using the project's bus policy, a real polkitd with our actions and
/// test rules (in a private mount namespace, so the host is untouched), sandboxd from the build
/// tree, and two unprivileged users. Tests drive sandboxctl and gdbus as those users.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace sandboxd::it {

inline constexpr const char* kAlice = "sbxtest-alice";
inline constexpr const char* kBob = "sbxtest-bob";

struct Result {
  int status = -1;  ///< exit status (128+N for signal N)
  std::string out;
  std::string err;
};

struct RunOptions {
  std::string input;
  std::string cwd;  ///< default: the user's home
  std::chrono::seconds timeout{60};
  std::vector<std::string> extra_env;
};

class Harness {
 public:
  /// Starts everything; returns false (with `skip_reason`) where the machine cannot (not root).
  bool Start();
  void Stop();
  const std::string& skip_reason() const { return skip_reason_; }
  const std::string& bus_address() const { return bus_address_; }
  const std::string& dir() const { return dir_; }
  /// A directory outside /tmp (jobs have a private /tmp) that jobs see through the host's
  /// read-only view: tests put programs there for jobs to run, and the bus listens there too.
  const std::string& job_visible_dir() const { return job_visible_dir_; }
  /// The test bus at a second address, a socket in job_visible_dir(): the way a job would reach
  /// a system bus that sandboxd failed to hide, so the daemon's own refusal can be tested.
  std::string JobReachableBusAddress() const { return "unix:path=" + JobReachableBusSocket(); }
  /// Its socket: a job reaches it only when its owner names it (`run --allow-socket`), as a
  /// socket sandboxd failed to hide would be reached.
  std::string JobReachableBusSocket() const { return job_visible_dir_ + "/bus_socket"; }
  pid_t daemon_pid() const { return daemon_pid_; }
  /// Where this process (root) reads root `root`'s merged view of sandbox `id`: through the
  /// daemon's mount namespace, the only one the overlays are mounted in (/proc/PID/root
  /// resolves paths there). A process of the owner's cannot.
  std::string MergedView(const std::string& id, size_t root = 0) const;
  /// The daemon's mount table (/proc/PID/mountinfo: its namespace's, where the overlays are).
  std::string DaemonMounts() const;
  std::string DaemonLog() const;
  /// SIGKILL, as a crash would; its children die with it (they are set to).
  void KillDaemon();
  /// Starts sandboxd again on the same state (with `extra_args` and `extra_env` besides the
  /// usual); true once it owns its name.
  bool StartDaemon(const std::vector<std::string>& extra_args = {}, const std::vector<std::string>& extra_env = {});
  /// Makes sure the daemon runs and owns its name (starting it again if it died).
  void EnsureDaemon();
  /// SIGTERM, as systemd stops it; waits until it is gone and its name with it.
  void StopDaemon();
  /// After the test mounted a file system for a root: sandboxd keeps a mount namespace of its
  /// own, which sees a mount made since it started only where the host's mounts propagate
  /// (/ shared, as systemd makes it). Elsewhere (this container) it is started again.
  void LetDaemonSeeNewMounts();
  /// Ends the bus under the running daemon (as a stopping system does) and returns the daemon's
  /// wait status once it has ended (-1 when it did not within 30 s: it is killed then); then
  /// starts the bus, polkitd and sandboxd again.
  int RestartBusUnderDaemon();
  /// The command line and environment StartDaemon uses (for an activation file).
  std::vector<std::string> DaemonCommand() const;
  std::vector<std::string> DaemonEnvironment() const;
  /// Whether someone owns `name` on the test bus now.
  bool NameOwned(const std::string& name) const;
  /// The bus's activation directory (`<servicedir>`): *.service files here start programs on
  /// demand, after ReloadBusConfig().
  std::string ServicesDir() const { return dir_ + "/services"; }
  void ReloadBusConfig() const;
  /// The configuration file the test daemon reads (sandboxd.conf(5)); none at first. A test
  /// that writes one restarts the daemon for it, and removes it (and restarts) at its end.
  std::string ConfigPath() const { return dir_ + "/sandboxd.conf"; }
  /// The sanitizer reports (SanitizerReport) the daemon's log gained since the last call:
  /// checked after each test, and after the daemon's last stop (LeakSanitizer reports at exit).
  std::string NewSanitizerReports();

  Result RunAs(const std::string& user, const std::vector<std::string>& argv, const RunOptions& options = {}) const;
  Result Sandboxctl(const std::string& user, const std::vector<std::string>& args, const RunOptions& options = {}) const;
  /// `gdbus call --system --dest org.sandboxd.Sandbox1 --object-path PATH --method METHOD ARGS...`
  Result Gdbus(const std::string& user, const std::string& path, const std::string& method,
               const std::vector<std::string>& args = {}) const;
  /// A fresh project directory owned by `user`: a.txt, b.txt (5 lines), c.txt, sub/s.txt, link -> a.txt.
  std::string MakeProject(const std::string& user) const;

 private:
  bool WaitForName(const std::string& name) const;
  bool StartBus();
  bool StartPolkit();
  std::string dir_;
  std::string job_visible_dir_;
  std::string bus_address_;
  std::string skip_reason_;
  mutable std::vector<std::string> projects_;  ///< the directories MakeProject made, removed by Stop
  pid_t bus_pid_ = -1;
  pid_t polkit_pid_ = -1;
  pid_t daemon_pid_ = -1;
  size_t log_checked_ = 0;  ///< how much of sandboxd.log NewSanitizerReports has read
};

/// Runs a command as root (sh -c) and waits; the status as a shell reports it.
int System(const std::string& command);
/// Starts a program as root in a process group of its own, with `env` added, its output
/// appended to `log` and /dev/null as its input; does not wait.
pid_t SpawnRoot(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& log);
/// SIGTERM to the process and its group, then SIGKILL after 5 s; reaps it.
void StopProcess(pid_t pid);

/// Where a program of the build is (SANDBOXD_BIN, SANDBOXCTL_BIN... expand to this): `built`,
/// the path meson gave, or with SANDBOXD_IT_PROGRAMS=DIR set, the same program in build tree
/// DIR (tests/sanitize: its sanitized programs, driven by this unsanitized test program, which
/// is then not compiled a second time with the sanitizers).
const char* BuiltProgram(const char* built);

/// The one harness of this test binary (started by a gtest Environment).
Harness& World();

/// Skips the current test when the world could not start.
#define SANDBOXD_REQUIRE_WORLD()                                                   \
  do {                                                                             \
    if (!::sandboxd::it::World().skip_reason().empty())                           \
      GTEST_SKIP() << ::sandboxd::it::World().skip_reason();                      \
  } while (0)

/// Starts `sandboxctl --no-ask-password ARGS` as `user` without waiting for it (for tests that
/// kill the daemon under a call); its stdout goes nowhere, its stderr to `err_path`.
pid_t StartSandboxctl(const std::string& user, const std::vector<std::string>& args,
                      const std::string& err_path = "/dev/null");

/// A process's threads now (/proc/PID/task) and resident memory in KiB (VmRSS); -1 if gone.
int ThreadsOf(pid_t pid);
long RssKibOf(pid_t pid);

/// Makes the unprivileged user `name` (with a home) unless it exists; false if it cannot.
bool EnsureUser(const std::string& name);

/// A recursive lstat walk: per relative path, type, mode, and content or link target.
std::map<std::string, std::string> Snapshot(const std::string& dir);
std::string Describe(const std::map<std::string, std::string>& snapshot);
/// The paths where `live` is neither as `before` nor as `after` has them, one line each (at most
/// 12, then a count): CI shows only a failure's first lines, so they must name what differs.
std::string DescribeMismatch(const std::map<std::string, std::string>& live, const std::map<std::string, std::string>& before,
                             const std::map<std::string, std::string>& after);

/// The lines only `actual` has and those only `expected` has (at most 12 of each, then a count),
/// for listings too long for CI's excerpt of a failure to show where they differ.
std::string DescribeLineDifference(const std::string& actual, const std::string& expected);

/// A file's whole content ("" if it cannot be read), and a file written whole.
std::string ReadWhole(const std::string& path);
void WriteWhole(const std::string& path, const std::string& content);

/// In a sanitized build (tests/sanitize), the sanitizer reports in `text` (AddressSanitizer's,
/// LeakSanitizer's, UBSan's "runtime error:"), the first lines of each; "" when there are none,
/// and always in other builds. Such a report in any program of ours fails the test.
std::string SanitizerReport(const std::string& text);

/// Polls `predicate` until it holds or `timeout` passes.
bool WaitUntil(const std::function<bool()>& predicate, std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// The ids of the sandboxes `user` has (`sandboxctl --json list`).
std::set<std::string> SandboxIds(const std::string& user);

/// The id of a sandbox printed by `sandboxctl create`, without its newline.
std::string Trim(const std::string& text);

/// The project's source and build trees.
inline const std::string kSourceDir = SANDBOXD_SOURCE_DIR;
inline const std::string kBuildDir = SANDBOXD_BUILD_DIR;

/// The lines of `text`, without their newlines.
std::vector<std::string> Lines(const std::string& text);

/// Whether `part` occurs in `text`.
inline bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// Whether there is an entry at `path`; a symlink is one, dangling or not (never followed).
bool Exists(const std::string& path);

/// `sandboxctl ARGS...` as alice, the user most tests act as.
Result Ctl(const std::vector<std::string>& args);

}  // namespace sandboxd::it
