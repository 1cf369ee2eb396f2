#include "bus/job_dbus.h"

#include <spdlog/spdlog.h>

#include "api.h"
#include "bus/bus_peers.h"
#include "bus/call_gate.h"
#include "bus/dbus_util.h"
#include "bus/owner_signal.h"
#include "bus/polkit.h"
#include "bus/sandbox_access.h"
#include "logging/log.h"
#include "object_paths.h"
#include "sandbox/sandbox.h"

namespace sandboxd {
namespace {

constexpr uint32_t kMaxReadBytes = 1 << 20;

/// Returns if `caller` may do `verb` on `job` of `sandbox`; logs a manager's act.
void Authorize(Authority& authority, const Caller& caller, const Job& job, const Sandbox& sandbox, const std::string& verb) {
  ActTarget target{sandbox.id(), sandbox.owner(), sandbox.roots(), "job " + job.id() + " of sandbox " + sandbox.id()};
  // Job methods take no flags: never interactive.
  if (AuthorizeAct(authority, caller, target, verb, false) == Access::kManager)
    LogAbout({sandbox.id(), sandbox.owner(), job.id()}, spdlog::level::info, "job {} of sandbox {} of uid {}: {} by uid {} (polkit action {})",
             job.id(), sandbox.id(), sandbox.owner(), verb, caller.uid, api::kActionManage);
}

}  // namespace

JobDBus::JobDBus(const JobFaceParts& parts, sdbus::IConnection& connection, std::shared_ptr<Job> job, std::shared_ptr<Sandbox> sandbox)
    : AdaptorInterfaces(connection, api::JobPath(job->id())), parts_(parts), job_(std::move(job)), sandbox_(std::move(sandbox)) {
  registerAdaptor();
}

JobDBus::~JobDBus() { unregisterAdaptor(); }

template <typename... Outs, typename Body>
void JobDBus::InWorker(sdbus::Result<Outs...>&& result, const char* verb, Body&& body) {
  parts_.calls.Serve(getObject(), std::move(result),
                     [authority = &parts_.authority, job = job_, sandbox = sandbox_, body = std::forward<Body>(body), verb](const Caller& caller) {
                       Authorize(*authority, caller, *job, *sandbox, verb);
                       return body(*job);
                     });
}

// Not emitFinished/emitOutputAvailable: those broadcast to every connection on the bus.
void JobDBus::AnnounceFinished(const JobEnd& end) {
  EmitToOwner(getObject(), parts_.peers, sandbox_->owner(), INTERFACE_NAME, "Finished", static_cast<int32_t>(end.exit_status), std::string(ToString(end.reason)));
}

void JobDBus::AnnounceOutput(uint64_t captured_bytes) {
  EmitToOwner(getObject(), parts_.peers, sandbox_->owner(), INTERFACE_NAME, "OutputAvailable", captured_bytes);
}

void JobDBus::Wait(sdbus::Result<int32_t, std::string>&& result) {
  Caller caller;
  if (!TakeCaller(getObject(), result, caller)) return;  // refuses callers inside jobs
  if (!parts_.calls.Admit(caller, result)) return;
  parts_.calls.RunForCaller(caller.uid, [authority = &parts_.authority, job = job_, sandbox = sandbox_, caller, result = std::move(result)]() mutable {
    try {
      Authorize(*authority, caller, *job, *sandbox, "wait");
    } catch (...) {
      ReturnCurrentError(result);
      return;
    }
    // Replied from the job's monitor thread when it ends; no thread waits meanwhile.
    auto shared = std::make_shared<sdbus::Result<int32_t, std::string>>(std::move(result));
    job->WhenFinished([shared](const JobEnd& end) {
      shared->returnResults(end.exit_status, std::string(ToString(end.reason)));
      WakeBusLoop();
    });
  });
}

void JobDBus::Cancel(sdbus::Result<>&& result) {
  InWorker(std::move(result), "cancel", [](Job& job) { job.Cancel(); });
}

void JobDBus::ReadOutput(sdbus::Result<std::vector<uint8_t>>&& result, uint64_t offset, uint32_t max_bytes) {
  InWorker(std::move(result), "read-output", [offset, max_bytes](Job& job) {
    std::string data = job.ReadOutput(offset, std::min(max_bytes, kMaxReadBytes));
    return std::vector<uint8_t>(data.begin(), data.end());
  });
}

void JobDBus::GetStatus(sdbus::Result<std::map<std::string, sdbus::Variant>>&& result) {
  InWorker(std::move(result), "get-status", [sandbox_id = sandbox_->id()](Job& job) {
    JobEnd end = job.end();
    std::vector<sdbus::Struct<std::string, uint16_t, std::string>> refused;
    for (auto& refusal : job.refusals()) refused.emplace_back(std::move(refusal.host), refusal.port, std::move(refusal.reason));
    return std::map<std::string, sdbus::Variant>{
        {"id", sdbus::Variant(job.id())},
        {"sandbox", sdbus::Variant(sdbus::ObjectPath(api::SandboxPath(sandbox_id)))},
        {"argv", sdbus::Variant(job.argv())},
        {"state", sdbus::Variant(std::string(ToString(job.state())))},
        {"exit_status", sdbus::Variant(static_cast<int32_t>(end.exit_status))},
        {"reason", sdbus::Variant(std::string(ToString(end.reason)))},
        {"output_cap", sdbus::Variant(static_cast<uint64_t>(Job::kOutputCap))},
        {"output_truncated", sdbus::Variant(job.output_truncated())},
        {"started_usec", sdbus::Variant(static_cast<uint64_t>(job.created_usec()))},
        {"ended_usec", sdbus::Variant(static_cast<uint64_t>(job.ended_usec()))},
        {"captured", sdbus::Variant(job.captured_streams())},
        {"refused", sdbus::Variant(refused)},
        {"refused_count", sdbus::Variant(static_cast<uint32_t>(job.refused_count()))},
        {"no_route_count", sdbus::Variant(static_cast<uint64_t>(job.no_route_count()))},
        {"failure", sdbus::Variant(job.failure())},
    };
  });
}

}  // namespace sandboxd
