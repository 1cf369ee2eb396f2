#pragma once
/// Selectors as the unit tests write them: "PATH:N" or "PATH:N.M" a hunk or part of PATH,
/// anything else the change (or directory) PATH. Only tests read text so; the bus carries
/// selectors structured (selector.h).

#include <string>
#include <vector>

#include "selector.h"

namespace sandboxd {

inline std::vector<api::Selector> SelectorsOf(const std::vector<std::string>& texts) {
  std::vector<api::Selector> selectors;
  for (const auto& text : texts) {
    auto hunk = api::ParseHunkSelector(text);
    selectors.push_back(hunk ? *hunk : api::Selector{text});
  }
  return selectors;
}

}  // namespace sandboxd
