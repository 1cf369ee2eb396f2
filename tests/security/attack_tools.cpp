#include "attack_tools.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sandboxd::it {

std::string CompileC(const std::string& name, const std::string& c_source, bool shared) {
  std::string dir = World().job_visible_dir();
  std::string source = dir + "/" + name + ".c";
  std::string output = dir + "/" + name;
  WriteWhole(source, c_source);
  std::vector<std::string> argv = {"cc", "-O1", "-o", output, source};
  if (shared) argv.insert(argv.begin() + 1, {"-shared", "-fPIC"});
  Result r = World().RunAs("root", argv);
  if (r.status != 0) {
    ADD_FAILURE() << "cannot compile " << name << ": " << r.err;
    return "";
  }
  chmod(output.c_str(), 0755);
  return output;
}

RootSleeper::RootSleeper() {
  pid_ = fork();
  if (pid_ == 0) {
    execlp("sleep", "sleep", "1000", static_cast<char*>(nullptr));
    _exit(127);
  }
}

RootSleeper::~RootSleeper() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

bool RootSleeper::Alive() const {
  int status = 0;
  // Not reaped yet: a zombie means someone killed it.
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    const_cast<RootSleeper*>(this)->pid_ = -1;
    return false;
  }
  return pid_ > 0 && r == 0;
}

uid_t UidOf(const std::string& user) {
  passwd* pw = getpwnam(user.c_str());
  return pw ? pw->pw_uid : static_cast<uid_t>(-1);
}

}  // namespace sandboxd::it
