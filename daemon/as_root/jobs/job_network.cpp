#include "jobs/job_network.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <set>

#include "base/errors.h"
#include "jobs/allowlist_namespace.h"
#include "quote_path.h"

namespace sandboxd {
namespace {

constexpr int kDnsFd = 3;
constexpr int kReportFd = 4;
constexpr int kRefusingFd = 5;
constexpr int kFirstListenerFd = 6;

std::pair<UniqueFd, UniqueFd> Pipe(const char* what) {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) ThrowErrno(std::string("cannot create the pipe for ") + what);
  return {UniqueFd(ends[0]), UniqueFd(ends[1])};
}

}  // namespace

std::shared_ptr<JobNetwork> JobNetwork::Start(const JobNetworkPlan& plan, pid_t pid, int pidfd) {
  std::vector<uint16_t> ports;
  for (const auto& rule : plan.rules) {
    std::vector<uint16_t> of_rule = rule.port ? std::vector<uint16_t>{*rule.port}
                                              : std::vector<uint16_t>(std::begin(network::kDefaultPorts), std::end(network::kDefaultPorts));
    for (uint16_t port : of_rule)
      if (std::find(ports.begin(), ports.end(), port) == ports.end()) ports.push_back(port);
  }
  UniqueFd netns = OpenJobNetworkNamespace(pid, pidfd);
  AllowlistSockets sockets = PrepareAllowlistNamespace(netns.get(), ports);
  auto [life_read, life_write] = Pipe("a job's forwarder");
  auto [report_read, report_write] = Pipe("a job's forwarder's reports");

  SpawnOptions options;
  options.path = plan.forwarder_path;
  options.argv = {plan.forwarder_path, "--dns-fd", std::to_string(kDnsFd), "--report-fd", std::to_string(kReportFd),
                  "--refusing-fd", std::to_string(kRefusingFd)};
  options.fds = {{0, life_read.get()}, {kDnsFd, sockets.dns.get()}, {kReportFd, report_write.get()}, {kRefusingFd, sockets.refusing.get()}};
  int next = kFirstListenerFd;
  for (const auto& [fd, port] : sockets.listeners) {
    options.argv.push_back("--listen");
    options.argv.push_back(std::to_string(next) + ":" + std::to_string(port));
    options.fds.emplace_back(next++, fd.get());
  }
  // As the owner: the forwarder connects where the owner could, never with root's rights.
  options.user = plan.owner;
  // Ends with the thread that starts it, the job's monitor, if nothing else ends it first.
  options.die_with_parent = true;
  auto network = std::shared_ptr<JobNetwork>(new JobNetwork(plan.subject));
  network->forwarder_ = Spawn(options);
  report_write.reset();
  // The rules on the pipe, not the command line, which every user can read.
  std::string line = network::FormatHostRules(plan.rules) + "\n";
  if (write(life_write.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    ThrowErrno("cannot hand the job's forwarder its hosts");
  network->life_ = std::move(life_write);
  network->reader_ = std::thread([raw = network.get(), reports = std::move(report_read)]() mutable { raw->ReadReports(std::move(reports)); });
  return network;
}

JobNetwork::~JobNetwork() { Stop(); }

void JobNetwork::Stop() {
  life_.reset();
  if (forwarder_.running()) {
    forwarder_.Kill(SIGKILL);
    forwarder_.Wait();
  }
  if (reader_.joinable()) reader_.join();
}

void JobNetwork::ReadReports(UniqueFd reports) {
  std::set<std::pair<std::string, uint16_t>> seen;
  std::string pending;
  char buffer[4096];
  for (;;) {
    ssize_t got = read(reports.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return;
    pending.append(buffer, static_cast<size_t>(got));
    size_t end;
    while ((end = pending.find('\n')) != std::string::npos) {
      auto refusal = network::ReadRefusalLine(std::string_view(pending).substr(0, end));
      pending.erase(0, end + 1);
      if (!refusal || !seen.insert({refusal->host, refusal->port}).second) continue;
      LogAbout(subject_, spdlog::level::info, "job {} in sandbox {}: refused {}", subject_.job_id, subject_.sandbox_id,
               api::EscapeControlBytes(network::DescribeRefusal(*refusal)));
      std::lock_guard lock(mutex_);
      ++refused_count_;
      if (refusals_.size() < kMaxKeptRefusals) refusals_.push_back(std::move(*refusal));
    }
    // A line longer than any report is no report: dropped rather than kept growing.
    if (pending.size() > network::kMaxRefusalLine) pending.clear();
  }
}

std::vector<network::Refusal> JobNetwork::refusals() const {
  std::lock_guard lock(mutex_);
  return refusals_;
}

size_t JobNetwork::refused_count() const {
  std::lock_guard lock(mutex_);
  return refused_count_;
}

}  // namespace sandboxd
