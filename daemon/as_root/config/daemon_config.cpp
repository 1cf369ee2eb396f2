#include "config/daemon_config.h"

#include <ini.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "base/errors.h"
#include "base/fs_util.h"
#include "jobs/hidden_paths.h"
#include "jobs/job_limits.h"
#include "units.h"

namespace sandboxd {
namespace {

/// A bad value; the parser adds the file and line.
class ValueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr const char* kBlanks = " \t\r\n\v\f";

std::vector<std::string> SplitWhitespace(std::string_view value) {
  std::vector<std::string> words;
  size_t start = 0;
  while (true) {
    // Every kind of blank separates, as inih trims them all: "~/.ssh\f" must not be kept as a
    // name that hides nothing.
    start = value.find_first_not_of(kBlanks, start);
    if (start == std::string_view::npos) return words;
    size_t end = value.find_first_of(kBlanks, start);
    if (end == std::string_view::npos) end = value.size();
    words.emplace_back(value.substr(start, end - start));
    start = end;
  }
}

/// systemd's booleans, case-insensitively.
bool ParseBoolean(std::string_view key, std::string_view value) {
  std::string lower(value);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* yes : {"1", "yes", "y", "true", "t", "on"})
    if (lower == yes) return true;
  for (const char* no : {"0", "no", "n", "false", "f", "off"})
    if (lower == no) return false;
  throw ValueError(std::string(key) + "=" + std::string(value) + " is not a boolean (use yes or no)");
}

void ApplyHiddenPaths(Config& config, std::string_view value) {
  auto& list = config.jobs.hidden_paths;
  if (value.empty()) {  // systemd style: an empty assignment resets the list
    list.clear();
    return;
  }
  for (auto& entry : SplitWhitespace(value)) {
    if (auto why = HiddenPathSyntaxError(entry, /*allow_home=*/true))
      throw ValueError("HiddenPaths entry \"" + entry + "\" is refused: " + *why);
    if (std::find(list.begin(), list.end(), entry) == list.end()) list.push_back(std::move(entry));
  }
}

void ApplyAllowedHosts(Config& config, std::string_view value) {
  auto& list = config.network.allowed_hosts;
  if (value.empty()) {  // as HiddenPaths=: an empty assignment resets the list
    list.clear();
    return;
  }
  std::vector<network::HostRule> rules;
  try {
    // Separated by commas, as --allow-host takes them, or by blanks.
    std::string joined;
    for (const auto& word : SplitWhitespace(value)) joined += word + ",";
    rules = network::ParseHostRules(joined);
  } catch (const Error& error) {
    throw ValueError(std::string("AllowedHosts: ") + error.what());
  }
  for (auto& rule : rules)
    if (std::find(list.begin(), list.end(), rule) == list.end()) list.push_back(std::move(rule));
  if (list.size() > network::kMaxHostRules)
    throw ValueError("AllowedHosts lists more than " + std::to_string(network::kMaxHostRules) + " hosts");
}

void ApplyHideOtherHomes(Config& config, std::string_view value) {
  config.jobs.hide_other_homes = value.empty() ? JobsConfig{}.hide_other_homes : ParseBoolean("HideOtherHomes", value);
}

/// A whole number from `least` to `most` (`what` names it in the refusal: "a count").
size_t ParseWhole(std::string_view key, std::string_view value, size_t least, size_t most, const char* what) {
  bool digits = !value.empty() && value.size() <= 9 && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  size_t number = digits ? std::stoul(std::string(value)) : 0;
  if (!digits || number < least || number > most)
    throw ValueError(std::string(key) + "=" + std::string(value) + " is not " + what + " from " + std::to_string(least) + " to " +
                     std::to_string(most));
  return number;
}

void ApplyArchiveCompressionLevel(Config& config, std::string_view value) {
  if (value.empty()) {
    config.storage.archive_compression_level = StorageConfig{}.archive_compression_level;
    return;
  }
  config.storage.archive_compression_level = static_cast<int>(ParseWhole("ArchiveCompressionLevel", value, 1, 19, "a zstd level"));
}

/// SIZE and DUR as sandboxctl takes them (units.h); "" is 0.
uint64_t ParseSize(std::string_view key, std::string_view value) {
  if (value.empty()) return 0;
  if (auto bytes = units::ParseSize(value)) return *bytes;
  throw ValueError(std::string(key) + "=" + std::string(value) + " is not a size (a number with K, M, G or T, e.g. 50G)");
}

uint64_t ParseDuration(std::string_view key, std::string_view value) {
  if (value.empty()) return 0;
  if (auto seconds = units::ParseDuration(value)) return *seconds;
  throw ValueError(std::string(key) + "=" + std::string(value) + " is not a duration (seconds, or with s, m, h or d, e.g. 7d)");
}

void ApplyCap(Config& config, std::string_view value) { config.storage.cap_bytes = ParseSize("Cap", value); }
void ApplyDefaultQuota(Config& config, std::string_view value) {
  config.storage.default_quota_bytes = ParseSize("DefaultQuota", value);
  if (config.storage.default_quota_bytes != 0 && config.storage.default_quota_bytes < (1 << 20))
    throw ValueError("DefaultQuota=" + std::string(value) + " is below the least a sandbox can work with, 1M");
}
void ApplyMaxQuota(Config& config, std::string_view value) {
  config.storage.max_quota_percent = 0;
  if (!value.empty() && value.back() == '%') {
    std::string_view number = value.substr(0, value.size() - 1);
    unsigned percent = 0;
    bool digits = !number.empty() && number.size() <= 3 && number.find_first_not_of("0123456789") == std::string_view::npos;
    if (digits) percent = static_cast<unsigned>(std::stoul(std::string(number)));
    if (!digits || percent == 0 || percent > 100)
      throw ValueError("MaxQuota=" + std::string(value) + " is not a percentage from 1% to 100% of the state's file system");
    config.storage.max_quota_percent = percent;
    config.storage.max_quota_bytes = 0;
    return;
  }
  config.storage.max_quota_bytes = ParseSize("MaxQuota", value);
  if (config.storage.max_quota_bytes != 0 && config.storage.max_quota_bytes < (1 << 20))
    throw ValueError("MaxQuota=" + std::string(value) + " is below the least a sandbox can work with, 1M");
}
void ApplyDefaultTtl(Config& config, std::string_view value) { config.storage.default_ttl_sec = ParseDuration("DefaultTtl", value); }

/// A count from 1 to `most`; "" is the default.
size_t ParseCount(std::string_view key, std::string_view value, size_t fallback, size_t most) {
  return value.empty() ? fallback : ParseWhole(key, value, 1, most, "a count");
}

void ApplyMaxSandboxesPerUser(Config& config, std::string_view value) {
  config.limits.max_sandboxes_per_user = ParseCount("MaxSandboxesPerUser", value, LimitsConfig{}.max_sandboxes_per_user, 1024);
}

void ApplyMaxRootsPerSandbox(Config& config, std::string_view value) {
  config.limits.max_roots_per_sandbox = ParseCount("MaxRootsPerSandbox", value, LimitsConfig{}.max_roots_per_sandbox, 64);
}

void ApplyMaxRunningJobsPerUser(Config& config, std::string_view value) {
  config.limits.max_running_jobs_per_user =
      ParseCount("MaxRunningJobsPerUser", value, LimitsConfig{}.max_running_jobs_per_user, 100000);
}

void ApplyMaxCallsInFlightPerUser(Config& config, std::string_view value) {
  config.limits.max_calls_in_flight_per_user =
      ParseCount("MaxCallsInFlightPerUser", value, LimitsConfig{}.max_calls_in_flight_per_user, 100000);
}

void ApplyStalledReaderTimeout(Config& config, std::string_view value) {
  config.limits.stalled_reader_timeout_sec =
      value.empty() ? LimitsConfig{}.stalled_reader_timeout_sec : ParseDuration("StalledReaderTimeout", value);
  if (config.limits.stalled_reader_timeout_sec == 0)
    throw ValueError("StalledReaderTimeout=" + std::string(value) + " is not a duration of at least 1s");
}

void ApplyMaxCapturedOutputPerUser(Config& config, std::string_view value) {
  config.limits.max_captured_output_per_user =
      value.empty() ? LimitsConfig{}.max_captured_output_per_user : ParseSize("MaxCapturedOutputPerUser", value);
}

/// A job limit's default: "" is the built-in one, "infinity" none, else at least `least`.
uint64_t ParseJobLimit(std::string_view key, std::string_view value, uint64_t fallback, uint64_t least, bool size) {
  if (value.empty()) return fallback;
  if (value == "infinity") return 0;
  uint64_t limit = size ? ParseSize(key, value) : ParseWhole(key, value, 1, 999999999, "a count");
  if (limit < least)
    throw ValueError(std::string(key) + "=" + std::string(value) + " is below the least a job can start with, " +
                     (size ? DescribeLimits({least, 0}).substr(7) : std::to_string(least)) + " (or infinity: none)");
  return limit;
}

void ApplyDefaultMemoryMax(Config& config, std::string_view value) {
  config.limits.default_memory_max =
      ParseJobLimit("DefaultMemoryMax", value, LimitsConfig{}.default_memory_max, kMinJobMemoryMax, /*size=*/true);
}

void ApplyDefaultTasksMax(Config& config, std::string_view value) {
  config.limits.default_tasks_max = ParseJobLimit("DefaultTasksMax", value, LimitsConfig{}.default_tasks_max, kMinJobTasksMax, false);
}

struct KeySpec {
  std::string_view section;
  std::string_view key;
  void (*apply)(Config& config, std::string_view value);
};

/// Every key sandboxd understands. A section is known when a key here names it.
constexpr KeySpec kKeys[] = {
    {"Jobs", "HiddenPaths", ApplyHiddenPaths},
    {"Jobs", "HideOtherHomes", ApplyHideOtherHomes},
    {"Storage", "ArchiveCompressionLevel", ApplyArchiveCompressionLevel},
    {"Storage", "Cap", ApplyCap},
    {"Storage", "DefaultQuota", ApplyDefaultQuota},
    {"Storage", "DefaultTtl", ApplyDefaultTtl},
    {"Storage", "MaxQuota", ApplyMaxQuota},
    {"Limits", "MaxSandboxesPerUser", ApplyMaxSandboxesPerUser},
    {"Limits", "MaxRootsPerSandbox", ApplyMaxRootsPerSandbox},
    {"Limits", "MaxRunningJobsPerUser", ApplyMaxRunningJobsPerUser},
    {"Limits", "MaxCallsInFlightPerUser", ApplyMaxCallsInFlightPerUser},
    {"Limits", "StalledReaderTimeout", ApplyStalledReaderTimeout},
    {"Limits", "MaxCapturedOutputPerUser", ApplyMaxCapturedOutputPerUser},
    {"Limits", "DefaultMemoryMax", ApplyDefaultMemoryMax},
    {"Limits", "DefaultTasksMax", ApplyDefaultTasksMax},
    {"Network", "AllowedHosts", ApplyAllowedHosts},
};

bool KnownSection(std::string_view name) {
  return std::any_of(std::begin(kKeys), std::end(kKeys), [&](const KeySpec& k) { return k.section == name; });
}

/// One file being parsed: the text fed to inih line by line (so that we know the line number
/// of every assignment, and see each line whole), and the first problem found.
struct Parse {
  Parse(std::string_view t, const std::string& f, Config& c) : text(t), file(f), config(c) {}

  std::string_view text;
  const std::string& file;
  Config& config;
  size_t pos = 0;
  int line = 0;
  std::optional<std::string> error;

  void Fail(const std::string& problem) {
    if (!error) error = file + ":" + std::to_string(line) + ": " + problem;
  }
};

/// What inih would accept but we refuse, or does not report with a reason: section headers
/// (unknown ones included, even when empty), and "KEY: VALUE" lines, which systemd rejects.
std::optional<std::string> LineShapeError(std::string_view line) {
  size_t start = line.find_first_not_of(" \t\r\v\f");
  if (start == std::string_view::npos) return std::nullopt;
  line.remove_prefix(start);
  if (line.front() == '#' || line.front() == ';') return std::nullopt;
  if (line.front() == '[') {
    size_t close = line.find(']');
    if (close == std::string_view::npos) return "the section header has no \"]\"";
    if (line.find_first_not_of(" \t\r\v\f", close + 1) != std::string_view::npos)
      return "unexpected text after the section header";
    std::string_view name = line.substr(1, close - 1);
    if (!KnownSection(name)) return "unknown section [" + std::string(name) + "]";
    return std::nullopt;
  }
  size_t equals = line.find('=');
  if (equals == std::string_view::npos || line.substr(0, equals).find(':') != std::string_view::npos)
    return "expected KEY=VALUE, a [Section] header or a comment";
  return std::nullopt;
}

/// inih's fgets-style reader.
char* ReadLine(char* buffer, int size, void* stream) {
  auto& parse = *static_cast<Parse*>(stream);
  if (parse.error || parse.pos >= parse.text.size()) return nullptr;
  size_t end = parse.text.find('\n', parse.pos);
  if (end == std::string_view::npos) end = parse.text.size();
  std::string_view line = parse.text.substr(parse.pos, end - parse.pos);
  parse.pos = end + 1;
  ++parse.line;
  // inih cuts a longer line into pieces and parses each as a line of its own; refuse instead.
  size_t longest = size > 2 ? static_cast<size_t>(size) - 2 : 0;
  if (line.size() > longest) {
    parse.Fail("the line is longer than " + std::to_string(longest) +
               " characters (split a list over several assignments)");
    return nullptr;
  }
  if (line.find('\0') != std::string_view::npos) {
    parse.Fail("the line contains a NUL byte");
    return nullptr;
  }
  std::string_view shape = line;
  if (parse.line == 1 && shape.substr(0, 3) == "\xEF\xBB\xBF") shape.remove_prefix(3);  // inih skips a BOM
  if (auto why = LineShapeError(shape)) {
    parse.Fail(*why);
    return nullptr;
  }
  std::memcpy(buffer, line.data(), line.size());
  buffer[line.size()] = '\n';
  buffer[line.size() + 1] = '\0';
  return buffer;
}

/// inih's handler: one assignment. Nothing may be thrown through inih's C frames.
int OnAssignment(void* user, const char* section, const char* name, const char* value) {
  auto& parse = *static_cast<Parse*>(user);
  try {
    std::string_view sec(section), key(name);
    if (sec.empty()) throw ValueError("the assignment is outside any section (put it under [Jobs])");
    if (key.empty()) throw ValueError("the key name is missing");
    auto spec = std::find_if(std::begin(kKeys), std::end(kKeys),
                             [&](const KeySpec& k) { return k.section == sec && k.key == key; });
    if (spec == std::end(kKeys))
      throw ValueError("unknown key \"" + std::string(key) + "\" in section [" + std::string(sec) + "]");
    spec->apply(parse.config, value);
    return 1;
  } catch (const std::exception& e) {
    parse.Fail(e.what());
  } catch (...) {
    parse.Fail("unexpected error");
  }
  return 0;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ThrowErrno("cannot read configuration file " + path);
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) ThrowErrno("cannot read configuration file " + path);
  return content.str();
}

/// True for an existing regular file (symlinks followed); false when missing.
bool IsRegularFile(const std::string& path, bool must_be_regular) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    ThrowErrno("cannot read configuration file " + path);
  }
  if (S_ISREG(st.st_mode)) return true;
  if (must_be_regular) throw Error(Code::kInvalidArgument, "configuration file " + path + " is not a regular file");
  return false;
}

}  // namespace

std::vector<std::string> DefaultHiddenPaths() {
  return {
      // Keys and credentials of ssh, gpg, cloud and cluster tools, registries, git and pass.
      "~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube", "~/.docker",
      "~/.netrc", "~/.git-credentials", "~/.config/gh", "~/.password-store", "~/.vault-token",
      "~/.pypirc", "~/.cargo/credentials", "~/.cargo/credentials.toml",
      // Desktop keyrings, the NSS database (client certificates), browser and mail profiles.
      "~/.local/share/keyrings", "~/.local/share/kwalletd", "~/.pki", "~/.mozilla",
      "~/.config/google-chrome", "~/.config/chromium", "~/.config/BraveSoftware", "~/.thunderbird",
      "~/.var/app",
      // Sockets a job could otherwise connect to on the read-only host: the owner's session bus,
      // systemd --user, gpg-agent, ssh-agent, the keyring; and dockerd (root on the host).
      "/run/user", "/run/docker.sock",
  };
}

void ApplyConfigText(std::string_view text, const std::string& file, Config& config) {
  // Systemd's dialect, set on inih's (Debian build's) run-time switches before each parse:
  // no indented continuation lines, no inline comments ("a ; b" is a value), stop at the first
  // error. These are process-wide; only this file uses inih.
  ini_allow_multiline = false;
  ini_allow_inline_comments = false;
  ini_allow_no_value = false;
  ini_stop_on_first_error = true;
  Parse parse{text, file, config};
  int rc = ini_parse_stream(ReadLine, &parse, OnAssignment, &parse);
  if (parse.error) throw Error(Code::kInvalidArgument, *parse.error);
  if (rc > 0) {
    parse.line = rc;
    parse.Fail("expected KEY=VALUE, a [Section] header or a comment");
    throw Error(Code::kInvalidArgument, *parse.error);
  }
  if (rc != 0) throw Error(Code::kFailed, "cannot parse configuration file " + file + ": inih failed");
}

std::vector<std::string> ConfigFiles(const std::string& main_path) {
  std::vector<std::string> files;
  if (IsRegularFile(main_path, /*must_be_regular=*/true)) files.push_back(main_path);
  std::string drop_in_dir = main_path + ".d";
  struct stat st;
  if (stat(drop_in_dir.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return files;
    ThrowErrno("cannot read configuration directory " + drop_in_dir);
  }
  if (!S_ISDIR(st.st_mode)) return files;
  auto names = ListDirectory(drop_in_dir);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".conf") != 0) continue;
    std::string path = drop_in_dir + "/" + name;
    if (IsRegularFile(path, /*must_be_regular=*/false)) files.push_back(path);
  }
  return files;
}

Config LoadConfig(const std::string& main_path) {
  Config config;
  for (const auto& file : ConfigFiles(main_path)) ApplyConfigText(ReadWholeFile(file), file, config);
  // Checked once every file has had its say: a drop-in may set either (a percentage is checked
  // once ResolveMaxQuota knows its bytes).
  CheckDefaultQuotaWithinMax(config.storage);
  return config;
}

void CheckDefaultQuotaWithinMax(const StorageConfig& storage) {
  if (storage.max_quota_bytes != 0 && storage.default_quota_bytes > storage.max_quota_bytes)
    throw Error(Code::kInvalidArgument, "[Storage] DefaultQuota=" + std::to_string(storage.default_quota_bytes) +
                                            " bytes is above MaxQuota=" + std::to_string(storage.max_quota_bytes) +
                                            " bytes: every sandbox created without --quota would need polkit's manage action");
}

void ResolveMaxQuota(StorageConfig& storage, uint64_t state_file_system_bytes) {
  if (storage.max_quota_percent == 0) return;
  // Whole MiB, and never under the least a sandbox can work with.
  uint64_t bytes = state_file_system_bytes / 100 * storage.max_quota_percent;
  storage.max_quota_bytes = std::max<uint64_t>(bytes / (1 << 20) * (1 << 20), 1 << 20);
  CheckDefaultQuotaWithinMax(storage);
}

}  // namespace sandboxd
