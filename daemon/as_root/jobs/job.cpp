#include "jobs/job.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <future>
#include <sstream>

#include "base/errors.h"
#include "runtime/file_clock.h"
#include "base/name_table.h"
#include "jobs/job_senders.h"
#include "jobs/allowlist_namespace.h"
#include "jobs/no_route_count.h"
#include "logging/log.h"

namespace sandboxd {

namespace {

constexpr std::pair<JobEndReason, std::string_view> kEndReasonNames[] = {
    {JobEndReason::kExited, "exited"},       {JobEndReason::kFailed, "failed"},
    {JobEndReason::kCancelled, "cancelled"}, {JobEndReason::kTimeout, "timeout"},
    {JobEndReason::kDisconnected, "disconnected"}, {JobEndReason::kMemory, "memory"},
    {JobEndReason::kQuota, "quota"},
};

}  // namespace

std::string_view ToString(JobState state) { return state == JobState::kRunning ? "running" : "finished"; }

std::string_view ToString(JobEndReason reason) { return NameOf(kEndReasonNames, reason, "unknown"); }

Job::Job(std::string id, std::string sandbox_id, std::vector<std::string> argv)
    : id_(std::move(id)),
      sandbox_id_(std::move(sandbox_id)),
      argv_(std::move(argv)),
      created_usec_(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count()) {}

Job::~Job() {
  Cancel();
  if (monitor_.joinable()) monitor_.join();
}

void Job::Start(JobLaunch launch, FinishedCallback on_finished, OutputCallback on_output) {
  start_mark_ = launch.start_mark;
  network_setup_ = std::move(launch.network);
  count_no_route_ = launch.count_no_route;
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) ThrowErrno("cannot create a pipe for job " + id_);
  UniqueFd status_read(status_pipe[0]), status_write(status_pipe[1]);

  UniqueFd capture_read, capture_write;
  if (!launch.stdout_fd || !launch.stderr_fd) {
    if (!launch.output) throw Error(Code::kFailed, "job " + id_ + " has output to capture but nowhere to keep it");
    int capture_pipe[2];
    if (pipe2(capture_pipe, O_CLOEXEC) != 0) ThrowErrno("cannot create a pipe for job " + id_);
    capture_read.reset(capture_pipe[0]);
    capture_write.reset(capture_pipe[1]);
  }
  // bwrap's options in a memory file rather than on its command line, which every user can
  // read in /proc; the file is the job's alone (the child gets a copy of the fd, nothing else).
  UniqueFd args_fd(memfd_create("bwrap-args", MFD_CLOEXEC));
  if (!args_fd) ThrowErrno("cannot create the options file of job " + id_);
  for (size_t done = 0; done < launch.args_data.size();) {
    ssize_t wrote = write(args_fd.get(), launch.args_data.data() + done, launch.args_data.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) ThrowErrno("cannot write the options file of job " + id_);
    done += static_cast<size_t>(wrote);
  }
  if (lseek(args_fd.get(), 0, SEEK_SET) != 0) ThrowErrno("cannot rewind the options file of job " + id_);
  // The sandbox waits on this before it runs the command; the daemon writes once it knows the
  // job's pid namespace (Monitor).
  int block_pipe[2];
  if (pipe2(block_pipe, O_CLOEXEC) != 0) ThrowErrno("cannot create a pipe for job " + id_);
  UniqueFd block_read(block_pipe[0]), block_write(block_pipe[1]);
  UniqueFd dev_null;
  if (!launch.stdin_fd) {
    dev_null.reset(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!dev_null) ThrowErrno("cannot open /dev/null");
  }

  SpawnOptions options;
  options.path = launch.argv.front();
  options.argv = launch.argv;
  // Empty: bwrap runs on the host, as the owner, before any isolation exists; a variable of
  // the caller's (LD_PRELOAD, ...) here would run their code outside the sandbox.
  options.env = {};
  options.cwd = launch.cwd;
  options.user = launch.user;
  options.pruned_mounts = launch.mounts;
  // A parked starter is in the job's cgroups already; else bwrap's child enters them first.
  // Decided once: a starter that dies after this fails the start rather than leave the job
  // outside its cgroups.
  const bool parked = launch.starter.valid();
  if (!parked) {
    if (launch.cgroup) options.cgroup_procs_fds.push_back(launch.cgroup->procs_fd());
    if (launch.limits)
      for (int fd : launch.limits->procs_fds()) options.cgroup_procs_fds.push_back(fd);
  }
  options.fds = {
      {0, launch.stdin_fd ? launch.stdin_fd.get() : dev_null.get()},
      {1, launch.stdout_fd ? launch.stdout_fd.get() : capture_write.get()},
      {2, launch.stderr_fd ? launch.stderr_fd.get() : capture_write.get()},
      {kStatusFd, status_write.get()},
      {kArgsFd, args_fd.get()},
      {kBlockFd, block_read.get()},
  };
  // bwrap --die-with-parent uses PR_SET_PDEATHSIG, which fires when the *thread* that forked
  // it ends. So the monitor thread, which lives exactly as long as the job, does the fork (a
  // parked starter's parent is the thread of job_starts_ahead.h, which outlives every job); the
  // caller's worker thread only waits to hear that the start worked.
  {
    std::lock_guard lock(mutex_);
    cgroup_ = std::move(launch.cgroup);
    limits_ = std::move(launch.limits);
    output_ = std::move(launch.output);
    captured_streams_ = !launch.stdout_fd && !launch.stderr_fd ? "stdout and stderr" : !launch.stdout_fd ? "stdout" : !launch.stderr_fd ? "stderr" : "";
  }
  std::promise<void> started;
  std::future<void> start_result = started.get_future();
  {
    std::lock_guard lock(mutex_);
    waiters_.push_back(std::move(on_finished));
  }
  monitor_ = std::thread([this, options = std::move(options), started = std::move(started),
                          status_read = std::move(status_read), status_write = std::move(status_write),
                          capture_read = std::move(capture_read), capture_write = std::move(capture_write),
                          stdin_fd = std::move(launch.stdin_fd), stdout_fd = std::move(launch.stdout_fd),
                          stderr_fd = std::move(launch.stderr_fd), dev_null = std::move(dev_null),
                          args_fd = std::move(args_fd), block_read = std::move(block_read),
                          block_write = std::move(block_write),
                          timeout = launch.timeout, report_timeout = launch.namespace_report_timeout, on_output = std::move(on_output),
                          over_quota = std::move(launch.over_quota), starter = std::move(launch.starter), parked]() mutable {
    try {
      ChildProcess child = parked ? std::move(starter).Exec(options) : Spawn(options);
      std::lock_guard lock(mutex_);
      child_ = std::move(child);
    } catch (...) {
      started.set_exception(std::current_exception());
      return;
    }
    // Our copies of the child's ends must go, or we would never see EOF.
    status_write.reset();
    capture_write.reset();
    stdin_fd.reset();
    stdout_fd.reset();
    stderr_fd.reset();
    dev_null.reset();
    args_fd.reset();
    block_read.reset();
    started.set_value();
    Monitor(std::move(status_read), std::move(capture_read), std::move(block_write), timeout, report_timeout, std::move(on_output),
            std::move(over_quota));
  });
  try {
    start_result.get();
  } catch (...) {
    monitor_.join();
    std::lock_guard lock(mutex_);
    waiters_.clear();
    state_ = JobState::kFinished;
    waited_ = true;
    throw;
  }
}

void Job::Monitor(UniqueFd status_fd, UniqueFd capture_fd, UniqueFd go_fd, std::chrono::seconds timeout,
                  std::chrono::milliseconds report_timeout, OutputCallback on_output, std::function<bool()> over_quota) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  auto next_quota_check = started + kQuotaCheckInterval;
  auto last_notice = started - kOutputNotifyInterval;
  bool unannounced = false;  // output captured since the last notice
  std::string status_text;
  size_t status_checked = 0;  // status_text before this is checked for the namespace report
  const auto report_deadline = started + report_timeout;
  char buf[65536];
  while (status_fd || capture_fd) {
    pollfd fds[2];
    int n = 0, status_idx = -1, capture_idx = -1;
    if (status_fd) { status_idx = n; fds[n++] = {status_fd.get(), POLLIN, 0}; }
    if (capture_fd) { capture_idx = n; fds[n++] = {capture_fd.get(), POLLIN, 0}; }
    // Wake for the timeout, and to announce output that arrived within the last interval.
    int wait_ms = -1;
    auto now = Clock::now();
    if (go_fd) {
      if (now >= report_deadline) {
        {
          std::lock_guard lock(mutex_);
          failure_ = "bwrap did not report the job's namespaces in time";
        }
        Cancel(JobEndReason::kFailed);  // bwrap never told us a pid namespace we could check
        go_fd.reset();
      } else {
        wait_ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(report_deadline - now).count());
      }
    }
    if (timeout.count() > 0) {
      if (now >= started + timeout) {
        Cancel(JobEndReason::kTimeout);  // the pipes close as the job's processes die
        timeout = std::chrono::seconds(0);
      } else {
        int until_timeout = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(started + timeout - now).count());
        wait_ms = wait_ms < 0 ? until_timeout : std::min(wait_ms, until_timeout);
      }
    }
    if (over_quota) {
      if (now >= next_quota_check) {
        auto asked = Clock::now();
        bool over = over_quota();
        auto took = Clock::now() - asked;
        // A big layer takes long to measure: never spend more than a tenth of the time on it.
        next_quota_check = Clock::now() + std::max<Clock::duration>(kQuotaCheckInterval, took * 10);
        if (over) {
          Cancel(JobEndReason::kQuota);  // the pipes close as the job's processes die
          over_quota = nullptr;
        }
        now = Clock::now();
      }
      if (over_quota) {
        int until_check = static_cast<int>(
            std::max<int64_t>(0, std::chrono::ceil<std::chrono::milliseconds>(next_quota_check - now).count()));
        wait_ms = wait_ms < 0 ? until_check : std::min(wait_ms, until_check);
      }
    }
    if (unannounced) {
      int until_notice = static_cast<int>(std::max<int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(last_notice + kOutputNotifyInterval - now).count()));
      wait_ms = wait_ms < 0 ? until_notice : std::min(wait_ms, until_notice);
    }
    int ready = poll(fds, n, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (status_idx >= 0 && fds[status_idx].revents) {
      ssize_t r = read(status_fd.get(), buf, sizeof buf);
      if (r > 0) {
        status_text.append(buf, std::min(static_cast<size_t>(r), kStatusTextCap - std::min(kStatusTextCap, status_text.size())));
        if (go_fd && NoteNamespaceInit(status_text, status_checked)) {
          // The command may run now: the daemon can tell its processes apart from here on, and
          // (bwrap's set-up took longer than a tick, as a rule) the file clock is past its start.
          // Its network first, where it has hosts: the command never runs without it.
          if (SetUpNetwork()) {
            WaitForFileClockPast(start_mark_);
            ssize_t ignored = write(go_fd.get(), "1", 1);
            (void)ignored;
          }
          go_fd.reset();
        }
      }
      else if (r == 0 || errno != EINTR) status_fd.reset();
    }
    if (capture_idx >= 0 && fds[capture_idx].revents) {
      ssize_t r = read(capture_fd.get(), buf, sizeof buf);
      if (r > 0) {
        unannounced |= output()->Append(buf, static_cast<size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        capture_fd.reset();
      }
    }
    if (unannounced && on_output && Clock::now() >= last_notice + kOutputNotifyInterval) {
      on_output(output()->size());
      last_notice = Clock::now();
      unannounced = false;
    }
  }
  if (auto captured = output()) captured->Close();
  int wait_status = child_.Wait();
  // Its forwarder ends with it, and the last of its refusals are in before the end is told.
  std::shared_ptr<JobNetwork> network;
  {
    std::lock_guard lock(mutex_);
    network = network_;
  }
  if (network) network->Stop();
  UniqueFd offline_netns;
  {
    std::lock_guard lock(mutex_);
    offline_netns = std::move(offline_netns_);
  }
  std::unique_ptr<JobCgroup> cgroup;
  std::unique_ptr<JobLimitGroups> limits;
  {
    std::lock_guard lock(mutex_);
    cgroup = std::move(cgroup_);
    limits = std::move(limits_);
  }
  // Whatever of the job is still in its cgroup goes with it (outside the lock: a Cancel meanwhile
  // kills through the pidfds); the cgroups themselves are removed after the end is announced
  // and settled, off everyone's clock (removal waits for the kernel's cgroup lock).
  if (cgroup) cgroup->EndRemains(kEndRemainsGrace);
  bool out_of_memory = limits && limits->MemoryLimitHit();
  std::optional<NamespaceId> pid_namespace;
  {
    std::lock_guard lock(mutex_);
    pid_namespace = std::exchange(pid_namespace_, std::nullopt);
  }
  if (pid_namespace) JobSenders::Instance().RemoveJobNamespace(*pid_namespace);

  // bwrap reports {"child-pid": N} at start and {"exit-code": N} when the command ended; no
  // exit code means the sandbox itself could not be set up.
  JobEnd end;
  bool have_exit_code = false;
  std::istringstream lines(status_text);
  std::string line;
  while (std::getline(lines, line)) {
    auto parsed = nlohmann::json::parse(line, nullptr, false);
    if (parsed.is_object() && parsed.contains("exit-code") && parsed["exit-code"].is_number_integer()) {
      end.exit_status = parsed["exit-code"].get<int>();
      have_exit_code = true;
    }
  }
  // The hint is for a job that failed (no one is told anything of one that succeeded): a
  // command that exited 0 costs nothing more (the count takes a thread, ~0.2 ms here).
  if (offline_netns && !(have_exit_code && end.exit_status == 0)) {
    uint64_t count = NoRouteCount(offline_netns.get());
    std::lock_guard lock(mutex_);
    no_route_count_ = count;
  }
  offline_netns.reset();
  std::vector<FinishedCallback> waiters;
  {
    std::lock_guard lock(mutex_);
    if (stop_reason_) {
      end.reason = *stop_reason_;
      end.exit_status = have_exit_code ? end.exit_status : 128 + SIGKILL;
    } else if (have_exit_code) {
      // A job that failed after the kernel killed one of its processes for memory ended for that.
      end.reason = out_of_memory && end.exit_status != 0 ? JobEndReason::kMemory : JobEndReason::kExited;
    } else {
      end.reason = JobEndReason::kFailed;
      end.exit_status = ExitStatusFromWaitStatus(wait_status);
      if (end.exit_status == 0) end.exit_status = 1;
    }
    end_ = end;
    ended_usec_ = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    state_ = JobState::kFinished;
    waiters.swap(waiters_);
  }
  // The first waiter is the launcher's, which counts the job out of its sandbox: a Wait that
  // came meanwhile is answered after it, never before (a caller told the job ended could find
  // its sandbox still counting it, and a commit right after refused as Busy).
  for (;;) {
    for (auto& waiter : waiters) {
      waiter(end);
      // After the launcher's: a caller told of the end by a later waiter (Wait's reply) that
      // asks at once sees the job finished (GetStatus answered "running" so, under load).
      std::lock_guard lock(mutex_);
      launcher_told_ = true;
    }
    // Released outside the lock: a waiter may hold a D-Bus reply, whose release takes the bus's
    // lock, which the bus thread holds while it cancels a job (and takes this lock).
    waiters.clear();
    std::lock_guard lock(mutex_);
    if (waiters_.empty()) {
      waited_ = true;
      break;
    }
    waiters.swap(waiters_);
  }
  std::function<void()> after;
  {
    std::lock_guard lock(mutex_);
    after.swap(after_waiters_);
  }
  if (after) after();
  limits.reset();
  cgroup.reset();
}

void Job::ThenAfterWaiters(std::function<void()> work) {
  std::lock_guard lock(mutex_);
  after_waiters_ = std::move(work);
}

void Job::Cancel(JobEndReason reason) {
  std::lock_guard lock(mutex_);
  if (state_ == JobState::kFinished || child_.pidfd() < 0 || stop_reason_) return;
  stop_reason_ = reason;
  if (cgroup_) cgroup_->KillAll();
  // Without a cgroup: the job's pid 1 too, in case bwrap dies before that init has set its
  // parent-death signal (a job cancelled as it starts).
  if (namespace_init_) syscall(SYS_pidfd_send_signal, namespace_init_.get(), SIGKILL, nullptr, 0);
  // Killing bwrap kills the job's pid 1 (--die-with-parent), and the kernel then kills every
  // process left in that pid namespace, daemonised grandchildren included.
  // Through the pidfd, which stays valid (and harmless) even once the child is reaped.
  syscall(SYS_pidfd_send_signal, child_.pidfd(), SIGKILL, nullptr, 0);
}

bool Job::NoteNamespaceInit(const std::string& status_text, size_t& from) {
  // bwrap's own report comes first, but the owner can write lines of their own into the pipe
  // before or after it: each line is a claim, kept only if it checks out.
  for (size_t line_end; (line_end = status_text.find('\n', from)) != std::string::npos; from = line_end + 1) {
    auto reported = ReportedChildPid(status_text.substr(from, line_end - from));
    if (!reported) continue;
    auto init = VerifyNamespaceInit(*reported, child_.pid());
    if (!init) continue;
    JobSenders::Instance().AddJobNamespace(init->pid_namespace);
    std::lock_guard lock(mutex_);
    namespace_init_ = std::move(init->pidfd);
    namespace_init_pid_ = *reported;
    pid_namespace_ = init->pid_namespace;
    // Cancelled while bwrap was still starting: bwrap may have died before its init set its
    // parent-death signal, so the init is killed itself.
    if (stop_reason_) syscall(SYS_pidfd_send_signal, namespace_init_.get(), SIGKILL, nullptr, 0);
    from = line_end + 1;
    return true;
  }
  return false;
}

bool Job::SetUpNetwork() {
  int pidfd;
  pid_t pid;
  {
    std::lock_guard lock(mutex_);
    if (stop_reason_) return false;
    pidfd = namespace_init_.get();
    pid = namespace_init_pid_;
  }
  if (!network_setup_) {
    // Held to count in at the end (the namespace outlives its processes while it is held); a
    // hint only, so a failure here costs nothing but the hint.
    if (count_no_route_) {
      try {
        UniqueFd netns = OpenJobNetworkNamespace(pid, pidfd);
        std::lock_guard lock(mutex_);
        offline_netns_ = std::move(netns);
      } catch (const std::exception&) {
      }
    }
    return true;
  }
  try {
    auto network = network_setup_(pid, pidfd);
    std::lock_guard lock(mutex_);
    network_ = std::move(network);
    return true;
  } catch (const std::exception& e) {
    LogAbout({sandbox_id_, std::nullopt, id_}, spdlog::level::warn, "job {} in sandbox {}: cannot set up its network, so it does not run: {}",
             id_, sandbox_id_, e.what());
    {
      std::lock_guard lock(mutex_);
      failure_ = std::string("its network could not be set up: ") + e.what();
    }
    Cancel(JobEndReason::kFailed);
    return false;
  }
}

std::vector<network::Refusal> Job::refusals() const {
  std::lock_guard lock(mutex_);
  return network_ ? network_->refusals() : std::vector<network::Refusal>{};
}

std::string Job::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

uint64_t Job::no_route_count() const {
  std::lock_guard lock(mutex_);
  return no_route_count_;
}

size_t Job::refused_count() const {
  std::lock_guard lock(mutex_);
  return network_ ? network_->refused_count() : 0;
}

void Job::WhenFinished(FinishedCallback callback) {
  JobEnd end;
  {
    std::lock_guard lock(mutex_);
    if (state_ != JobState::kFinished || !waited_) {
      waiters_.push_back(std::move(callback));
      return;
    }
    end = end_;
  }
  callback(end);
}

JobState Job::state() const {
  std::lock_guard lock(mutex_);
  return state_ == JobState::kFinished && (waited_ || launcher_told_) ? JobState::kFinished : JobState::kRunning;
}

JobEnd Job::end() const {
  std::lock_guard lock(mutex_);
  return end_;
}

int64_t Job::ended_usec() const {
  std::lock_guard lock(mutex_);
  return ended_usec_;
}

std::string Job::captured_streams() const {
  std::lock_guard lock(mutex_);
  return captured_streams_;
}

std::shared_ptr<CapturedOutput> Job::output() const {
  std::lock_guard lock(mutex_);
  return output_;
}

bool Job::output_truncated() const {
  auto captured = output();
  return captured && captured->truncated();
}

std::string Job::ReadOutput(uint64_t offset, uint32_t max_bytes) const {
  auto captured = output();
  return captured ? captured->Read(offset, max_bytes) : std::string();
}

}  // namespace sandboxd
