#include "bus/manager_dbus.h"

#include <spdlog/spdlog.h>

#include "api.h"
#include "runtime/file_clock.h"
#include "bus/call_gate.h"
#include "bus/create_options.h"
#include "bus/dbus_util.h"
#include "bus/object_table.h"
#include "bus/polkit.h"
#include "bus/sandbox_announcer.h"
#include "bus/sandbox_dbus.h"
#include "config.h"
#include "config/daemon_config.h"
#include "jobs/hidden_paths.h"
#include "jobs/host_sockets.h"
#include "lifecycle/garbage_collector.h"
#include "logging/log.h"
#include "object_paths.h"
#include "sandbox/layout.h"
#include "sandbox/quota_layer.h"
#include "sandbox/sandbox_registry.h"
#include "sandbox/usage.h"
#include "units.h"

namespace sandboxd {

ManagerDBus::ManagerDBus(const ManagerFaceParts& parts, sdbus::IConnection& connection)
    : AdaptorInterfaces(connection, api::kManagerPath), parts_(parts) {
  registerAdaptor();
  parts_.announcer.Attach(getObject());
}

ManagerDBus::~ManagerDBus() {
  parts_.announcer.Detach();
  unregisterAdaptor();
}

template <typename... Outs, typename Body>
void ManagerDBus::InWorker(sdbus::Result<Outs...>&& result, Body&& body) {
  parts_.calls.Serve(getObject(), std::move(result), std::forward<Body>(body));
}

CreateRequest ManagerDBus::CreateRequestFrom(std::vector<std::string> roots, const std::map<std::string, sdbus::Variant>& options) const {
  CreateOptions parsed = ParseCreateOptions(options);
  CreateRequest request;
  request.roots = std::move(roots);
  if (parsed.name) request.name = *parsed.name;
  request.network = parsed.network;
  request.shared = parsed.shared;
  request.made_by_try = parsed.made_by_try;
  request.scratch_home = parsed.scratch_home;
  request.hide = std::move(parsed.hide);
  request.allow_sockets = std::move(parsed.allow_sockets);
  request.allow_hosts = std::move(parsed.allow_hosts);
  if (!request.allow_hosts.empty() && parts_.layout.user_mode())
    throw Error(Code::kInvalidArgument, "allowed hosts need the system sandboxd: a user's own cannot set up a job's network (use the system one, or --network)");
  request.quota_bytes = parsed.quota_bytes.value_or(parts_.config.storage.default_quota_bytes);
  request.ttl_sec = parsed.ttl_sec.value_or(parts_.config.storage.default_ttl_sec);
  // Under [Storage] MaxQuota= no sandbox is without a quota unless an administrator says so.
  if (!parsed.quota_bytes && request.quota_bytes == 0) request.quota_bytes = parts_.config.storage.max_quota_bytes;
  if (request.quota_bytes != 0) CheckQuotaCanBeMade(request.quota_bytes, parts_.registry.hard_quotas(), parts_.layout.state_dir());
  return request;
}

void ManagerDBus::AuthorizeCreate(const Caller& caller, const CreateRequest& request, const std::vector<std::string>& canonical,
                                  const UserCredentials& owner, bool interactive) {
  const std::string roots = JoinRoots(canonical);
  // A hidden path that holds a root would refuse every job of the sandbox: refused now, looked
  // up as the owner (a job's lookup), never as root.
  CheckHiddenPathsHoldNoRoot(request.hide, canonical, owner);
  parts_.authority.Check(caller, api::kActionCreate, {{"roots", roots}}, interactive, "create a sandbox over " + roots);
  // The store is shared by every user: more than the administrator's maximum is theirs to grant.
  const uint64_t max_quota = parts_.config.storage.max_quota_bytes;
  if (max_quota != 0 && request.quota_bytes > max_quota)
    parts_.authority.Check(caller, api::kActionManage, {{"roots", roots}, {"verb", "quota"}, {"quota_bytes", std::to_string(request.quota_bytes)}},
                           interactive,
                           "create a sandbox over " + roots + " with a quota of " + units::HumanBytes(request.quota_bytes) +
                               ", above [Storage] MaxQuota=" + units::HumanBytes(max_quota));
  // Asked once, here: every job of such a sandbox has the network without asking again.
  if (request.network)
    parts_.authority.Check(caller, api::kActionNetwork, {{"roots", roots}, {"verb", "create"}}, interactive,
                           "create a sandbox over " + roots + " whose jobs have network access");
  // Hosts the administrator lets anyone allow ([Network] AllowedHosts=) need no one's say.
  if (!request.allow_hosts.empty() && !network::Covers(parts_.config.network.allowed_hosts, request.allow_hosts)) {
    const std::string hosts = network::FormatHostRules(request.allow_hosts);
    parts_.authority.Check(caller, api::kActionNetwork, {{"roots", roots}, {"verb", "create"}, {"hosts", hosts}}, interactive,
                           "create a sandbox over " + roots + " whose jobs reach " + hosts);
  }
}

void ManagerDBus::CreateSandbox(sdbus::Result<sdbus::ObjectPath>&& result, std::vector<std::string> roots,
                                std::map<std::string, sdbus::Variant> options, uint64_t flags) {
  InWorker(std::move(result), [this, roots = std::move(roots), options = std::move(options), flags](const Caller& caller) mutable {
    const int64_t asked_ns = FileClockFineNowNs();
    CheckFlags(flags, api::kFlagAllowInteractive);
    CreateRequest request = CreateRequestFrom(std::move(roots), options);
    request.asked_ns = asked_ns;
    UserCredentials owner = LookupUser(caller.uid);
    // Each must be a socket the owner can reach now; kept as found (symlinks resolved).
    for (auto& path : request.allow_sockets) path = ResolveAllowedSocket(path, owner, "a new sandbox");
    auto sandbox = parts_.registry.Create(request, owner, [&](const std::vector<std::string>& canonical) {
      AuthorizeCreate(caller, request, canonical, owner, flags & api::kFlagAllowInteractive);
    });
    LogAbout({sandbox->id(), sandbox->owner()}, spdlog::level::info, "sandbox {} ({}) created by uid {} over {}", sandbox->id(),
             sandbox->name(), caller.uid, JoinRoots(sandbox->roots()));
    parts_.objects.PublishSandbox(sandbox);
    parts_.announcer.Added(*sandbox);
    return sdbus::ObjectPath(api::SandboxPath(sandbox->id()));
  });
}

sdbus::ObjectPath ManagerDBus::GetSandbox(const std::string& id_or_name) {
  return GuardSync([&] {
    Caller caller = CurrentCaller(getObject());
    auto sandbox = parts_.registry.Find(id_or_name, caller.uid);
    // Another user's sandbox is "not found" rather than "denied": its existence is not the
    // caller's business. A caller allowed polkit's manage action is no exception: a lookup is
    // not an act on a sandbox (the acts are on its object, where manage is asked, with the
    // sandbox named), names are only unique per owner, and asking polkit on every lookup of
    // one's own sandbox would make each sandboxctl verb a polkit round trip. Root sees all.
    if (!sandbox) throw Error(Code::kNotFound, "no sandbox '" + id_or_name + "' known");
    return sdbus::ObjectPath(api::SandboxPath(sandbox->id()));
  });
}

std::vector<sdbus::Struct<std::string, std::string, uint32_t, std::string, std::vector<std::string>, sdbus::ObjectPath>> ManagerDBus::ListSandboxes() {
  return GuardSync([&] {
    Caller caller = CurrentCaller(getObject());
    std::vector<sdbus::Struct<std::string, std::string, uint32_t, std::string, std::vector<std::string>, sdbus::ObjectPath>> list;
    for (const auto& sandbox : parts_.registry.List(caller.uid))
      list.emplace_back(sandbox->id(), sandbox->name(), static_cast<uint32_t>(sandbox->owner()),
                        std::string(ToString(sandbox->gate().state())), sandbox->roots(), sdbus::ObjectPath(api::SandboxPath(sandbox->id())));
    return list;
  });
}

std::string ManagerDBus::Version() {
  // The one member that answers every caller, jobs included: sdbus-c++ 1.2 does not tell a
  // property getter which message it serves (getCurrentlyProcessedMessage() is null there, so
  // CurrentCaller refused everyone), and a constant version string lets no one act on anything.
  // Whatever a caller must not see or do is a method, where the caller is known.
  return std::string(SANDBOXD_VERSION);
}

void ManagerDBus::CollectGarbage(sdbus::Result<std::vector<sdbus::Struct<std::string, std::string>>>&& result, uint64_t flags) {
  InWorker(std::move(result), [this, flags](const Caller& caller) {
    CheckFlags(flags, api::kFlagAllowInteractive);
    parts_.authority.Check(caller, api::kActionManage, {{"verb", "gc"}}, flags & api::kFlagAllowInteractive,
                           "remove expired sandboxes and, over the storage cap, the largest suspended ones");
    std::vector<sdbus::Struct<std::string, std::string>> removed;
    for (const auto& removal : parts_.garbage.Collect()) removed.emplace_back(removal.id, removal.why);
    return removed;
  });
}

void ManagerDBus::GetUsage(sdbus::Result<std::vector<UsageRow>>&& result, uint64_t flags) {
  InWorker(std::move(result), [this, flags](const Caller& caller) {
    CheckFlags(flags, api::kFlagAllowInteractive | api::kFlagEveryUser);
    bool everyone = flags & api::kFlagEveryUser;
    if (everyone)
      parts_.authority.Check(caller, api::kActionManage, {{"verb", "usage"}}, flags & api::kFlagAllowInteractive,
                             "see how much storage every user's sandboxes use");
    std::vector<UsageRow> rows;
    // Root's List is every sandbox; anyone else's is their own, unless allowed to see all.
    for (const auto& sandbox : parts_.registry.List(everyone ? 0 : caller.uid)) {
      SandboxUsage usage = MeasureSandbox(*sandbox);
      rows.emplace_back(sandbox->id(), sandbox->name(), static_cast<uint32_t>(sandbox->owner()), std::string(ToString(sandbox->gate().state())),
                        usage.changes.bytes, usage.changes.entries, usage.archive_bytes, usage.kept_bytes);
    }
    return rows;
  });
}

}  // namespace sandboxd
