#pragma once
/// Fixed names of enum values (the contract's words, D-Bus error names), kept as one table per
/// enum and looked up both ways here, so each table is the only place a name is spelt.

#include <optional>
#include <string_view>
#include <utility>

namespace sandboxd {

template <typename Enum, typename Table>
std::string_view NameOf(const Table& table, Enum value, std::string_view fallback) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return fallback;
}

template <typename Enum, typename Table>
std::optional<Enum> ValueOf(const Table& table, std::string_view name) {
  for (const auto& [v, n] : table)
    if (n == name) return v;
  return std::nullopt;
}

}  // namespace sandboxd
