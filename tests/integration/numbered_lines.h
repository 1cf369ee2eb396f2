#pragma once
/// The text the review and commit tests edit: 30 numbered lines ("line 1" ... "line 30"), some
/// replaced; edits 13 lines apart are hunks of their own, 4 apart one hunk of several parts.

#include <map>
#include <string>

namespace sandboxd::it {

inline std::string Lines(const std::map<int, std::string>& replaced = {}) {
  std::string text;
  for (int i = 1; i <= 30; ++i) {
    auto it = replaced.find(i);
    text += (it == replaced.end() ? "line " + std::to_string(i) : it->second) + "\n";
  }
  return text;
}

/// How many times `needle` occurs in `text`.
inline size_t CountOf(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

}  // namespace sandboxd::it
