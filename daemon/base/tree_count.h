#pragma once
/// How big a tree is, as suspend's archive will hold it: for the totals of its progress, taken
/// before the work (upper_archive.cpp, and suspend over several roots, suspension.cpp).

#include <cstdint>
#include <string>

namespace sandboxd {

struct TreeCount {
  uint64_t entries = 0;  ///< the top directory and everything beneath it
  uint64_t bytes = 0;    ///< the sizes of its regular files
};

/// A walk of the metadata under directory `top` that never follows a symlink (nor leaves the
/// file system). Only for figures: an entry it cannot read is passed over.
TreeCount CountTree(const std::string& top);

}  // namespace sandboxd
