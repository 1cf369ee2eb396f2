#pragma once
/// What a fuzz target does when the code under test breaks its contract (as opposed to merely
/// refusing an input): names the property that failed and aborts, so that libFuzzer keeps the
/// input as a crash exactly as it does for a sanitizer's report.

#include <cstdio>
#include <cstdlib>

namespace sandboxd::fuzz {

inline void Require(bool holds, const char* property) {
  if (holds) return;
  std::fprintf(stderr, "fuzz property violated: %s\n", property);
  std::abort();
}

}  // namespace sandboxd::fuzz
