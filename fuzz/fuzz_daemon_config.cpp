// Hostile input: the text of /etc/sandboxd/sandboxd.conf or a drop-in (a careless edit, a file
// from a package, a half-written copy), read by ApplyConfigText through inih. Beyond not
// crashing: a refusal is Error(kInvalidArgument) naming the file and a line that exists; an
// accepted text leaves only values in their documented ranges (no refused HiddenPaths entry in
// the list); applying it twice changes nothing more; and the configuration it gives, written
// back as one file of plain assignments, reads back to the same configuration.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/errors.h"
#include "check.h"
#include "config/daemon_config.h"
#include "jobs/hidden_paths.h"
#include "jobs/job_limits.h"

namespace sandboxd::fuzz {
namespace {

// Every member of Config; a new key needs its line here and in Written().
bool Same(const Config& a, const Config& b) {
  return a.jobs.hidden_paths == b.jobs.hidden_paths && a.jobs.hide_other_homes == b.jobs.hide_other_homes &&
         a.storage.archive_compression_level == b.storage.archive_compression_level &&
         a.storage.cap_bytes == b.storage.cap_bytes && a.storage.default_quota_bytes == b.storage.default_quota_bytes &&
         a.storage.default_ttl_sec == b.storage.default_ttl_sec && a.storage.max_quota_bytes == b.storage.max_quota_bytes &&
         a.limits.max_sandboxes_per_user == b.limits.max_sandboxes_per_user &&
         a.limits.max_roots_per_sandbox == b.limits.max_roots_per_sandbox &&
         a.limits.max_running_jobs_per_user == b.limits.max_running_jobs_per_user &&
         a.limits.max_calls_in_flight_per_user == b.limits.max_calls_in_flight_per_user &&
         a.limits.stalled_reader_timeout_sec == b.limits.stalled_reader_timeout_sec &&
         a.limits.max_captured_output_per_user == b.limits.max_captured_output_per_user &&
         a.limits.default_memory_max == b.limits.default_memory_max && a.limits.default_tasks_max == b.limits.default_tasks_max;
}

/// A size or duration in its largest whole unit, so that it fits the digits SIZE and DUR allow.
std::string InUnits(uint64_t value, std::initializer_list<std::pair<const char*, uint64_t>> units) {
  for (auto [name, factor] : units)
    if (value != 0 && value % factor == 0) return std::to_string(value / factor) + name;
  return std::to_string(value);
}
std::string Size(uint64_t bytes) { return InUnits(bytes, {{"T", 1ull << 40}, {"G", 1ull << 30}, {"M", 1ull << 20}, {"K", 1ull << 10}}); }
std::string Duration(uint64_t seconds) { return InUnits(seconds, {{"d", 86400}, {"h", 3600}, {"m", 60}}); }
/// A job limit's default: 0 is none.
std::string Limit(uint64_t limit, std::string (*write)(uint64_t)) { return limit == 0 ? "infinity" : write(limit); }
std::string Count(uint64_t count) { return std::to_string(count); }

/// `config` as an administrator would write it out whole.
std::string Written(const Config& config) {
  std::string text = "[Jobs]\nHiddenPaths=\n";
  for (const auto& path : config.jobs.hidden_paths) text += "HiddenPaths=" + path + "\n";
  text += std::string("HideOtherHomes=") + (config.jobs.hide_other_homes ? "yes" : "no") + "\n";
  text += "[Storage]\nArchiveCompressionLevel=" + std::to_string(config.storage.archive_compression_level) + "\n";
  text += "Cap=" + Size(config.storage.cap_bytes) + "\n";
  text += "DefaultQuota=" + Size(config.storage.default_quota_bytes) + "\n";
  text += "DefaultTtl=" + Duration(config.storage.default_ttl_sec) + "\n";
  text += "MaxQuota=" + Size(config.storage.max_quota_bytes) + "\n";
  text += "[Limits]\nMaxSandboxesPerUser=" + std::to_string(config.limits.max_sandboxes_per_user) + "\n";
  text += "MaxRootsPerSandbox=" + std::to_string(config.limits.max_roots_per_sandbox) + "\n";
  text += "MaxRunningJobsPerUser=" + std::to_string(config.limits.max_running_jobs_per_user) + "\n";
  text += "MaxCallsInFlightPerUser=" + std::to_string(config.limits.max_calls_in_flight_per_user) + "\n";
  text += "StalledReaderTimeout=" + Duration(config.limits.stalled_reader_timeout_sec) + "\n";
  text += "MaxCapturedOutputPerUser=" + Size(config.limits.max_captured_output_per_user) + "\n";
  text += "DefaultMemoryMax=" + Limit(config.limits.default_memory_max, Size) + "\n";
  text += "DefaultTasksMax=" + Limit(config.limits.default_tasks_max, Count) + "\n";
  return text;
}

bool InRanges(const Config& config) {
  for (const auto& path : config.jobs.hidden_paths)
    if (HiddenPathSyntaxError(path, /*allow_home=*/true)) return false;
  const auto& s = config.storage;
  const auto& l = config.limits;
  return s.archive_compression_level >= 1 && s.archive_compression_level <= 19 &&
         (s.default_quota_bytes == 0 || s.default_quota_bytes >= (1 << 20)) &&
         (s.max_quota_bytes == 0 || s.max_quota_bytes >= (1 << 20)) && l.max_sandboxes_per_user >= 1 &&
         l.max_sandboxes_per_user <= 1024 && l.max_roots_per_sandbox >= 1 && l.max_roots_per_sandbox <= 64 &&
         l.max_running_jobs_per_user >= 1 && l.max_calls_in_flight_per_user >= 1 && l.stalled_reader_timeout_sec >= 1 &&
         (l.default_memory_max == 0 || l.default_memory_max >= kMinJobMemoryMax) &&
         (l.default_tasks_max == 0 || l.default_tasks_max >= kMinJobTasksMax);
}

/// "FILE:LINE: problem", with LINE one of the text's lines (or the one after its last).
bool NamesFileAndLine(const std::string& message, std::string_view file, std::string_view text) {
  if (!message.starts_with(std::string(file) + ":")) return false;
  size_t digits_start = file.size() + 1;
  size_t digits_end = message.find_first_not_of("0123456789", digits_start);
  if (digits_end == digits_start || digits_end == std::string::npos || message.compare(digits_end, 2, ": ") != 0) return false;
  if (digits_end - digits_start > 9) return false;
  size_t line = std::stoul(message.substr(digits_start, digits_end - digits_start));
  size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  return line >= 1 && line <= lines;
}

}  // namespace
}  // namespace sandboxd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sandboxd;
  using fuzz::Require;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Config config;
  try {
    ApplyConfigText(text, "fuzz.conf", config);
  } catch (const Error& e) {
    Require(e.code() == Code::kInvalidArgument, "a bad file is refused as an invalid argument");
    Require(fuzz::NamesFileAndLine(e.what(), "fuzz.conf", text), "a refusal names the file and one of its lines");
    return 0;
  }
  Require(fuzz::InRanges(config), "an accepted file leaves only values in their documented ranges");
  Config twice = config;
  ApplyConfigText(text, "fuzz.conf", twice);
  Require(fuzz::Same(twice, config), "applying an accepted file again changes nothing");
  Config reread;
  ApplyConfigText(fuzz::Written(config), "written.conf", reread);
  Require(fuzz::Same(reread, config), "the configuration written back reads back the same");
  return 0;
}
