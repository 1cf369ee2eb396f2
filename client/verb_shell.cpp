// `sandboxctl shell SANDBOX [-- CMD...]`: an interactive shell in a sandbox, like
// `machinectl shell`. The job gets a pseudo-terminal of our own making (never our terminal
// itself: nothing it does reaches our session), which becomes its controlling terminal (Run
// option "tty"), so the shell has job control; we relay bytes between it and our terminal,
// kept raw meanwhile, and pass on window-size changes. We exit with the job's status.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "proxies.h"
#include "verbs.h"

namespace sandboxctl {
namespace {

/// Our terminal in raw mode for as long as this lives; as it was again afterwards.
class RawTerminal {
 public:
  RawTerminal() {
    if (tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    cfmakeraw(&raw);
    active_ = tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_);
  }
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;
  const termios& saved() const { return saved_; }

 private:
  termios saved_{};
  bool active_ = false;
};

/// A fresh pseudo-terminal: the master stays with us, the slave goes to the job.
struct PseudoTerminal {
  int master = -1;
  int slave = -1;
  ~PseudoTerminal() {
    if (slave >= 0) close(slave);
    if (master >= 0) close(master);
  }
};

void OpenPseudoTerminal(PseudoTerminal& pty) {
  pty.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (pty.master < 0 || grantpt(pty.master) != 0 || unlockpt(pty.master) != 0)
    throw std::runtime_error(std::string("cannot open a pseudo-terminal: ") + strerror(errno));
  char name[128];
  if (ptsname_r(pty.master, name, sizeof name) != 0) throw std::runtime_error(std::string("cannot name the pseudo-terminal: ") + strerror(errno));
  pty.slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (pty.slave < 0) throw std::runtime_error(std::string("cannot open ") + name + ": " + strerror(errno));
}

void CopyWindowSize(int from, int to) {
  winsize size{};
  if (ioctl(from, TIOCGWINSZ, &size) == 0) ioctl(to, TIOCSWINSZ, &size);
}

/// Writes all of `data` to `fd` (a blocking descriptor); false when it is gone.
bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

/// Relays until the job's side of the terminal is closed (every process of the job gone) or a
/// stop signal arrives (returned; 0 when none did).
int Relay(int master, int signals) {
  char buf[16384];
  bool keyboard_open = true;
  for (;;) {
    pollfd fds[3] = {{master, POLLIN, 0}, {signals, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    if (poll(fds, keyboard_open ? 3 : 2, -1) < 0) {
      if (errno == EINTR) continue;
      return 0;
    }
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo info{};
      if (read(signals, &info, sizeof info) == sizeof info) {
        if (info.ssi_signo == SIGWINCH) {
          CopyWindowSize(STDIN_FILENO, master);
        } else {
          return static_cast<int>(info.ssi_signo);
        }
      }
    }
    if (fds[0].revents) {
      ssize_t n = read(master, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return 0;  // EIO: no process holds the job's side any more
      if (!WriteAll(STDOUT_FILENO, buf, static_cast<size_t>(n))) return 0;
    }
    if (keyboard_open && fds[2].revents) {
      ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        keyboard_open = false;  // our input ended: the job's sees end of file at its next read
        char eof = 4;           // Ctrl-D, in the terminal's own terms
        WriteAll(master, &eof, 1);
        continue;
      }
      if (!WriteAll(master, buf, static_cast<size_t>(n))) return 0;
    }
  }
}

}  // namespace

int VerbShell(Context& ctx, const ShellArgs& args) {
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) throw UsageError{"shell needs a terminal (use run for commands without one)"};
  std::string path = ctx.ResolveSandbox(args.sandbox);
  SandboxProxy sandbox(ctx.Bus(), path);
  std::string cwd = CwdInsideRoots(sandbox.GetInfo()["roots"].get<std::vector<std::string>>());
  std::vector<std::string> command = args.command;
  if (command.empty()) command = {"/bin/sh", "-c", "exec \"${SHELL:-/bin/sh}\" -l"};

  PseudoTerminal pty;
  OpenPseudoTerminal(pty);
  // The job's terminal starts as ours is: same modes, same size.
  termios modes{};
  if (tcgetattr(STDIN_FILENO, &modes) == 0) tcsetattr(pty.slave, TCSANOW, &modes);
  CopyWindowSize(STDIN_FILENO, pty.master);

  // Window changes and stop signals come through a signalfd, read by the relay loop.
  sigset_t handled, before;
  sigemptyset(&handled);
  for (int number : {SIGWINCH, SIGTERM, SIGHUP, SIGINT, SIGQUIT}) sigaddset(&handled, number);
  sigprocmask(SIG_BLOCK, &handled, &before);
  int signals = signalfd(-1, &handled, SFD_CLOEXEC);
  if (signals < 0) throw std::runtime_error(std::string("cannot watch signals: ") + strerror(errno));

  std::map<std::string, sdbus::UnixFd> fds = {
      {"stdin", sdbus::UnixFd(pty.slave)}, {"stdout", sdbus::UnixFd(pty.slave)}, {"stderr", sdbus::UnixFd(pty.slave)}};
  std::map<std::string, sdbus::Variant> options = {{"tty", sdbus::Variant(true)}};
  sdbus::ObjectPath job_path = sandbox.Run(command, cwd, JobEnvironment({}), fds, options, ctx.InteractiveFlag());
  fds.clear();
  close(pty.slave);  // the job holds it now; when its last process goes, the master reads EIO
  pty.slave = -1;

  JobProxy job(ctx.Bus(), job_path);
  int stopped_by = 0;
  {
    RawTerminal raw;
    stopped_by = Relay(pty.master, signals);
  }
  if (stopped_by != 0) {
    try {
      job.Cancel();
    } catch (const sdbus::Error&) {
    }
  }
  JobEnd end;
  job.raw().callMethod("Wait").onInterface(sandboxd::api::kJobInterface).withTimeout(std::chrono::minutes(1)).storeResultsTo(end.exit_status, end.reason);
  close(signals);
  sigprocmask(SIG_SETMASK, &before, nullptr);
  if (end.reason == "failed") std::cerr << "sandboxctl: the sandbox for the shell could not be set up (status " << end.exit_status << ")\n";
  return end.exit_status;
}

}  // namespace sandboxctl
