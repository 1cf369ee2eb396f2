#include "base/parked_spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/errors.h"

namespace sandboxd {
namespace {

/// The control socket's number in the parked program.
constexpr int kControlFd = 3;
/// Fds one message may carry: the description and a program's fds (a job has six).
constexpr size_t kMostFds = 32;
/// A description larger than this is no daemon's (a command line is at most ARG_MAX, 2 MiB).
constexpr size_t kMostDescriptionBytes = 16u << 20;

nlohmann::json Describe(const SpawnOptions& options) {
  nlohmann::json description = {{"path", options.path}, {"argv", options.argv}, {"env", options.env}, {"cwd", options.cwd},
                                {"umask", options.umask}, {"die_with_parent", options.die_with_parent}};
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& [child_fd, parent_fd] : options.fds) targets.push_back(child_fd);
  description["fds"] = targets;
  if (options.user) description["user"] = {{"uid", options.user->uid}, {"gid", options.user->gid}, {"groups", options.user->groups}};
  if (options.pruned_mounts) description["pruning"] = {{"tree", options.pruned_mounts->tree}, {"kept", options.pruned_mounts->kept}};
  return description;
}

/// The options a description names, fds but the targets' numbers left to the caller.
SpawnOptions OptionsOf(const nlohmann::json& description) {
  SpawnOptions options;
  options.path = description.at("path").get<std::string>();
  options.argv = description.at("argv").get<std::vector<std::string>>();
  options.env = description.at("env").get<std::vector<std::string>>();
  options.cwd = description.at("cwd").get<std::string>();
  options.umask = description.at("umask").get<mode_t>();
  options.die_with_parent = description.at("die_with_parent").get<bool>();
  if (description.contains("user")) {
    const auto& user = description["user"];
    UserCredentials credentials;
    credentials.uid = user.at("uid").get<uid_t>();
    credentials.gid = user.at("gid").get<gid_t>();
    credentials.groups = user.at("groups").get<std::vector<gid_t>>();
    options.user = credentials;
  }
  if (description.contains("pruning")) {
    const auto& pruning = description["pruning"];
    options.pruned_mounts = MountPruning{pruning.at("tree").get<std::string>(), pruning.at("kept").get<std::vector<std::string>>()};
  }
  if (options.path.empty() || options.argv.empty()) throw std::invalid_argument("no program");
  return options;
}

std::string ReadAll(int fd) {
  std::string text;
  char buffer[65536];
  if (lseek(fd, 0, SEEK_SET) != 0) throw std::invalid_argument("description not seekable");
  for (;;) {
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw std::invalid_argument("description unreadable");
    if (got == 0) return text;
    if (text.size() + static_cast<size_t>(got) > kMostDescriptionBytes) throw std::invalid_argument("description too large");
    text.append(buffer, static_cast<size_t>(got));
  }
}

void Report(int control_fd, int err) {
  ssize_t ignored = write(control_fd, &err, sizeof err);
  (void)ignored;
}

}  // namespace

ParkedSpawn ParkedSpawn::Start(const std::string& program, const std::vector<int>& cgroup_procs_fds) {
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) ThrowErrno("cannot make a socket pair for " + program);
  UniqueFd ours(ends[0]), theirs(ends[1]);
  UniqueFd dev_null(open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!dev_null) ThrowErrno("cannot open /dev/null");
  SpawnOptions options;
  options.path = program;
  options.argv = {program};
  options.fds = {{0, dev_null.get()}, {1, dev_null.get()}, {2, dev_null.get()}, {kControlFd, theirs.get()}};
  options.cgroup_procs_fds = cgroup_procs_fds;
  options.die_with_parent = true;
  ParkedSpawn parked;
  parked.child_ = Spawn(options);
  parked.control_ = std::move(ours);
  return parked;
}

bool ParkedSpawn::valid() const {
  if (!child_.running() || !control_.valid()) return false;
  // A pidfd polls readable once its process has exited.
  pollfd exited{child_.pidfd(), POLLIN, 0};
  return child_.pidfd() < 0 || poll(&exited, 1, 0) == 0;
}

ChildProcess ParkedSpawn::Exec(const SpawnOptions& options) && {
  if (!valid()) throw Error(Code::kFailed, "no parked child to start " + options.path);
  if (!options.cgroup_procs_fds.empty()) throw Error(Code::kFailed, "a parked child has entered its cgroups already");
  if (options.fds.size() + 1 > kMostFds) throw Error(Code::kFailed, "too many fds for a parked child to start " + options.path);
  // The description goes in a memory file: a command line may be larger than a socket's message.
  UniqueFd description(memfd_create("parked-spawn", MFD_CLOEXEC));
  if (!description) ThrowErrno("cannot create the description of " + options.path);
  const std::string text = Describe(options).dump();
  for (size_t done = 0; done < text.size();) {
    ssize_t wrote = write(description.get(), text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) ThrowErrno("cannot write the description of " + options.path);
    done += static_cast<size_t>(wrote);
  }
  std::vector<int> fds = {description.get()};
  for (const auto& [child_fd, parent_fd] : options.fds) fds.push_back(parent_fd);
  char byte = 's';
  iovec data{&byte, 1};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control.data();
  message.msg_controllen = control.size();
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
  ssize_t sent;
  while ((sent = sendmsg(control_.get(), &message, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  if (sent != 1) ThrowErrno(sent < 0 ? errno : EPIPE, "the parked child for " + options.path + " cannot be told its program");
  // As Spawn's report pipe: the end of the socket (its exec closed it) or an errno value.
  int child_errno = 0;
  ssize_t got;
  while ((got = read(control_.get(), &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
  }
  control_.reset();
  ChildProcess child = std::move(child_);
  if (got == sizeof child_errno) {
    child.Wait();
    ThrowErrno(child_errno, "cannot start " + options.path);
  }
  return child;
}

int RunParked(int control_fd) {
  const pid_t parent = getppid();
  char byte;
  iovec data{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMostFds)];
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t got;
  while ((got = recvmsg(control_fd, &message, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (got == 0) return 0;  // let go unused
  std::vector<int> fds;
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const int* received = reinterpret_cast<const int*>(CMSG_DATA(header));
    fds.insert(fds.end(), received, received + count);
  }
  try {
    if (got != 1 || (message.msg_flags & MSG_CTRUNC) || fds.empty()) throw std::invalid_argument("malformed message");
    nlohmann::json description = nlohmann::json::parse(ReadAll(fds.front()));
    close(fds.front());
    SpawnOptions options = OptionsOf(description);
    const auto targets = description.at("fds").get<std::vector<int>>();
    if (targets.size() != fds.size() - 1) throw std::invalid_argument("fds do not match their targets");
    for (size_t i = 0; i < targets.size(); ++i) {
      // The control fd's number may be a target (the job's status fd is 3): ExecSpawned moves
      // the report fd out of the way first.
      if (targets[i] < 0 || targets[i] > 1024) throw std::invalid_argument("bad target fd");
      options.fds.emplace_back(targets[i], fds[i + 1]);
    }
    ExecSpawned(options, control_fd, parent);
  } catch (const std::exception&) {
    Report(control_fd, EINVAL);
    return 127;
  }
}

}  // namespace sandboxd
