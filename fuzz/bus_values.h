#pragma once
/// D-Bus values as a hostile client can send them, made from fuzz bytes: strings without NUL,
/// path-like strings, and a{sv} values of every basic type, arrays, dicts and structs. Shared by
/// the targets of the a{sv} option parsers (fuzz_run_options, fuzz_create_options).

#include <fuzzer/FuzzedDataProvider.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <sdbus-c++/sdbus-c++.h>

namespace sandboxd::fuzz {

/// A string as D-Bus carries it: without NUL bytes.
inline std::string Text(FuzzedDataProvider& in) {
  std::string text = in.ConsumeRandomLengthString(64);
  std::erase(text, '\0');
  return text;
}

/// A path-like string: mostly absolute, as a client would send.
inline std::string PathLike(FuzzedDataProvider& in) { return (in.ConsumeBool() ? "/" : "") + Text(in); }

/// A value of a type the fuzz bytes choose; nullopt when sd-bus refuses to hold it (a string
/// that is not UTF-8, an object path or signature of the wrong shape), as the bus would.
inline std::optional<sdbus::Variant> AnyValue(FuzzedDataProvider& in, int depth) {
  try {
    switch (in.ConsumeIntegralInRange(0, depth > 0 ? 16 : 13)) {
      case 0: return sdbus::Variant(in.ConsumeBool());
      case 1: return sdbus::Variant(in.ConsumeIntegral<uint8_t>());
      case 2: return sdbus::Variant(in.ConsumeIntegral<int16_t>());
      case 3: return sdbus::Variant(in.ConsumeIntegral<uint16_t>());
      case 4: return sdbus::Variant(in.ConsumeIntegral<int32_t>());
      case 5: return sdbus::Variant(in.ConsumeIntegral<uint32_t>());
      case 6: return sdbus::Variant(in.ConsumeIntegral<int64_t>());
      case 7: return sdbus::Variant(in.ConsumeIntegral<uint64_t>());
      case 8: return sdbus::Variant(in.ConsumeFloatingPoint<double>());
      case 9: return sdbus::Variant(PathLike(in));
      case 10: return sdbus::Variant(sdbus::ObjectPath(PathLike(in)));
      case 11: return sdbus::Variant(sdbus::Signature(Text(in)));
      case 12: {
        std::vector<std::string> list(in.ConsumeIntegralInRange<size_t>(0, in.ConsumeBool() ? 4 : 300));
        for (auto& item : list) item = PathLike(in);
        return sdbus::Variant(list);
      }
      case 13: {
        std::vector<uint64_t> list(in.ConsumeIntegralInRange<size_t>(0, 4));
        for (auto& item : list) item = in.ConsumeIntegral<uint64_t>();
        return sdbus::Variant(list);
      }
      case 14: {
        std::map<std::string, sdbus::Variant> dict;
        for (size_t n = in.ConsumeIntegralInRange<size_t>(0, 3); n > 0; --n)
          if (auto value = AnyValue(in, depth - 1)) dict.emplace(Text(in), *value);
        return sdbus::Variant(dict);
      }
      case 15: {
        auto inner = AnyValue(in, depth - 1);
        if (!inner) return std::nullopt;
        return sdbus::Variant(sdbus::Struct<sdbus::Variant>(*inner));
      }
      default: return sdbus::Variant(sdbus::Struct<std::string, uint64_t>(Text(in), in.ConsumeIntegral<uint64_t>()));
    }
  } catch (const sdbus::Error&) {
    return std::nullopt;
  }
}

/// An a{sv} of up to 8 entries: each key one of `known` or any text, each value AnyValue's.
/// (The seed generators, fuzz/make-*-options-seeds, encode inputs in exactly this order.)
template <size_t N>
std::map<std::string, sdbus::Variant> AnyOptions(FuzzedDataProvider& in, const char* const (&known)[N]) {
  std::map<std::string, sdbus::Variant> options;
  for (size_t n = in.ConsumeIntegralInRange<size_t>(0, 8); n > 0 && in.remaining_bytes() > 0; --n) {
    std::string key = in.ConsumeBool() ? known[in.ConsumeIntegralInRange<size_t>(0, N - 1)] : Text(in);
    if (auto value = AnyValue(in, 2)) options.insert_or_assign(key, *value);
  }
  return options;
}

}  // namespace sandboxd::fuzz
