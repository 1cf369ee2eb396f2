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

/// A walk of the metadata under directory `top`, a directory at a time (a tree of any depth),
/// that never follows a symlink (it does cross into a file system mounted beneath, which
/// sandboxd's layers never hold). Only for figures: an entry it cannot read is passed over. sandbox/usage.h MeasureTree is the fd-based walk
/// of the same trees for quotas and usage (allocated blocks, each inode once): two walkers,
/// left so because their figures differ (content sizes here, as the archive helper reports).
TreeCount CountTree(const std::string& top);

}  // namespace sandboxd
