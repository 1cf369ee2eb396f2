#pragma once
/// The units sandboxctl's arguments and sandboxd.conf share (DESIGN: DUR and SIZE), parsed one
/// way for both, and the one way both print a size.

#include <cstdint>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace sandboxd::units {

namespace detail {
/// {digits, unit}: nullopt unless `text` is 1..max_digits digits and then only letters.
inline std::optional<std::pair<uint64_t, std::string_view>> Split(std::string_view text, size_t max_digits) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > max_digits) return std::nullopt;
  return std::make_pair(std::stoull(std::string(text.substr(0, digits))), text.substr(digits));
}
}  // namespace detail

/// SIZE: bytes, or a number with a binary unit K, M, G or T ("10M", "2G").
inline std::optional<uint64_t> ParseSize(std::string_view text) {
  auto split = detail::Split(text, 12);
  if (!split) return std::nullopt;
  auto [number, unit] = *split;
  int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : unit == "T" ? 40 : -1;
  if (shift < 0 || number > (UINT64_MAX >> shift)) return std::nullopt;  // past 2^64 bytes, not wrapped
  return number << shift;
}

/// DUR: seconds, or a number with s, m, h or d ("90", "5m", "7d").
inline std::optional<uint64_t> ParseDuration(std::string_view text) {
  auto split = detail::Split(text, 9);
  if (!split) return std::nullopt;
  auto [number, unit] = *split;
  uint64_t per = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : unit == "d" ? 86400 : 0;
  if (per == 0) return std::nullopt;
  return number * per;
}

/// 1536 -> "1.5 KiB", binary units as SIZE takes them.
inline std::string HumanBytes(uint64_t bytes) {
  const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(names)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, names[unit]);
  return text;
}

}  // namespace sandboxd::units
