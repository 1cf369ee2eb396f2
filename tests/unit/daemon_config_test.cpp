#include "config/daemon_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "base/errors.h"
#include "jobs/hidden_paths.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;
using testing::WriteFile;

Config Parse(const std::string& text) {
  Config config;
  ApplyConfigText(text, "test.conf", config);
  return config;
}

/// The message of the Error(kInvalidArgument) that parsing `text` throws, or "" if none.
std::string ParseError(const std::string& text) {
  try {
    Parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
    return e.what();
  }
  return "";
}

TEST(ConfigTest, DefaultsHideTheUsualSecretStoresAndOtherHomes) {
  Config config;
  EXPECT_EQ(config.jobs.hidden_paths, DefaultHiddenPaths());
  EXPECT_TRUE(config.jobs.hide_other_homes);
  for (const char* expected : {"~/.ssh", "~/.gnupg", "~/.aws", "~/.netrc", "~/.mozilla", "/run/user"})
    EXPECT_NE(std::find(config.jobs.hidden_paths.begin(), config.jobs.hidden_paths.end(), expected),
              config.jobs.hidden_paths.end())
        << expected;
  for (const auto& entry : DefaultHiddenPaths()) EXPECT_FALSE(HiddenPathSyntaxError(entry, true)) << entry;
}

TEST(ConfigTest, AnEmptyTextKeepsTheDefaults) {
  Config config = Parse("# nothing here\n\n; nor here\n");
  EXPECT_EQ(config.jobs.hidden_paths, DefaultHiddenPaths());
  EXPECT_TRUE(config.jobs.hide_other_homes);
}

TEST(ConfigTest, HiddenPathsAssignmentsAppendToTheDefaults) {
  Config config = Parse("[Jobs]\nHiddenPaths=/srv/secrets ~/.config/op\nHiddenPaths = ~/.ssh\t~/x\n");
  auto expected = DefaultHiddenPaths();
  for (const char* added : {"/srv/secrets", "~/.config/op", "~/x"}) expected.push_back(added);
  EXPECT_EQ(config.jobs.hidden_paths, expected);  // ~/.ssh was there already
}

// Found by fuzz_daemon_config: a form feed (or \v, \r) after a name was kept as part of it, so
// "~/.ssh\f" hid nothing and said nothing.
TEST(ConfigTest, EveryBlankSeparatesHiddenPaths) {
  Config config = Parse("[Jobs]\nHiddenPaths=\nHiddenPaths=/srv/a\f/srv/b\v/srv/c\r/srv/d\n");
  EXPECT_EQ(config.jobs.hidden_paths, (std::vector<std::string>{"/srv/a", "/srv/b", "/srv/c", "/srv/d"}));
}

TEST(ConfigTest, AnEmptyHiddenPathsResetsTheListAndLaterOnesAppend) {
  EXPECT_TRUE(Parse("[Jobs]\nHiddenPaths=\n").jobs.hidden_paths.empty());
  EXPECT_EQ(Parse("[Jobs]\nHiddenPaths=/a\nHiddenPaths=\nHiddenPaths=~/.ssh\nHiddenPaths=/b\n").jobs.hidden_paths,
            (std::vector<std::string>{"~/.ssh", "/b"}));
}

TEST(ConfigTest, HideOtherHomesTakesSystemdBooleansAndEmptyMeansTheDefault) {
  for (const char* no : {"no", "No", "false", "0", "off", "n", "f"})
    EXPECT_FALSE(Parse(std::string("[Jobs]\nHideOtherHomes=") + no + "\n").jobs.hide_other_homes) << no;
  for (const char* yes : {"yes", "YES", "true", "1", "on", "y", "t"})
    EXPECT_TRUE(Parse(std::string("[Jobs]\nHideOtherHomes=no\nHideOtherHomes=") + yes).jobs.hide_other_homes) << yes;
  EXPECT_TRUE(Parse("[Jobs]\nHideOtherHomes=no\nHideOtherHomes=\n").jobs.hide_other_homes);
}

TEST(ConfigTest, CommentsIndentationRepeatedSectionsAndCrlfAreFine) {
  Config config = Parse(
      "# comment\r\n"
      "  ; indented comment\r\n"
      "[Jobs]\r\n"
      "  HideOtherHomes = no  \r\n"
      "[Jobs]\r\n"
      "HiddenPaths=\r\n"
      "\tHiddenPaths=/srv/a\r\n");
  EXPECT_FALSE(config.jobs.hide_other_homes);
  EXPECT_EQ(config.jobs.hidden_paths, std::vector<std::string>{"/srv/a"});
}

TEST(ConfigTest, AByteOrderMarkBeforeTheFirstSectionIsFine) {
  EXPECT_FALSE(Parse("\xEF\xBB\xBF[Jobs]\nHideOtherHomes=no\n").jobs.hide_other_homes);
}

TEST(ConfigErrorTest, AnUnknownKeyNamesFileLineAndKey) {
  EXPECT_EQ(ParseError("[Jobs]\n# ok\nHidenPaths=~/.ssh\n"), "test.conf:3: unknown key \"HidenPaths\" in section [Jobs]");
  EXPECT_EQ(ParseError("[Jobs]\nhiddenpaths=~/.ssh\n"), "test.conf:2: unknown key \"hiddenpaths\" in section [Jobs]");
}

TEST(ConfigErrorTest, AnUnknownSectionIsRefusedEvenWhenEmpty) {
  EXPECT_EQ(ParseError("[Jobs]\nHideOtherHomes=yes\n\n[Jbos]\n"), "test.conf:4: unknown section [Jbos]");
  EXPECT_EQ(ParseError("[Quota]\nCap=1G\n"), "test.conf:1: unknown section [Quota]");
  EXPECT_EQ(ParseError("[Storage]\nCeiling=1G\n"), "test.conf:2: unknown key \"Ceiling\" in section [Storage]");
}

TEST(ConfigErrorTest, ABadBooleanNamesTheValue) {
  EXPECT_EQ(ParseError("[Jobs]\nHideOtherHomes=maybe\n"),
            "test.conf:2: HideOtherHomes=maybe is not a boolean (use yes or no)");
  // No inline comments, as in systemd: the comment is part of the value.
  EXPECT_EQ(ParseError("[Jobs]\nHideOtherHomes=yes ; hide them\n"),
            "test.conf:2: HideOtherHomes=yes ; hide them is not a boolean (use yes or no)");
}

TEST(ConfigErrorTest, RelativeTildeOnlyAndDotDotPathsAreRefused) {
  EXPECT_EQ(ParseError("[Jobs]\nHiddenPaths=/ok .ssh\n"),
            "test.conf:2: HiddenPaths entry \".ssh\" is refused: it is neither absolute nor under ~/");
  EXPECT_EQ(ParseError("[Jobs]\n\nHiddenPaths=~/../bob\n"),
            "test.conf:3: HiddenPaths entry \"~/../bob\" is refused: it has a \"..\" component");
  EXPECT_NE(ParseError("[Jobs]\nHiddenPaths=/home/u/..\n"), "");
  EXPECT_NE(ParseError("[Jobs]\nHiddenPaths=~\n"), "");
  EXPECT_NE(ParseError("[Jobs]\nHiddenPaths=~bob/.ssh\n"), "");
  EXPECT_NE(ParseError("[Jobs]\nHiddenPaths=\"~/My Secrets\"\n"), "");
}

TEST(ConfigErrorTest, MalformedLinesNameTheirLine) {
  const std::string kShape = "expected KEY=VALUE, a [Section] header or a comment";
  EXPECT_EQ(ParseError("[Jobs]\nHideOtherHomes\n"), "test.conf:2: " + kShape);
  EXPECT_EQ(ParseError("[Jobs]\nHideOtherHomes: no\n"), "test.conf:2: " + kShape);
  EXPECT_EQ(ParseError("[Jobs\n"), "test.conf:1: the section header has no \"]\"");
  EXPECT_EQ(ParseError("[Jobs] x\n"), "test.conf:1: unexpected text after the section header");
  EXPECT_EQ(ParseError("HideOtherHomes=no\n"), "test.conf:1: the assignment is outside any section (put it under [Jobs])");
  EXPECT_EQ(ParseError("[Jobs]\n=no\n"), "test.conf:2: the key name is missing");
  EXPECT_EQ(ParseError(std::string("[Jobs]\nHideOtherHomes=n\0o\n", 25)), "test.conf:2: the line contains a NUL byte");
}

TEST(ConfigErrorTest, TheFirstErrorIsReported) {
  EXPECT_EQ(ParseError("[Jobs]\nFoo=1\nBar=2\n"), "test.conf:2: unknown key \"Foo\" in section [Jobs]");
}

TEST(ConfigErrorTest, LinesOverTheLimitAreRefusedNotSplit) {
  // inih would parse the rest of a long line as a line of its own.
  std::string fits = "HiddenPaths=/" + std::string(198 - 13, 'a');
  ASSERT_EQ(fits.size(), 198u);
  EXPECT_EQ(Parse("[Jobs]\n" + fits + "\n").jobs.hidden_paths.back(), fits.substr(12));
  EXPECT_EQ(ParseError("[Jobs]\n" + fits + "a\n"),
            "test.conf:2: the line is longer than 198 characters (split a list over several assignments)");
}

class ConfigLoadTest : public ::testing::Test {
 protected:
  ScopedTempDir dir_;
  std::string main_ = dir_ / "sandboxd.conf";
  std::string drop_ins_ = main_ + ".d";
};

TEST_F(ConfigLoadTest, MissingFileAndDropInDirectoryGiveTheDefaults) {
  EXPECT_TRUE(ConfigFiles(main_).empty());
  Config config = LoadConfig(main_);
  EXPECT_EQ(config.jobs.hidden_paths, DefaultHiddenPaths());
  EXPECT_TRUE(config.jobs.hide_other_homes);
}

TEST_F(ConfigLoadTest, MainFileThenDropInsInLexicalOrder) {
  WriteFile(main_, "[Jobs]\nHiddenPaths=/main\nHideOtherHomes=no\n");
  ASSERT_EQ(mkdir(drop_ins_.c_str(), 0755), 0);
  WriteFile(drop_ins_ + "/20-b.conf", "[Jobs]\nHiddenPaths=/b\n");
  WriteFile(drop_ins_ + "/10-a.conf", "[Jobs]\nHiddenPaths=\nHiddenPaths=/a\n");
  WriteFile(drop_ins_ + "/30-c.conf", "[Jobs]\nHideOtherHomes=yes\n");
  WriteFile(drop_ins_ + "/40-ignored.conf.bak", "garbage\n");
  WriteFile(drop_ins_ + "/README", "garbage\n");
  ASSERT_EQ(mkdir((drop_ins_ + "/50-dir.conf").c_str(), 0755), 0);
  EXPECT_EQ(ConfigFiles(main_), (std::vector<std::string>{main_, drop_ins_ + "/10-a.conf", drop_ins_ + "/20-b.conf",
                                                          drop_ins_ + "/30-c.conf"}));
  Config config = LoadConfig(main_);
  EXPECT_EQ(config.jobs.hidden_paths, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_TRUE(config.jobs.hide_other_homes);
}

TEST_F(ConfigLoadTest, DropInsApplyWithoutAMainFile) {
  ASSERT_EQ(mkdir(drop_ins_.c_str(), 0755), 0);
  WriteFile(drop_ins_ + "/local.conf", "[Jobs]\nHideOtherHomes=off\n");
  EXPECT_FALSE(LoadConfig(main_).jobs.hide_other_homes);
}

TEST_F(ConfigLoadTest, AnErrorInADropInNamesThatFileAndLine) {
  WriteFile(main_, "[Jobs]\nHideOtherHomes=no\n");
  ASSERT_EQ(mkdir(drop_ins_.c_str(), 0755), 0);
  WriteFile(drop_ins_ + "/local.conf", "# mine\n[Jobs]\nHideOtherHome=yes\n");
  try {
    LoadConfig(main_);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()), drop_ins_ + "/local.conf:3: unknown key \"HideOtherHome\" in section [Jobs]");
  }
}

TEST_F(ConfigLoadTest, AMainPathThatIsADirectoryIsRefused) {
  ASSERT_EQ(mkdir(main_.c_str(), 0755), 0);
  EXPECT_THROW(LoadConfig(main_), Error);
}

TEST(DaemonConfigTest, ArchiveCompressionLevelIsAZstdLevel) {
  EXPECT_EQ(Parse("").storage.archive_compression_level, 3);
  EXPECT_EQ(Parse("[Storage]\nArchiveCompressionLevel=19\n").storage.archive_compression_level, 19);
  EXPECT_EQ(Parse("[Storage]\nArchiveCompressionLevel=9\nArchiveCompressionLevel=\n").storage.archive_compression_level, 3);
  for (const char* bad : {"0", "20", "fast", "-1", "3.5"}) {
    try {
      Parse(std::string("[Storage]\nArchiveCompressionLevel=") + bad + "\n");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not a zstd level from 1 to 19"), std::string::npos) << e.what();
    }
  }
}

TEST(DaemonConfigTest, TheStorageCapIsASize) {
  EXPECT_EQ(Parse("").storage.cap_bytes, 0u);
  EXPECT_EQ(Parse("[Storage]\nCap=50G\n").storage.cap_bytes, uint64_t{50} << 30);
  EXPECT_EQ(Parse("[Storage]\nCap=512M\nCap=\n").storage.cap_bytes, 0u);
  EXPECT_EQ(Parse("[Storage]\nCap=4096\n").storage.cap_bytes, 4096u);
  for (const char* bad : {"lots", "5X", "-1", "1.5G"}) {
    try {
      Parse(std::string("[Storage]\nCap=") + bad + "\n");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a size"), std::string::npos) << e.what();
    }
  }
}

TEST(DaemonConfigTest, DefaultQuotaAndTtlAreASizeAndADuration) {
  Config config = Parse("[Storage]\nDefaultQuota=10G\nDefaultTtl=7d\n");
  EXPECT_EQ(config.storage.default_quota_bytes, uint64_t{10} << 30);
  EXPECT_EQ(config.storage.default_ttl_sec, 7u * 86400);
  EXPECT_EQ(Parse("[Storage]\nDefaultTtl=90\nDefaultTtl=\n").storage.default_ttl_sec, 0u);
  EXPECT_EQ(ParseError("[Storage]\nDefaultTtl=soon\n"), "test.conf:2: DefaultTtl=soon is not a duration (seconds, or with s, m, h or d, e.g. 7d)");
  EXPECT_EQ(ParseError("[Storage]\nDefaultQuota=10K\n"), "test.conf:2: DefaultQuota=10K is below the least a sandbox can work with, 1M");
}

TEST(DaemonConfigTest, LimitsAreCounts) {
  EXPECT_EQ(Parse("").limits.max_calls_in_flight_per_user, 64u);
  EXPECT_EQ(Parse("[Limits]\nMaxCallsInFlightPerUser=8\n").limits.max_calls_in_flight_per_user, 8u);
  EXPECT_EQ(Parse("[Limits]\nMaxCallsInFlightPerUser=8\nMaxCallsInFlightPerUser=\n").limits.max_calls_in_flight_per_user, 64u);
  for (const char* bad : {"0", "-1", "many", "2.5", "1000000000"})
    EXPECT_EQ(ParseError(std::string("[Limits]\nMaxCallsInFlightPerUser=") + bad + "\n"),
              std::string("test.conf:2: MaxCallsInFlightPerUser=") + bad + " is not a count from 1 to 100000");
  EXPECT_EQ(Parse("").limits.max_sandboxes_per_user, 256u);
  EXPECT_EQ(Parse("[Limits]\nMaxSandboxesPerUser=1024\n").limits.max_sandboxes_per_user, 1024u);
  EXPECT_EQ(ParseError("[Limits]\nMaxSandboxesPerUser=1025\n"), "test.conf:2: MaxSandboxesPerUser=1025 is not a count from 1 to 1024");
  EXPECT_EQ(Parse("").limits.max_roots_per_sandbox, 64u);
  EXPECT_EQ(Parse("[Limits]\nMaxRootsPerSandbox=4\n").limits.max_roots_per_sandbox, 4u);
  EXPECT_EQ(ParseError("[Limits]\nMaxRootsPerSandbox=65\n"), "test.conf:2: MaxRootsPerSandbox=65 is not a count from 1 to 64");
  EXPECT_EQ(Parse("").limits.max_running_jobs_per_user, 64u);
  EXPECT_EQ(Parse("[Limits]\nMaxRunningJobsPerUser=3\n").limits.max_running_jobs_per_user, 3u);
  EXPECT_EQ(Parse("").limits.stalled_reader_timeout_sec, 300u);
  EXPECT_EQ(Parse("[Limits]\nStalledReaderTimeout=1m\n").limits.stalled_reader_timeout_sec, 60u);
  EXPECT_EQ(Parse("[Limits]\nStalledReaderTimeout=1m\nStalledReaderTimeout=\n").limits.stalled_reader_timeout_sec, 300u);
  EXPECT_EQ(ParseError("[Limits]\nStalledReaderTimeout=0\n"), "test.conf:2: StalledReaderTimeout=0 is not a duration of at least 1s");
}

TEST(DaemonConfigTest, CapturedOutputAndJobLimitDefaultsAreSizesAndCounts) {
  EXPECT_EQ(Parse("").limits.max_captured_output_per_user, uint64_t{256} << 20);
  EXPECT_EQ(Parse("[Limits]\nMaxCapturedOutputPerUser=1G\n").limits.max_captured_output_per_user, uint64_t{1} << 30);
  EXPECT_EQ(Parse("[Limits]\nMaxCapturedOutputPerUser=0\n").limits.max_captured_output_per_user, 0u);
  EXPECT_EQ(Parse("").limits.default_memory_max, 0u);
  EXPECT_EQ(Parse("").limits.default_tasks_max, 4096u);
  Config set = Parse("[Limits]\nDefaultMemoryMax=2G\nDefaultTasksMax=512\n");
  EXPECT_EQ(set.limits.default_memory_max, uint64_t{2} << 30);
  EXPECT_EQ(set.limits.default_tasks_max, 512u);
  EXPECT_EQ(Parse("[Limits]\nDefaultTasksMax=infinity\n").limits.default_tasks_max, 0u);
  EXPECT_EQ(Parse("[Limits]\nDefaultTasksMax=9\nDefaultTasksMax=\n").limits.default_tasks_max, 4096u);
  EXPECT_EQ(ParseError("[Limits]\nDefaultMemoryMax=1M\n"),
            "test.conf:2: DefaultMemoryMax=1M is below the least a job can start with, 8 MiB (or infinity: none)");
  EXPECT_EQ(ParseError("[Limits]\nDefaultTasksMax=3\n"),
            "test.conf:2: DefaultTasksMax=3 is below the least a job can start with, 4 (or infinity: none)");
  EXPECT_EQ(ParseError("[Limits]\nDefaultTasksMax=lots\n"), "test.conf:2: DefaultTasksMax=lots is not a count from 1 to 999999999");
}

TEST_F(ConfigLoadTest, ADefaultQuotaAboveMaxQuotaIsRefusedWhicheverFileSetsIt) {
  EXPECT_EQ(Parse("[Storage]\nMaxQuota=10G\n").storage.max_quota_bytes, uint64_t{10} << 30);
  EXPECT_EQ(ParseError("[Storage]\nMaxQuota=100K\n"), "test.conf:2: MaxQuota=100K is below the least a sandbox can work with, 1M");
  WriteFile(main_, "[Storage]\nMaxQuota=1G\n");
  ASSERT_EQ(mkdir(drop_ins_.c_str(), 0755), 0);
  WriteFile(drop_ins_ + "/50-default.conf", "[Storage]\nDefaultQuota=2G\n");
  try {
    LoadConfig(main_);
    ADD_FAILURE() << "a DefaultQuota above MaxQuota was taken";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "[Storage] DefaultQuota=2147483648 bytes is above MaxQuota=1073741824 bytes: every sandbox "
                                     "created without --quota would need polkit's manage action");
  }
  WriteFile(drop_ins_ + "/50-default.conf", "[Storage]\nDefaultQuota=512M\n");
  EXPECT_EQ(LoadConfig(main_).storage.default_quota_bytes, uint64_t{512} << 20);
}

TEST_F(ConfigLoadTest, TheExampleFileParsesToTheDefaults) {
  // The installable example shows every default commented out; uncommented it must mean the
  // same (HiddenPaths= appends, so its lines only repeat the built-in entries).
  std::string example = testing::ReadFile(SANDBOXD_SOURCE_DIR "/daemon/as_root/config/sandboxd.conf.example");
  ASSERT_FALSE(example.empty());
  EXPECT_EQ(Parse(example).jobs.hidden_paths, DefaultHiddenPaths());
  std::string uncommented;
  std::istringstream lines(example);
  for (std::string line; std::getline(lines, line);) {
    // Every "#Key=..." line is a setting shown at its default ("# ..." lines are prose).
    if (line.size() > 1 && line[0] == '#' && std::isupper(static_cast<unsigned char>(line[1])) && line.find('=') != std::string::npos)
      line.erase(0, 1);
    uncommented += line + "\n";
  }
  Config reset = Parse("[Jobs]\nHiddenPaths=\n" + uncommented.substr(uncommented.find("[Jobs]")));
  EXPECT_EQ(reset.jobs.hidden_paths, DefaultHiddenPaths());
  EXPECT_TRUE(reset.jobs.hide_other_homes);
  EXPECT_EQ(reset.storage.archive_compression_level, StorageConfig{}.archive_compression_level);
  EXPECT_EQ(reset.storage.cap_bytes, StorageConfig{}.cap_bytes);
  EXPECT_EQ(reset.limits.max_calls_in_flight_per_user, LimitsConfig{}.max_calls_in_flight_per_user);
  EXPECT_EQ(reset.limits.stalled_reader_timeout_sec, LimitsConfig{}.stalled_reader_timeout_sec);
  EXPECT_EQ(reset.limits.max_sandboxes_per_user, LimitsConfig{}.max_sandboxes_per_user);
  EXPECT_EQ(reset.limits.max_roots_per_sandbox, LimitsConfig{}.max_roots_per_sandbox);
  EXPECT_EQ(reset.limits.max_running_jobs_per_user, LimitsConfig{}.max_running_jobs_per_user);
  EXPECT_EQ(reset.limits.max_captured_output_per_user, LimitsConfig{}.max_captured_output_per_user);
  EXPECT_EQ(reset.limits.default_memory_max, LimitsConfig{}.default_memory_max);
  EXPECT_EQ(reset.limits.default_tasks_max, LimitsConfig{}.default_tasks_max);
  EXPECT_EQ(reset.storage.max_quota_bytes, StorageConfig{}.max_quota_bytes);
  // The one setting the shipped file changes (issue 40, item 7): a default MaxQuota.
  EXPECT_EQ(Parse(example).storage.max_quota_percent, 25u);
}

TEST_F(ConfigLoadTest, AMaxQuotaInPercentIsAShareOfTheStatesFileSystem) {
  StorageConfig storage = Parse("[Storage]\nMaxQuota=25%\n").storage;
  EXPECT_EQ(storage.max_quota_percent, 25u);
  EXPECT_EQ(storage.max_quota_bytes, 0u);
  ResolveMaxQuota(storage, uint64_t{100} << 30);
  EXPECT_EQ(storage.max_quota_bytes, uint64_t{25} << 30);
  // Whole MiB, and at least one.
  StorageConfig tiny = Parse("[Storage]\nMaxQuota=1%\n").storage;
  ResolveMaxQuota(tiny, 3 << 20);
  EXPECT_EQ(tiny.max_quota_bytes, uint64_t{1} << 20);
  // A size given later in bytes replaces the percentage (drop-ins are read in order).
  EXPECT_EQ(Parse("[Storage]\nMaxQuota=25%\nMaxQuota=10G\n").storage.max_quota_percent, 0u);
  for (const char* bad : {"0%", "101%", "%", "2.5%", "-5%", "25 %"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(Parse(std::string("[Storage]\nMaxQuota=") + bad + "\n"), Error);
  }
  // DefaultQuota above what the share comes to is refused once it is known.
  StorageConfig over = Parse("[Storage]\nMaxQuota=10%\nDefaultQuota=20G\n").storage;
  EXPECT_THROW(ResolveMaxQuota(over, uint64_t{100} << 30), Error);
}

TEST(ConfigTest, AllowedHostsAppendsRulesAndAnEmptyOneEmptiesTheList) {
  EXPECT_TRUE(Parse("").network.allowed_hosts.empty()) << "no host is allowed without polkit by default";
  auto config = Parse("[Network]\nAllowedHosts=pypi.org, files.pythonhosted.org\nAllowedHosts=*.example.org:8443 pypi.org\n");
  EXPECT_EQ(network::FormatHostRules(config.network.allowed_hosts), "pypi.org,files.pythonhosted.org,*.example.org:8443");
  EXPECT_TRUE(Parse("[Network]\nAllowedHosts=pypi.org\nAllowedHosts=\n").network.allowed_hosts.empty());
  EXPECT_EQ(ParseError("[Network]\nAllowedHosts=pypi.org 10.0.0.1\n"),
            "test.conf:2: AllowedHosts: allowed host 10.0.0.1 is an address: hosts are allowed by name (HOST[:PORT])");
  EXPECT_EQ(ParseError("[Network]\nAllowedHost=pypi.org\n").find("test.conf:2:"), 0u);
}

}  // namespace
}  // namespace sandboxd
