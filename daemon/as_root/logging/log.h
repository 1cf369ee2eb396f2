#pragma once
/// Logging: spdlog to the journal when systemd started us (JOURNAL_STREAM is set), to stderr
/// otherwise. A line about a sandboxd or a job is logged with LogAbout, which gives the
/// journal the fields to find it by (`journalctl SANDBOX_ID=…` tells one sandbox's story);
/// on stderr the same line reads as any other.

#include <spdlog/spdlog.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>

namespace sandboxd {

/// `level`: trace, debug, info, warning, error. Throws Error(kInvalidArgument) otherwise.
void SetUpLogging(const std::string& level);

/// Whom a log line is about: journal fields SANDBOX_ID=, SANDBOX_OWNER_UID=, JOB_ID=.
struct LogSubject {
  // Constructors rather than an aggregate: most subjects name a sandbox and its owner only.
  LogSubject() = default;
  LogSubject(std::string sandbox, std::optional<uid_t> who = std::nullopt, std::string job = {})
      : sandbox_id(std::move(sandbox)), owner(who), job_id(std::move(job)) {}

  std::string sandbox_id;
  std::optional<uid_t> owner;
  std::string job_id;
};

/// The subject of lines logged on this thread while it lives (what the journal sink reads).
class ScopedLogSubject {
 public:
  explicit ScopedLogSubject(const LogSubject& subject);
  ~ScopedLogSubject();
  ScopedLogSubject(const ScopedLogSubject&) = delete;
  ScopedLogSubject& operator=(const ScopedLogSubject&) = delete;

 private:
  const LogSubject* previous_;
};

template <typename... Args>
void LogAbout(const LogSubject& subject, spdlog::level::level_enum level, fmt::format_string<Args...> format,
              Args&&... args) {
  ScopedLogSubject scope(subject);
  spdlog::log(level, format, std::forward<Args>(args)...);
}

}  // namespace sandboxd
