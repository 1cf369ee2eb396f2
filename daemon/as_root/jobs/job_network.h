#pragma once
/// The network of a job allowed some hosts (issue 43), from the moment bwrap has made the job's
/// namespace until the job has ended: the namespace set up (allowlist_namespace.h), the
/// job's forwarder (sandboxd-net-forwarder, as the owner) started with its sockets, and what
/// the forwarder reports it refused, read on a thread of this object's, logged once per host
/// and port and kept for the owner (Job.GetStatus "refused"). The forwarder is the owner's
/// process, so its reports are the owner's claims: bounded, checked, shown to the owner only.

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/credentials.h"
#include "base/process.h"
#include "logging/log.h"
#include "network/host_rules.h"
#include "network/refusal.h"
#include "unique_fd.h"

namespace sandboxd {

/// Refusals kept per job (all are logged once each up to the forwarder's own bound).
inline constexpr size_t kMaxKeptRefusals = 100;

struct JobNetworkPlan {
  std::vector<network::HostRule> rules;
  std::string forwarder_path;  ///< sandboxd-net-forwarder
  UserCredentials owner;
  LogSubject subject;
};

class JobNetwork {
 public:
  /// Sets up the namespace of the job whose verified first process is `pid` (`pidfd`) and
  /// starts its forwarder. Throws Error naming what failed: the job must not run then.
  static std::shared_ptr<JobNetwork> Start(const JobNetworkPlan& plan, pid_t pid, int pidfd);
  ~JobNetwork();
  JobNetwork(const JobNetwork&) = delete;
  JobNetwork& operator=(const JobNetwork&) = delete;

  /// Ends the forwarder and takes in the last of its reports; for the job's end, before it is
  /// announced, so that the refusals are all there when the owner asks.
  void Stop();
  std::vector<network::Refusal> refusals() const;
  /// How many distinct refusals there were (the kept ones may be fewer).
  size_t refused_count() const;

 private:
  explicit JobNetwork(LogSubject subject) : subject_(std::move(subject)) {}
  void ReadReports(UniqueFd reports);

  const LogSubject subject_;
  ChildProcess forwarder_;
  UniqueFd life_;
  std::thread reader_;
  mutable std::mutex mutex_;
  std::vector<network::Refusal> refusals_;
  size_t refused_count_ = 0;
};

}  // namespace sandboxd
