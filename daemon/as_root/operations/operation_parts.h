#pragma once
/// What the operations on a sandbox's changes use of the running daemon, by reference (it
/// outlives every call). The faces hold one and call one operation per method.

#include <cstdint>
#include <string>

namespace sandboxd {

class CommitJournal;
class OwnerHelpers;
class CommitRunner;
class Review;
class ReviewLog;
class SightStore;

struct OperationParts {
  Review& review;
  CommitRunner& commits;
  CommitJournal& journal;
  SightStore& sights;
  OwnerHelpers& helpers;  ///< diffs, hunk counts and content checks run as the owner
  ReviewLog& review_log;  ///< the owner's decisions and notes, and the reviews asked for
};

}  // namespace sandboxd
