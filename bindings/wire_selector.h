#pragma once
/// A selector as it travels on the bus: (path as a wire name, hunk, part), with 0 for "none".
/// Structured so that no name is ever read for a hunk number (selector.h); sandboxd and
/// sandboxctl convert at their D-Bus edges only.

#include <sdbus-c++/sdbus-c++.h>

#include <cstdint>
#include <string>
#include <vector>

#include "selector.h"

namespace sandboxd::api {

using WireSelector = sdbus::Struct<std::string, uint32_t, uint32_t>;

/// `selector` for the bus; its path is a wire name already (sandboxctl keeps names as the change
/// set gives them; the daemon reads them back with NameFromWire).
inline WireSelector ToWire(const Selector& selector) {
  return WireSelector{selector.path, static_cast<uint32_t>(selector.hunk.value_or(0)), static_cast<uint32_t>(selector.part)};
}

inline std::vector<WireSelector> ToWire(const std::vector<Selector>& selectors) {
  std::vector<WireSelector> wire;
  wire.reserve(selectors.size());
  for (const auto& selector : selectors) wire.push_back(ToWire(selector));
  return wire;
}

}  // namespace sandboxd::api
