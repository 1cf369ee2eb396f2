// Hostile input: a SIZE or DUR as typed after --quota, --memory-max, --ttl or --timeout, or written
// in sandboxd.conf (Cap=, DefaultQuota=, DefaultTtl=, StalledReaderTimeout=), all parsed by
// units.h. Beyond not crashing: a text is accepted exactly when it is 1..N digits and a known unit
// and its value fits in 64 bits, it then stands for exactly that many bytes or seconds (a value
// wrapped past 2^64 would turn a huge quota into a tiny or arbitrary one), and every accepted
// value is written back by its largest unit to a text that reads the same.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "check.h"
#include "units.h"

namespace sandboxd::fuzz {
namespace {

struct Unit {
  std::string_view name;
  uint64_t factor;
};

struct Grammar {
  const Unit* units;
  size_t unit_count;
  size_t max_digits;
  std::optional<uint64_t> (*parse)(std::string_view);
};

constexpr Unit kSizeUnits[] = {{"", 1}, {"K", 1ull << 10}, {"M", 1ull << 20}, {"G", 1ull << 30}, {"T", 1ull << 40}};
constexpr Unit kDurationUnits[] = {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
constexpr Grammar kSize{kSizeUnits, std::size(kSizeUnits), 12, units::ParseSize};
constexpr Grammar kDuration{kDurationUnits, std::size(kDurationUnits), 9, units::ParseDuration};

/// What DESIGN's grammar says `text` stands for, computed without units.h: nullopt for a text
/// that must be refused.
std::optional<uint64_t> Meaning(const Grammar& grammar, std::string_view text) {
  size_t digits = 0;
  uint64_t number = 0;
  for (; digits < text.size() && text[digits] >= '0' && text[digits] <= '9'; ++digits)
    if (digits < grammar.max_digits) number = number * 10 + static_cast<uint64_t>(text[digits] - '0');
  if (digits == 0 || digits > grammar.max_digits) return std::nullopt;
  for (size_t u = 0; u < grammar.unit_count; ++u) {
    if (text.substr(digits) != grammar.units[u].name) continue;
    uint64_t value;
    if (__builtin_mul_overflow(number, grammar.units[u].factor, &value)) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

/// `value` with the largest unit that divides it.
std::string Written(const Grammar& grammar, uint64_t value) {
  for (size_t u = grammar.unit_count; u-- > 0;)
    if (value != 0 && value % grammar.units[u].factor == 0)
      return std::to_string(value / grammar.units[u].factor) + std::string(grammar.units[u].name);
  return std::to_string(value);
}

void CheckGrammar(const Grammar& grammar, std::string_view text) {
  std::optional<uint64_t> parsed = grammar.parse(text);
  std::optional<uint64_t> meant = Meaning(grammar, text);
  Require(parsed.has_value() == meant.has_value(), "a text is accepted exactly when the grammar allows it and it fits");
  if (!parsed) return;
  Require(*parsed == *meant, "an accepted text stands for exactly its number times its unit");
  Require(grammar.parse(Written(grammar, *parsed)) == parsed, "an accepted value written back reads the same");
}

}  // namespace
}  // namespace sandboxd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sandboxd;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz::CheckGrammar(fuzz::kSize, text);
  fuzz::CheckGrammar(fuzz::kDuration, text);
  if (auto bytes = units::ParseSize(text)) fuzz::Require(units::HumanBytes(*bytes).ends_with("B"), "a size prints with its unit");
  return 0;
}
