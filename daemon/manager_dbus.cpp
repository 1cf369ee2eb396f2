#include "manager_dbus.h"

#include <spdlog/spdlog.h>
#include <sys/statvfs.h>

#include "api.h"
#include "config.h"
#include "dbus_util.h"
#include "log.h"
#include "hidden_paths.h"
#include "job_options.h"
#include "object_paths.h"
#include "quota_layer.h"
#include "units.h"
#include "sandbox_dbus.h"
#include "service.h"
#include "usage.h"

namespace sandboxd {
namespace {

/// A smaller quota would be eaten by the directories a job's first file needs.
constexpr uint64_t kMinQuotaBytes = 1 << 20;
constexpr uint64_t kMaxTtlSec = 10ull * 366 * 86400;

std::string JoinRoots(const std::vector<std::string>& roots) {
  std::string text;
  for (const auto& root : roots) text += (text.empty() ? "" : " ") + root;
  return text;
}

}  // namespace

ManagerDBus::ManagerDBus(Service& service, sdbus::IConnection& connection)
    : AdaptorInterfaces(connection, api::kManagerPath), service_(service) {
  registerAdaptor();
}

ManagerDBus::~ManagerDBus() { unregisterAdaptor(); }

void ManagerDBus::CheckQuotaCanBeMade(uint64_t quota_bytes) const {
  // The quota comes from the caller: a hard one is an image of that size, which must fit in an
  // ext4 file and mean something on the disk that holds it (a larger one limits nothing).
  uint64_t most = kMaxQuotaLayerBytes;
  std::string what = units::HumanBytes(kMaxQuotaLayerBytes) + ", the most a sandbox's quota can be";
  struct statvfs disk;
  if (service_.registry().hard_quotas() && statvfs(service_.layout().state_dir().c_str(), &disk) == 0 &&
      static_cast<uint64_t>(disk.f_blocks) * disk.f_frsize < most) {
    most = static_cast<uint64_t>(disk.f_blocks) * disk.f_frsize;
    what = "the file system that holds the sandboxes' changes (" + units::HumanBytes(most) + ")";
  }
  if (quota_bytes > most)
    throw Error(Code::kInvalidArgument, "a quota of " + units::HumanBytes(quota_bytes) + " is larger than " + what +
                                            "; ask for at most " + units::HumanBytes(most));
}

void ManagerDBus::CreateSandbox(sdbus::Result<sdbus::ObjectPath>&& result, std::vector<std::string> roots,
                                std::map<std::string, sdbus::Variant> options, uint64_t flags) {
  Caller caller;
  if (!TakeCaller(getObject(), result, caller) || !service_.AdmitCall(caller, result)) return;
  service_.RunForCaller(caller.uid, [this, result = std::move(result), roots = std::move(roots), options = std::move(options), flags,
                        caller]() mutable {
    ReplyWith(result, [&]() -> sdbus::ObjectPath {
      CheckFlags(flags, api::kFlagAllowInteractive);
      CreateRequest request;
      request.roots = roots;
      request.quota_bytes = service_.config().storage.default_quota_bytes;  // unless asked otherwise
      request.ttl_sec = service_.config().storage.default_ttl_sec;
      for (const auto& [key, value] : options) {
        if (key == "name") {
          if (value.peekValueType() != "s") throw Error(Code::kInvalidArgument, "option 'name' must be a string");
          request.name = value.get<std::string>();
        } else if (key == "network") {
          if (value.peekValueType() != "b") throw Error(Code::kInvalidArgument, "option 'network' must be a boolean");
          request.network = value.get<bool>();
        } else if (key == "shared") {
          if (value.peekValueType() != "b") throw Error(Code::kInvalidArgument, "option 'shared' must be a boolean");
          request.shared = value.get<bool>();
        } else if (key == "hide") {
          if (value.peekValueType() != "as") throw Error(Code::kInvalidArgument, "option 'hide' must be an array of strings");
          request.hide = value.get<std::vector<std::string>>();
          if (request.hide.size() > kMaxHiddenPaths)
            throw Error(Code::kInvalidArgument, "more than " + std::to_string(kMaxHiddenPaths) + " hidden paths for a sandbox");
          for (const auto& path : request.hide)
            if (auto why = HiddenPathSyntaxError(path, /*allow_home=*/false))
              throw Error(Code::kInvalidPath, "cannot hide " + path + " in a new sandbox: " + *why);
        } else if (key == "ttl_sec") {
          if (value.peekValueType() != "t") throw Error(Code::kInvalidArgument, "option 'ttl_sec' must be a uint64");
          request.ttl_sec = value.get<uint64_t>();
          if (request.ttl_sec == 0 || request.ttl_sec > kMaxTtlSec)
            throw Error(Code::kInvalidArgument, "a ttl of " + std::to_string(request.ttl_sec) + " s is not between 1 s and 10 years");
        } else if (key == "quota_bytes") {
          if (value.peekValueType() != "t") throw Error(Code::kInvalidArgument, "option 'quota_bytes' must be a uint64");
          request.quota_bytes = value.get<uint64_t>();
          if (request.quota_bytes < kMinQuotaBytes)
            throw Error(Code::kInvalidArgument, "a quota of " + std::to_string(request.quota_bytes) +
                                                    " bytes is below the least a sandbox can work with, 1 MiB");
        } else {
          throw Error(Code::kInvalidArgument, "unknown option '" + key + "' for CreateSandbox");
        }
      }
      if (request.quota_bytes != 0) CheckQuotaCanBeMade(request.quota_bytes);
      UserCredentials owner = LookupUser(caller.uid);
      auto authorize = [&](const std::vector<std::string>& canonical) {
        // A hidden path that holds a root would refuse every job of the sandbox: refused now,
        // looked up as the owner (a job's lookup), never as root.
        CheckHiddenPathsHoldNoRoot(request.hide, canonical, owner);
        service_.authority().Check(caller, api::kActionCreate, {{"roots", JoinRoots(canonical)}},
                                   flags & api::kFlagAllowInteractive, "create a sandbox over " + JoinRoots(canonical));
        // Asked once, here: every job of such a sandbox has the network without asking again.
        if (request.network)
          service_.authority().Check(caller, api::kActionNetwork, {{"roots", JoinRoots(canonical)}, {"verb", "create"}},
                                     flags & api::kFlagAllowInteractive,
                                     "create a sandbox over " + JoinRoots(canonical) + " whose jobs have network access");
      };
      auto sandbox = service_.registry().Create(request, owner, authorize);
      LogAbout({sandbox->id(), sandbox->owner()}, spdlog::level::info, "sandbox {} ({}) created by uid {} over {}", sandbox->id(),
               sandbox->name(), caller.uid,
                   JoinRoots(sandbox->roots()));
      service_.PublishSandbox(sandbox);
      return sdbus::ObjectPath(api::SandboxPath(sandbox->id()));
    });
  });
}

sdbus::ObjectPath ManagerDBus::GetSandbox(const std::string& id_or_name) {
  return GuardSync([&] {
    Caller caller = CurrentCaller(getObject());
    auto sandbox = service_.registry().Find(id_or_name, caller.uid);
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
    for (const auto& sandbox : service_.registry().List(caller.uid))
      list.emplace_back(sandbox->id(), sandbox->name(), static_cast<uint32_t>(sandbox->owner()), sandbox->state(), sandbox->roots(),
                        sdbus::ObjectPath(api::SandboxPath(sandbox->id())));
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
  Caller caller;
  if (!TakeCaller(getObject(), result, caller) || !service_.AdmitCall(caller, result)) return;
  service_.RunForCaller(caller.uid, [this, result = std::move(result), flags, caller]() mutable {
    ReplyWith(result, [&] {
      CheckFlags(flags, api::kFlagAllowInteractive);
      service_.authority().Check(caller, api::kActionManage, {{"verb", "gc"}}, flags & api::kFlagAllowInteractive,
                                 "remove expired sandboxes and, over the storage cap, the largest suspended ones");
      std::vector<sdbus::Struct<std::string, std::string>> removed;
      for (const auto& removal : service_.CollectGarbage()) removed.emplace_back(removal.id, removal.why);
      return removed;
    });
  });
}

void ManagerDBus::GetUsage(sdbus::Result<std::vector<UsageRow>>&& result, uint64_t flags) {
  Caller caller;
  if (!TakeCaller(getObject(), result, caller) || !service_.AdmitCall(caller, result)) return;
  service_.RunForCaller(caller.uid, [this, result = std::move(result), flags, caller]() mutable {
    ReplyWith(result, [&] {
      CheckFlags(flags, api::kFlagAllowInteractive | api::kFlagEveryUser);
      bool everyone = flags & api::kFlagEveryUser;
      if (everyone)
        service_.authority().Check(caller, api::kActionManage, {{"verb", "usage"}}, flags & api::kFlagAllowInteractive,
                                   "see how much storage every user's sandboxes use");
      std::vector<UsageRow> rows;
      // Root's List is every sandbox; anyone else's is their own, unless allowed to see all.
      for (const auto& sandbox : service_.registry().List(everyone ? 0 : caller.uid)) {
        SandboxUsage usage = MeasureSandbox(*sandbox);
        rows.emplace_back(sandbox->id(), sandbox->name(), static_cast<uint32_t>(sandbox->owner()), sandbox->state(),
                          usage.changes.bytes, usage.changes.entries, usage.archive_bytes, usage.kept_bytes);
      }
      return rows;
    });
  });
}

}  // namespace sandboxd
