#pragma once
/// BusMonitor: a listener on the test bus as one user (gdbus monitor, subscribed to everything
/// sandboxd sends), as a desktop app's is, its lines in a file of its own under the world's dir.

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <string>
#include <utility>

#include "harness.h"

namespace sandboxd::it {

/// `gdbus monitor --system --dest org.sandboxd.Sandbox1` as `user`, in the background, its
/// lines in a file of its own. A listener that never calls sandboxd, as a desktop app's is.
class BusMonitor {
 public:
  BusMonitor(const std::string& user, const std::string& name) : log_(World().dir() + "/" + name + ".log") {
    passwd* pw = getpwnam(user.c_str());
    EXPECT_NE(pw, nullptr) << user;
    if (!pw) return;
    uid_t uid = pw->pw_uid;
    gid_t gid = pw->pw_gid;
    std::string bus = "DBUS_SYSTEM_BUS_ADDRESS=" + World().bus_address();
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0 || dup2(fd, 1) < 0) _exit(126);
      if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(125);
      char* env[] = {bus.data(), nullptr};
      execle("/usr/bin/gdbus", "gdbus", "monitor", "--system", "--dest", "org.sandboxd.Sandbox1", static_cast<char*>(nullptr), env);
      _exit(127);
    }
  }
  ~BusMonitor() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  BusMonitor(const BusMonitor&) = delete;
  BusMonitor& operator=(const BusMonitor&) = delete;

  std::string Text() const { return ReadWhole(log_); }
  /// gdbus prints this after a call it makes once its match rule is in place (the bus handles
  /// one connection's messages in order): from then on the listener is on the bus and
  /// subscribed.
  bool Ready() const {
    return WaitUntil([&] { return Text().find("The name org.sandboxd.Sandbox1 is owned by") != std::string::npos; });
  }
  /// How many ChangeSetChanged signals it has heard, and the count the last one carried (-1:
  /// none yet).
  std::pair<size_t, long> ChangeSetChanged() const {
    static const std::regex signal(R"(ChangeSetChanged \(uint32 (\d+),\))");
    const std::string text = Text();
    size_t heard = 0;
    long last = -1;
    for (std::sregex_iterator it(text.begin(), text.end(), signal), end; it != end; ++it, ++heard) last = std::stol((*it)[1]);
    return {heard, last};
  }
  bool WaitFor(const std::string& part) const {
    return WaitUntil([&] { return Text().find(part) != std::string::npos; }, std::chrono::seconds(30));
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

}  // namespace sandboxd::it
