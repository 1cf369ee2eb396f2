#include "job_dbus.h"

#include "api.h"
#include "dbus_util.h"
#include "object_paths.h"

namespace sandboxd {
namespace {

constexpr uint32_t kMaxReadBytes = 1 << 20;

}  // namespace

JobDBus::JobDBus(sdbus::IConnection& connection, std::shared_ptr<Job> job, std::shared_ptr<sandboxd::Sandbox> sandbox)
    : AdaptorInterfaces(connection, api::JobPath(job->id())), job_(std::move(job)), sandbox_(std::move(sandbox)) {
  registerAdaptor();
}

JobDBus::~JobDBus() { unregisterAdaptor(); }

void JobDBus::CheckCaller() {
  Caller caller = CurrentCaller(getObject());
  if (caller.uid != sandbox_->owner() && !caller.IsRoot())
    throw Error(Code::kAccessDenied, "job " + job_->id() + " belongs to another user's sandbox");
}

void JobDBus::AnnounceFinished(const JobEnd& end) {
  emitFinished(end.exit_status, end.reason);
  emitPropertiesChangedSignal(api::kJobInterface, {"State", "ExitStatus", "Reason", "OutputTruncated"});
}

void JobDBus::Wait(sdbus::Result<int32_t, std::string>&& result) {
  try {
    CheckCaller();
  } catch (...) {
    result.returnError(CurrentExceptionAsDBusError());
    return;
  }
  // Replied from the job's monitor thread when it ends; no thread waits meanwhile.
  auto shared = std::make_shared<sdbus::Result<int32_t, std::string>>(std::move(result));
  job_->WhenFinished([shared](const JobEnd& end) { shared->returnResults(end.exit_status, end.reason); });
}

void JobDBus::Cancel() {
  GuardSync([&] {
    CheckCaller();
    job_->Cancel();
  });
}

std::vector<uint8_t> JobDBus::ReadOutput(const uint64_t& offset, const uint32_t& max_bytes) {
  return GuardSync([&] {
    CheckCaller();
    std::string data = job_->ReadOutput(offset, std::min(max_bytes, kMaxReadBytes));
    return std::vector<uint8_t>(data.begin(), data.end());
  });
}

std::string JobDBus::Id() { return GuardSync([&] { CheckCaller(); return job_->id(); }); }
sdbus::ObjectPath JobDBus::Sandbox() { return GuardSync([&] { CheckCaller(); return sdbus::ObjectPath(api::SandboxPath(sandbox_->id())); }); }
std::vector<std::string> JobDBus::Argv() { return GuardSync([&] { CheckCaller(); return job_->argv(); }); }
std::string JobDBus::State() { return GuardSync([&] { CheckCaller(); return std::string(ToString(job_->state())); }); }
int32_t JobDBus::ExitStatus() { return GuardSync([&] { CheckCaller(); return job_->end().exit_status; }); }
std::string JobDBus::Reason() { return GuardSync([&] { CheckCaller(); return job_->end().reason; }); }
uint64_t JobDBus::OutputCap() { return GuardSync([&] { CheckCaller(); return Job::kOutputCap; }); }
bool JobDBus::OutputTruncated() { return GuardSync([&] { CheckCaller(); return job_->output_truncated(); }); }

}  // namespace sandboxd
