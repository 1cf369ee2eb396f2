#include "service/state_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "base/errors.h"

namespace sandboxd {
namespace {

std::string HolderPid(int fd) {
  char buffer[32] = {};
  ssize_t n = pread(fd, buffer, sizeof buffer - 1, 0);
  std::string pid = n > 0 ? std::string(buffer, n) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

}  // namespace

UniqueFd LockStateDirectory(const std::string& state_dir, std::chrono::milliseconds patience) {
  std::string path = state_dir + "/lock";
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) ThrowErrno("cannot open " + path);
  auto give_up = std::chrono::steady_clock::now() + patience;
  while (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) ThrowErrno("cannot lock " + path);
    if (std::chrono::steady_clock::now() >= give_up)
      throw Error(Code::kBusy, "another sandboxd (pid " + HolderPid(fd.get()) + ") is using " + state_dir);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd.get(), 0) != 0 || pwrite(fd.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
    ThrowErrno("cannot write " + path);
  return fd;
}

}  // namespace sandboxd
