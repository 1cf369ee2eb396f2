#pragma once
/// D-Bus face of one job (org.sandboxd.Sandbox1.Job): wait, cancel, read captured output,
/// its status and the Finished signal. Only the sandbox's owner (or root) may use it; its
/// signals go to the owner's connections alone (owner_signal.h), never through the generated
/// emit* calls, which broadcast.

#include <sdbus-c++/sdbus-c++.h>

#include <memory>

#include "bus_peers.h"
#include "job.h"
#include "job_adaptor.h"
#include "sandbox.h"

namespace sandboxd {

class JobDBus final : public sdbus::AdaptorInterfaces<org::sandboxd::Sandbox1::Job_adaptor> {
 public:
  JobDBus(sdbus::IConnection& connection, BusPeers& peers, std::shared_ptr<Job> job, std::shared_ptr<Sandbox> sandbox);
  ~JobDBus();

  const std::shared_ptr<Job>& job() const { return job_; }
  /// Both are sent from the job's monitor thread, never from the bus loop.
  void AnnounceFinished(const JobEnd& end);
  void AnnounceOutput(uint64_t captured_bytes);

 private:
  void Wait(sdbus::Result<int32_t, std::string>&& result) override;
  void Cancel() override;
  std::vector<uint8_t> ReadOutput(const uint64_t& offset, const uint32_t& max_bytes) override;

  std::map<std::string, sdbus::Variant> GetStatus() override;

  void CheckCaller();

  BusPeers& peers_;
  std::shared_ptr<Job> job_;
  std::shared_ptr<Sandbox> sandbox_;
};

}  // namespace sandboxd
