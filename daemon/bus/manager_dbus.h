#pragma once
/// D-Bus face of the sandbox registry (org.sandboxd.Sandbox1.Manager): converts types, builds
/// the Caller, authorizes, calls the domain and maps errors. No domain logic here.

#include <sdbus-c++/sdbus-c++.h>

#include "bus/face_parts.h"
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

  /// Refuses (kInvalidArgument) a quota larger than could be made or than the disk holds.
  void CheckQuotaCanBeMade(uint64_t quota_bytes) const;

  ManagerFaceParts parts_;
};

}  // namespace sandboxd
