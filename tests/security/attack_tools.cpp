#include "attack_tools.h"

#include <fcntl.h>
#include <grp.h>
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

Sleeper::Sleeper(const std::string& user) {
  passwd* pw = getpwnam(user.c_str());
  uid_t uid = pw ? pw->pw_uid : 0;
  gid_t gid = pw ? pw->pw_gid : 0;
  pid_ = fork();
  if (pid_ == 0) {
    if (setgid(gid) != 0 || setuid(uid) != 0) _exit(126);
    execlp("sleep", "sleep", "1000", static_cast<char*>(nullptr));
    _exit(127);
  }
}

Sleeper::~Sleeper() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

bool Sleeper::Alive() const {
  int status = 0;
  // Not reaped yet: a zombie means someone killed it.
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    const_cast<Sleeper*>(this)->pid_ = -1;
    return false;
  }
  return pid_ > 0 && r == 0;
}

pid_t SpawnAs(const std::string& user, const std::vector<std::string>& argv) {
  passwd* pw = getpwnam(user.c_str());
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& arg : copy) args.push_back(arg.data());
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    if (!pw || initgroups(pw->pw_name, pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) _exit(125);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

uid_t UidOf(const std::string& user) {
  passwd* pw = getpwnam(user.c_str());
  return pw ? pw->pw_uid : static_cast<uid_t>(-1);
}

}  // namespace sandboxd::it
