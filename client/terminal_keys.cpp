#include "terminal_keys.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace sandboxctl {
namespace {

// Signal handlers can reach only globals: one TerminalKeys lives at a time.
volatile sig_atomic_t g_signal = 0;
termios g_cooked{};  ///< the terminal as we found it
termios g_keys{};    ///< key by key, no echo

void NoteSignal(int number) { g_signal = number; }

/// Ctrl-Z: stop with the terminal as the shell expects it, and take it back when continued.
void StopPolitely(int) {
  int saved_errno = errno;
  tcsetattr(STDIN_FILENO, TCSANOW, &g_cooked);
  struct sigaction stop {}, ours {};
  stop.sa_handler = SIG_DFL;
  sigemptyset(&stop.sa_mask);
  sigaction(SIGTSTP, &stop, &ours);
  sigset_t just_stop;
  sigemptyset(&just_stop);
  sigaddset(&just_stop, SIGTSTP);
  sigprocmask(SIG_UNBLOCK, &just_stop, nullptr);
  raise(SIGTSTP);  // the process stops here until SIGCONT
  sigprocmask(SIG_BLOCK, &just_stop, nullptr);  // as it was in this handler; its return restores the rest
  sigaction(SIGTSTP, &ours, nullptr);
  tcsetattr(STDIN_FILENO, TCSANOW, &g_keys);
  errno = saved_errno;
}

/// Installs `handler` for `number` unless it was ignored (nohup, a shell's background job):
/// whoever ignored it meant it. The previous action goes to `previous`.
void Catch(int number, void (*handler)(int), int flags, struct sigaction& previous) {
  sigaction(number, nullptr, &previous);
  if (previous.sa_handler == SIG_IGN) return;
  struct sigaction action {};
  action.sa_handler = handler;
  action.sa_flags = flags;
  sigemptyset(&action.sa_mask);
  sigaction(number, &action, nullptr);
}

}  // namespace

TerminalKeys::TerminalKeys() {
  g_signal = 0;
  terminal_ = tcgetattr(STDIN_FILENO, &g_cooked) == 0;
  // No SA_RESTART for the ending signals: they must interrupt a blocked read.
  for (size_t i = 0; i < kEndingSignals.size(); ++i) Catch(kEndingSignals[i], NoteSignal, 0, previous_[i]);
  if (!terminal_) return;
  // Handlers first, mode second: no moment where a signal could end us with the terminal changed.
  Catch(SIGTSTP, StopPolitely, SA_RESTART, previous_stop_);
  g_keys = g_cooked;
  g_keys.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);  // ISIG stays: Ctrl-C is still SIGINT
  g_keys.c_cc[VMIN] = 1;
  g_keys.c_cc[VTIME] = 0;
  tcsetattr(STDIN_FILENO, TCSANOW, &g_keys);
}

TerminalKeys::~TerminalKeys() {
  if (terminal_) {
    tcsetattr(STDIN_FILENO, TCSANOW, &g_cooked);
    sigaction(SIGTSTP, &previous_stop_, nullptr);
  }
  for (size_t i = 0; i < kEndingSignals.size(); ++i) sigaction(kEndingSignals[i], &previous_[i], nullptr);
}

std::optional<char> TerminalKeys::Next() {
  // The ending signals stay blocked but while ppoll waits, so one that comes between the check
  // of g_signal and the wait still ends the wait.
  sigset_t ending, before;
  sigemptyset(&ending);
  for (int number : kEndingSignals) sigaddset(&ending, number);
  sigprocmask(SIG_BLOCK, &ending, &before);
  std::optional<char> key;
  while (!g_signal) {
    pollfd input{STDIN_FILENO, POLLIN, 0};
    if (ppoll(&input, 1, nullptr, &before) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    char c;
    ssize_t got = read(STDIN_FILENO, &c, 1);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got == 1) key = c;
    break;
  }
  sigprocmask(SIG_SETMASK, &before, nullptr);
  return key;
}

int TerminalKeys::Signal() const { return g_signal; }

}  // namespace sandboxctl
