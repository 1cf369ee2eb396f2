#pragma once
/// git's binary patch, as `git diff --binary` writes it (git's diff.c, emit_binary_diff):
/// "GIT binary patch", then the new content whole ("literal SIZE") and the old content whole, so
/// that the patch applies both ways (`git apply -R` too). Each content is deflated with zlib at
/// git's level (Z_BEST_SPEED, core.compression's default) and written in lines of at most 52
/// bytes in git's base 85 (base85.c), each line opening with its byte count ('A'..'Z' for 1 to
/// 26, 'a'..'z' for 27 to 52), the whole ended by an empty line. Always literals, never git's
/// deltas: `git apply` takes either, and a literal is read once, a piece at a time, so a file
/// of any size goes out without being held in memory. Writes nothing of its own accord: what it
/// makes goes to the caller's sink, in pieces.

#include <functional>
#include <string>
#include <string_view>

#include "text/text_source.h"

namespace sandboxd {

/// Receives a binary patch piece by piece, in order.
using PatchSink = std::function<void(std::string_view)>;

/// `bytes` in git's base 85: 5 characters for each 4 bytes, big-endian, a last shorter group
/// padded with zero bytes (the line's count says how many bytes are real).
std::string Base85(std::string_view bytes);

/// One line of a binary hunk: the count letter, the base 85 of `bytes` (1 to 52 of them), "\n".
std::string BinaryPatchLine(std::string_view bytes);

/// "literal SIZE", the lines of `content` deflated, and the empty line that ends a hunk. Throws
/// Error(kFailed) when the content cannot be read whole (a file that shrank since it was opened).
void WriteLiteral(const TextSource& content, const PatchSink& out);

/// The binary patch that makes `new_content` of `old_content` (either may be empty: an added
/// or a deleted file), from its "GIT binary patch" line to its last empty line.
void WriteBinaryPatch(const TextSource& old_content, const TextSource& new_content, const PatchSink& out);

}  // namespace sandboxd
