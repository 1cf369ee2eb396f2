#pragma once
/// Logging set-up: spdlog to the journal when systemd started us (JOURNAL_STREAM is set), to
/// stderr otherwise.

#include <string>

namespace sandboxd {

/// `level`: trace, debug, info, warning, error. Throws Error(kInvalidArgument) otherwise.
void SetUpLogging(const std::string& level);

}  // namespace sandboxd
