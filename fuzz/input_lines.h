#pragma once
/// How the targets that take several strings split their input: newline-separated, at most 16.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace sandboxd::fuzz {

inline std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size() && lines.size() < 16) {
    size_t end = std::min(text.find('\n', start), text.size());
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace sandboxd::fuzz
