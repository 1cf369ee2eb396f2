#pragma once
/// Git's name for a file's content, its blob id (the SHA-1 of "blob <size>\0" followed by the
/// bytes), as a diff's `index OLD..NEW` line gives it: `git apply` checks a binary patch against
/// these, so they must be git's own. Reads the content a piece at a time through TextSource, so
/// a file of any size is named without holding it in memory, and never reads past the size the
/// source had when it was opened (a file that grows meanwhile is named as it was then).

#include <cstddef>
#include <string>
#include <string_view>

#include "text/text_source.h"

namespace sandboxd {

/// The id git writes for a side that is not there (/dev/null), all zeros.
constexpr std::string_view kAbsentBlobId = "0000000000000000000000000000000000000000";
/// git's id of the empty blob.
constexpr std::string_view kEmptyBlobId = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

/// The 40 lowercase hex digits of `content`'s blob id. Throws Error(kFailed) when the content
/// cannot be read whole (a file that shrank since it was opened).
std::string BlobId(const TextSource& content);

}  // namespace sandboxd
