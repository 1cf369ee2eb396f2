#pragma once
/// The texts the diff tests build their cases from: numbered lines, "line 1\n" on.

#include <string>

namespace sandboxd::testing {

/// "line FROM" .. "line TO", each with `tag` before its newline.
inline std::string Lines(int from, int to, const std::string& tag = "") {
  std::string text;
  for (int i = from; i <= to; ++i) text += "line " + std::to_string(i) + tag + "\n";
  return text;
}

}  // namespace sandboxd::testing
