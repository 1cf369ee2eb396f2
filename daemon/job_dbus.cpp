#include "job_dbus.h"

#include "api.h"
#include "dbus_util.h"
#include "object_paths.h"
#include "owner_signal.h"

namespace sandboxd {
namespace {

constexpr uint32_t kMaxReadBytes = 1 << 20;

}  // namespace

JobDBus::JobDBus(sdbus::IConnection& connection, BusPeers& peers, std::shared_ptr<Job> job, std::shared_ptr<Sandbox> sandbox)
    : AdaptorInterfaces(connection, api::JobPath(job->id())), peers_(peers), job_(std::move(job)), sandbox_(std::move(sandbox)) {
  registerAdaptor();
}

JobDBus::~JobDBus() { unregisterAdaptor(); }

void JobDBus::CheckCaller() {
  Caller caller = CurrentCaller(getObject());
  if (caller.uid != sandbox_->owner() && !caller.IsRoot())
    throw Error(Code::kAccessDenied, "job " + job_->id() + " belongs to another user's sandbox");
}

// Not emitFinished/emitOutputAvailable: those broadcast to every connection on the bus.
void JobDBus::AnnounceFinished(const JobEnd& end) {
  EmitToOwner(getObject(), peers_, sandbox_->owner(), INTERFACE_NAME, "Finished", static_cast<int32_t>(end.exit_status), end.reason);
}

void JobDBus::AnnounceOutput(uint64_t captured_bytes) {
  EmitToOwner(getObject(), peers_, sandbox_->owner(), INTERFACE_NAME, "OutputAvailable", captured_bytes);
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

std::map<std::string, sdbus::Variant> JobDBus::GetStatus() {
  return GuardSync([&] {
    CheckCaller();
    JobEnd end = job_->end();
    return std::map<std::string, sdbus::Variant>{
        {"id", sdbus::Variant(job_->id())},
        {"sandbox", sdbus::Variant(sdbus::ObjectPath(api::SandboxPath(sandbox_->id())))},
        {"argv", sdbus::Variant(job_->argv())},
        {"state", sdbus::Variant(std::string(ToString(job_->state())))},
        {"exit_status", sdbus::Variant(static_cast<int32_t>(end.exit_status))},
        {"reason", sdbus::Variant(end.reason)},
        {"output_cap", sdbus::Variant(static_cast<uint64_t>(Job::kOutputCap))},
        {"output_truncated", sdbus::Variant(job_->output_truncated())},
    };
  });
}

}  // namespace sandboxd
