#include "conversation.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <pwd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utmp.h>

#include "harness.h"

namespace sandboxd::it {

Conversation::Conversation(const std::string& user, const std::string& cwd, const std::vector<std::string>& sandboxctl_args,
                           const std::string& stdout_file, unsigned short rows, unsigned short columns) {
  passwd* pw = getpwnam(user.c_str());
  // setpriv drops to the user; env -i gives the program only what a login would.
  std::vector<std::string> argv = {"/usr/bin/setpriv", "--reuid=" + std::to_string(pw->pw_uid),
                                   "--regid=" + std::to_string(pw->pw_gid), "--init-groups", "--",
                                   "/usr/bin/env", "-i", "HOME=" + std::string(pw->pw_dir), "USER=" + user,
                                   "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "TERM=xterm",
                                   "DBUS_SYSTEM_BUS_ADDRESS=" + World().bus_address(), SANDBOXCTL_BIN};
  argv.insert(argv.end(), sandboxctl_args.begin(), sandboxctl_args.end());
  winsize size{};
  size.ws_row = rows;
  size.ws_col = columns;
  if (openpty(&master_, &slave_, nullptr, nullptr, &size) != 0) return;
  pid_ = fork();
  if (pid_ == 0) {
    // login_tty: a session of its own with the pty as its controlling terminal and 0, 1, 2.
    close(master_);
    if (login_tty(slave_) != 0 || chdir(cwd.c_str()) != 0) _exit(126);
    if (!stdout_file.empty()) {
      int out = open(stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (out < 0 || dup2(out, STDOUT_FILENO) < 0) _exit(126);
    }
    std::vector<char*> args;
    for (auto& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
}

Conversation::~Conversation() {
  if (pid_ > 0 && status_ < 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (master_ >= 0) close(master_);
  if (slave_ >= 0) close(slave_);
}

bool Conversation::WaitFor(const std::string& text, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    size_t at = screen_.find(text, seen_);
    if (at != std::string::npos) {
      seen_ = at + text.size();
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline || !ReadSome(std::chrono::milliseconds(100))) return false;
  }
}

void Conversation::Type(const std::string& keys) {
  ASSERT_EQ(write(master_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
}

bool Conversation::Answer(const std::string& text, const std::string& keys) {
  if (!WaitFor(text)) return false;
  Type(keys);
  return true;
}

int Conversation::Finish(std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (status_ < 0 && std::chrono::steady_clock::now() < deadline) ReadSome(std::chrono::milliseconds(100));
  if (status_ >= 0) {
    while (ReadSome(std::chrono::milliseconds(0))) {  // what it wrote just before it ended
    }
  }
  return status_;
}

void Conversation::Resize(unsigned short rows, unsigned short columns) {
  winsize size{};
  size.ws_row = rows;
  size.ws_col = columns;
  ASSERT_EQ(ioctl(master_, TIOCSWINSZ, &size), 0);
}

termios Conversation::Modes() const {
  termios modes{};
  tcgetattr(slave_, &modes);
  return modes;
}

bool Conversation::ReadSome(std::chrono::milliseconds wait) {
  if (status_ < 0) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  pollfd p{master_, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(wait.count())) <= 0) return status_ < 0;
  char buffer[4096];
  ssize_t got = read(master_, buffer, sizeof buffer);
  if (got <= 0) return false;
  screen_.append(buffer, static_cast<size_t>(got));
  return true;
}

}  // namespace sandboxd::it
