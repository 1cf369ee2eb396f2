#pragma once
/// D-Bus face of one job (org.sandboxd.Sandbox1.Job): wait, cancel, read captured output,
/// its status and the Finished signal. Only whoever may act on the job's sandbox may use it
/// (its owner, root, or a caller allowed polkit's manage action: sandbox_access.h), checked in
/// a worker for every method. Its signals go to the owner's connections alone (owner_signal.h),
/// never through the generated emit* calls, which broadcast.

#include <sdbus-c++/sdbus-c++.h>

#include <memory>

#include "bus/face_parts.h"
#include "bus/caller.h"
#include "job_adaptor.h"
#include "jobs/job.h"

namespace sandboxd {

class Sandbox;


class JobDBus final : public sdbus::AdaptorInterfaces<org::sandboxd::Sandbox1::Job_adaptor> {
 public:
  JobDBus(const JobFaceParts& parts, sdbus::IConnection& connection, std::shared_ptr<Job> job, std::shared_ptr<Sandbox> sandbox);
  ~JobDBus();

  const std::shared_ptr<Job>& job() const { return job_; }
  /// Both are sent from the job's monitor thread, never from the bus loop.
  void AnnounceFinished(const JobEnd& end);
  void AnnounceOutput(uint64_t captured_bytes);

 private:
  void Wait(sdbus::Result<int32_t, std::string>&& result) override;
  void Cancel(sdbus::Result<>&& result) override;
  void ReadOutput(sdbus::Result<std::vector<uint8_t>>&& result, uint64_t offset, uint32_t max_bytes) override;
  void GetStatus(sdbus::Result<std::map<std::string, sdbus::Variant>>&& result) override;

  /// Takes the caller on the bus thread, then in a worker authorizes it for `verb` on the
  /// job's sandbox and replies with what `body()` returns or throws. The worker holds the job
  /// and its sandbox, never this object (which may be pruned meanwhile).
  template <typename... Outs, typename Body>
  void InWorker(sdbus::Result<Outs...>&& result, const char* verb, Body&& body);

  JobFaceParts parts_;
  std::shared_ptr<Job> job_;
  std::shared_ptr<Sandbox> sandbox_;
};

}  // namespace sandboxd
