#pragma once
/// Records of one sandbox keyed by {root, path} (decisions, sights), looked up for the changes of
/// a streaming scan, which come in that key order (changeset_scanner.h: byte order of path,
/// root by root). The records are read from the store a page at a time, in the same order, as
/// the lookups move on: what is held grows with the page, never with the change set, and the
/// store's lock is taken for one page read only (a listing may wait on a slow reader for
/// minutes; every other call needs the store meanwhile).

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sandboxd {

using RecordKey = std::pair<size_t, std::string>;  ///< {root, path}; std::string compares bytes, as SQLite's BINARY

template <typename Value>
class OrderedLookup {
 public:
  using Page = std::vector<std::pair<RecordKey, Value>>;
  /// Up to `limit` records with keys at or after `from`, in key order.
  using Fetch = std::function<Page(const RecordKey& from, size_t limit)>;

  explicit OrderedLookup(Fetch fetch, size_t page_size = 2048) : fetch_(std::move(fetch)), page_size_(page_size) {}

  /// Drops the records read: the next Find reads afresh. For records written while they are
  /// looked up (sights a settling stores behind a listing): what was read may lack them.
  void Forget() {
    page_.clear();
    next_ = 0;
    exhausted_ = false;
    asked_.reset();
  }

  /// The record at `key`, or nullptr. Keys are best asked in order: one before the last asked
  /// (a directory a partial commit takes along comes right before the change beneath it that
  /// needs it, after siblings such as "dir-1": commit_selection.h) starts the pages afresh.
  const Value* Find(const RecordKey& key) {
    if (asked_ && key < *asked_) {
      page_.clear();
      next_ = 0;
      exhausted_ = false;
    }
    asked_ = key;
    while (true) {
      while (next_ < page_.size() && page_[next_].first < key) ++next_;
      if (next_ < page_.size()) return page_[next_].first == key ? &page_[next_].second : nullptr;
      if (exhausted_) return nullptr;
      // The next page starts at the key asked, not after the last record read: a scan that asks
      // for a few keys far apart (the settling of a job that changed a few files of a million)
      // reads a page near each, not every record in between.
      page_ = fetch_(key, page_size_);
      next_ = 0;
      exhausted_ = page_.size() < page_size_;
    }
  }

 private:
  Fetch fetch_;
  size_t page_size_;
  Page page_;
  size_t next_ = 0;
  bool exhausted_ = false;
  std::optional<RecordKey> asked_;
};

}  // namespace sandboxd
