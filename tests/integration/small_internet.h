#pragma once
/// A small internet for the network allowlist's tests (issue 43), made of real parts: a network
/// namespace behind a veth pair (the host 10.231.77.1 and fd77::1, the internet 10.231.77.2,
/// 10.231.77.3 and fd77::2), servers in it (data/small_internet.py: HTTP, HTTPS with a
/// certificate made for the test, plain TCP, UDP), listeners on the host's own addresses for
/// the rebinding attacks, and names for all of them in /etc/hosts, which the forwarder reads on
/// the host as any resolver does. Everything is undone by the destructor (the lines it added
/// to /etc/hosts removed, the namespace and its veth deleted, the servers killed).

#include <sys/types.h>

#include <string>

namespace sandboxd::it {

inline constexpr const char* kWebHost = "web.sbxtest.example";        ///< 10.231.77.2 (and fd77::2)
inline constexpr const char* kOtherHost = "other.sbxtest.example";    ///< 10.231.77.3
inline constexpr const char* kLoopbackHost = "rebind-loop.sbxtest.example";  ///< 127.0.0.1: a host listener on 18080
inline constexpr const char* kHostAddressHost = "rebind-host.sbxtest.example";  ///< 10.231.77.1: the host's own, 18081
inline constexpr const char* kWebAddress = "10.231.77.2";
inline constexpr const char* kOtherAddress = "10.231.77.3";

class SmallInternet {
 public:
  SmallInternet() = default;
  SmallInternet(const SmallInternet&) = delete;
  SmallInternet& operator=(const SmallInternet&) = delete;
  ~SmallInternet();
  /// Builds it; false with `why` where it cannot be built.
  bool Start(const std::string& dir, std::string* why);
  /// What reached the servers so far, a line each ("tcp 10.231.77.2:80", "request ...").
  std::string Log() const;
  void ClearLog() const;
  /// The HTTPS server's certificate, readable by jobs (curl --cacert).
  const std::string& certificate() const { return certificate_; }

 private:
  std::string dir_;
  std::string certificate_;
  pid_t internet_ = -1;
  pid_t host_listeners_ = -1;
  bool hosts_added_ = false;
  bool namespace_added_ = false;
};

}  // namespace sandboxd::it
