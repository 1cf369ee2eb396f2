#include "network/made_up_addresses.h"

namespace sandboxd::network {
namespace {

std::array<uint8_t, 4> Bytes(uint32_t address) {
  return {static_cast<uint8_t>(address >> 24), static_cast<uint8_t>(address >> 16), static_cast<uint8_t>(address >> 8),
          static_cast<uint8_t>(address)};
}

}  // namespace

std::optional<std::array<uint8_t, 4>> MadeUpAddresses::AddressOf(const std::string& name) {
  if (auto found = by_name_.find(name); found != by_name_.end()) return Bytes(found->second);
  if (names_.size() == kMaxMadeUpNames) return std::nullopt;
  names_.push_back(name);
  // From .0.1 on: 198.18.0.0 itself reads as a network's address to some programs.
  uint32_t address = kMadeUpNetwork + static_cast<uint32_t>(names_.size());
  by_name_.emplace(name, address);
  return Bytes(address);
}

std::optional<std::string> MadeUpAddresses::NameOf(const std::array<uint8_t, 4>& address) const {
  uint32_t value = uint32_t{address[0]} << 24 | uint32_t{address[1]} << 16 | uint32_t{address[2]} << 8 | address[3];
  if (value <= kMadeUpNetwork || value - kMadeUpNetwork > names_.size()) return std::nullopt;
  return names_[value - kMadeUpNetwork - 1];
}

}  // namespace sandboxd::network
