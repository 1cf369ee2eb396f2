#pragma once
/// Drawing inside a RapidCheck property for the display-equals-commit test: choices whose odds
/// do not depend on RapidCheck's size (gen::inRange narrows its range towards the minimum as
/// the size falls, which at small sizes made every choice its first), and that shrink towards
/// their first value, so each choice's first option must be its simplest. The size is scaled
/// in explicitly where it should count (how many entries and steps a case has).

#include <rapidcheck.h>

#include <vector>

namespace sandboxd::display {

/// A number in [low, high), uniform at any size; shrinks towards `low`.
inline int Pick(int low, int high) { return *rc::gen::resize(100, rc::gen::inRange(low, high)); }

/// One of `choices` (not empty), uniform at any size; shrinks towards the first.
template <typename T>
const T& PickOf(const std::vector<T>& choices) {
  return choices[static_cast<size_t>(Pick(0, static_cast<int>(choices.size())))];
}

/// True one time in `times`; shrinks towards false.
inline bool OneIn(int times) { return Pick(0, times) == times - 1; }

}  // namespace sandboxd::display
