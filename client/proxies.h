#pragma once
/// sandboxctl's proxies over the generated bindings, one per interface. They deliberately never
/// call registerProxy(): that would subscribe to the interfaces' signals (an AddMatch round trip
/// each), and no verb listens to them; method calls work without it.

#include <sdbus-c++/sdbus-c++.h>

#include "api.h"
#include "job_proxy.h"
#include "manager_proxy.h"
#include "sandbox_proxy.h"

namespace sandboxctl {

class ManagerProxy final : public sdbus::ProxyInterfaces<org::sandboxd::Sandbox1::Manager_proxy> {
 public:
  explicit ManagerProxy(sdbus::IConnection& connection)
      : ProxyInterfaces(connection, sandboxd::api::kBusName, sandboxd::api::kManagerPath) {
  }
  ~ManagerProxy() = default;
  /// The untyped proxy, for calls that need a timeout or raw messages.
  sdbus::IProxy& raw() { return getProxy(); }

 private:
  void onSandboxAdded(const sdbus::ObjectPath&, const std::string&, const std::string&) override {}
  void onSandboxRemoved(const sdbus::ObjectPath&, const std::string&) override {}
  void onSandboxStateChanged(const sdbus::ObjectPath&, const std::string&, const std::string&) override {}
};

class SandboxProxy final : public sdbus::ProxyInterfaces<org::sandboxd::Sandbox1::Sandbox_proxy> {
 public:
  SandboxProxy(sdbus::IConnection& connection, const std::string& path)
      : ProxyInterfaces(connection, sandboxd::api::kBusName, path) {
  }
  ~SandboxProxy() = default;
  /// The untyped proxy, for calls that need a timeout or raw messages.
  sdbus::IProxy& raw() { return getProxy(); }

 private:
  void onChangeSetChanged(const uint32_t&) override {}
  void onProgress(const std::string&, const std::string&, const uint64_t&, const uint64_t&, const uint64_t&, const uint64_t&) override {}
  void onChangesSeen(const std::vector<sdbus::Struct<uint32_t, std::string, std::string>>&, const uint32_t&, const bool&) override {}
  void onReviewRequested(const std::string&, const int64_t&) override {}
};

class JobProxy final : public sdbus::ProxyInterfaces<org::sandboxd::Sandbox1::Job_proxy> {
 public:
  JobProxy(sdbus::IConnection& connection, const std::string& path)
      : ProxyInterfaces(connection, sandboxd::api::kBusName, path) {
  }
  ~JobProxy() = default;
  /// The untyped proxy, for calls that need a timeout or raw messages.
  sdbus::IProxy& raw() { return getProxy(); }

 private:
  void onFinished(const int32_t&, const std::string&) override {}
  void onOutputAvailable(const uint64_t&) override {}
};

}  // namespace sandboxctl
