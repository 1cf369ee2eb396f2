#pragma once
/// The addresses a job's name server answers with: one made up per allowed name the job looks
/// up, from 198.18.0.0/15 (RFC 2544's benchmarking range, never routed on the internet). Every
/// IPv4 address is local in an allowlisted job's network namespace, so a connection to one of
/// these reaches the forwarder, which knows by the address which name the job asked for, and
/// connects to that name itself; an address the job found any other way names no host and is
/// refused.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sandboxd::network {

inline constexpr uint32_t kMadeUpNetwork = 0xc6120000;  // 198.18.0.0
inline constexpr int kMadeUpPrefix = 15;
/// Names a job may look up before the name server answers SERVFAIL (each is kept for the job's
/// life, so that an address once given always means the same name).
inline constexpr size_t kMaxMadeUpNames = 4096;

class MadeUpAddresses {
 public:
  /// The address of `name` (canonical), made up on first use; nullopt once kMaxMadeUpNames
  /// names have one.
  std::optional<std::array<uint8_t, 4>> AddressOf(const std::string& name);
  /// The name an address was made up for; nullopt for any other address.
  std::optional<std::string> NameOf(const std::array<uint8_t, 4>& address) const;

 private:
  std::map<std::string, uint32_t> by_name_;
  std::vector<std::string> names_;  ///< by offset from the first address, minus one
};

}  // namespace sandboxd::network
