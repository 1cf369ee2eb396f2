#pragma once
/// D-Bus face of the sandbox registry (org.sandboxd.Sandbox1.Manager): converts types, builds
/// the Caller, authorizes, calls the domain and maps errors. No domain logic here.

#include <sdbus-c++/sdbus-c++.h>

#include "base/credentials.h"
#include "bus/caller.h"
#include "bus/face_parts.h"
#include "sandbox/sandbox_registry.h"
#include "manager_adaptor.h"

namespace sandboxd {

class ManagerDBus final : public sdbus::AdaptorInterfaces<org::sandboxd::Sandbox1::Manager_adaptor, sdbus::Properties_adaptor> {
 public:
  ManagerDBus(const ManagerFaceParts& parts, sdbus::IConnection& connection);
  ~ManagerDBus();

 private:
  void CreateSandbox(sdbus::Result<sdbus::ObjectPath>&& result, std::vector<std::string> roots,
                     std::map<std::string, sdbus::Variant> options, uint64_t flags) override;
  sdbus::ObjectPath GetSandbox(const std::string& id_or_name) override;
  std::vector<sdbus::Struct<std::string, std::string, uint32_t, std::string, std::vector<std::string>, sdbus::ObjectPath>> ListSandboxes() override;
  std::string Version() override;
  using UsageRow = sdbus::Struct<std::string, std::string, uint32_t, std::string, uint64_t, uint64_t, uint64_t, uint64_t>;
  void GetUsage(sdbus::Result<std::vector<UsageRow>>&& result, uint64_t flags) override;
  void CollectGarbage(sdbus::Result<std::vector<sdbus::Struct<std::string, std::string>>>&& result, uint64_t flags) override;

  /// The shape of every method here but the quick lookups: take the caller at once (on the bus
  /// thread), then in a worker run `body(caller)`, replying with what it returns or throws.
  template <typename... Outs, typename Body>
  void InWorker(sdbus::Result<Outs...>&& result, Body&& body);
  /// CreateSandbox's arguments with the configured defaults ([Storage] DefaultQuota=, DefaultTTL=,
  /// MaxQuota=); refuses a quota that could not be made.
  CreateRequest CreateRequestFrom(std::vector<std::string> roots, const std::map<std::string, sdbus::Variant>& options) const;
  /// Asked by the registry with the canonical roots, before anything is made: polkit's create
  /// action, and its manage action for a quota above MaxQuota=, its network action for a
  /// sandbox with the network.
  void AuthorizeCreate(const Caller& caller, const CreateRequest& request, const std::vector<std::string>& canonical,
                       const UserCredentials& owner, bool interactive);

  ManagerFaceParts parts_;
};

}  // namespace sandboxd
