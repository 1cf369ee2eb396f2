#pragma once
/// D-Bus face of one sandbox (org.sandboxd.Sandbox1.Sandbox): every method checks
/// that the caller owns the sandbox (or is root) before anything else; slow work runs on
/// workers and replies through sdbus::Result.

#include <sdbus-c++/sdbus-c++.h>

#include <memory>

#include "sandbox.h"
#include "sandbox_adaptor.h"

namespace sandboxd {

class Service;
struct Caller;

class SandboxDBus final : public sdbus::AdaptorInterfaces<org::sandboxd::Sandbox1::Sandbox_adaptor> {
 public:
  SandboxDBus(Service& service, sdbus::IConnection& connection, std::shared_ptr<Sandbox> sandbox);
  ~SandboxDBus();

  const std::shared_ptr<Sandbox>& sandbox() const { return sandbox_; }
  /// Scans and emits ChangeSetChanged with the current number of changes.
  void AnnounceChangeSet();

 private:
  void Run(sdbus::Result<sdbus::ObjectPath>&& result, std::vector<std::string> argv, std::string cwd,
           std::map<std::string, std::string> env, std::map<std::string, sdbus::UnixFd> fds,
           std::map<std::string, sdbus::Variant> options, uint64_t flags) override;
  void GetChanges(sdbus::Result<std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::map<std::string, sdbus::Variant>>>>&& result) override;
  void Diff(sdbus::Result<>&& result, std::vector<std::string> selectors, sdbus::UnixFd output) override;
  void Commit(sdbus::Result<uint32_t>&& result, uint64_t flags) override;
  void Discard(sdbus::Result<>&& result) override;
  void Destroy(sdbus::Result<>&& result) override;

  std::map<std::string, sdbus::Variant> GetInfo() override;

  /// The caller, if allowed to act on this sandbox; throws AccessDenied otherwise.
  Caller AuthorizedCaller();

  Service& service_;
  std::shared_ptr<Sandbox> sandbox_;
};

}  // namespace sandboxd
