#include "bus/create_options.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "bus/job_options.h"

namespace sandboxd {
namespace {

/// The code `options` are refused with and the message, or kFailed when they are accepted.
Code RefusalOf(const std::map<std::string, sdbus::Variant>& options, std::string* message = nullptr) {
  try {
    ParseCreateOptions(options);
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return Code::kFailed;  // not refused at all
}

/// The message `options` are refused with, expecting `code`.
std::string Refusal(const std::map<std::string, sdbus::Variant>& options, Code code) {
  std::string message;
  EXPECT_EQ(RefusalOf(options, &message), code) << message;
  return message;
}

TEST(CreateOptionsTest, NoOptionsLeaveEverythingToTheDefaults) {
  CreateOptions options = ParseCreateOptions({});
  EXPECT_FALSE(options.name);
  EXPECT_FALSE(options.network);
  EXPECT_FALSE(options.shared);
  EXPECT_TRUE(options.hide.empty());
  EXPECT_FALSE(options.ttl_sec);
  EXPECT_FALSE(options.quota_bytes);
}

TEST(CreateOptionsTest, EachOptionIsRead) {
  CreateOptions options = ParseCreateOptions({{"name", sdbus::Variant(std::string("work"))},
                                              {"network", sdbus::Variant(true)},
                                              {"shared", sdbus::Variant(true)},
                                              {"hide", sdbus::Variant(std::vector<std::string>{"/home/u/.ssh", "/srv/./keys//"})},
                                              {"ttl_sec", sdbus::Variant(uint64_t{3600})},
                                              {"quota_bytes", sdbus::Variant(uint64_t{1} << 30)}});
  EXPECT_EQ(options.name, "work");
  EXPECT_TRUE(options.network);
  EXPECT_TRUE(options.shared);
  EXPECT_EQ(options.hide, (std::vector<std::string>{"/home/u/.ssh", "/srv/./keys//"}));
  EXPECT_EQ(options.ttl_sec, 3600u);
  EXPECT_EQ(options.quota_bytes, uint64_t{1} << 30);
}

// An empty name is the caller's to give (the registry derives or refuses it); false booleans
// and the limits of each range are taken as given.
TEST(CreateOptionsTest, EdgesOfEachRangeAreAccepted) {
  CreateOptions options = ParseCreateOptions({{"name", sdbus::Variant(std::string())},
                                              {"network", sdbus::Variant(false)},
                                              {"ttl_sec", sdbus::Variant(uint64_t{1})},
                                              {"quota_bytes", sdbus::Variant(kMinSandboxQuotaBytes)},
                                              {"hide", sdbus::Variant(std::vector<std::string>(kMaxHiddenPaths, "/x"))}});
  EXPECT_EQ(options.name, "");
  EXPECT_FALSE(options.network);
  EXPECT_EQ(options.ttl_sec, 1u);
  EXPECT_EQ(options.quota_bytes, kMinSandboxQuotaBytes);
  EXPECT_EQ(options.hide.size(), kMaxHiddenPaths);
  EXPECT_EQ(ParseCreateOptions({{"ttl_sec", sdbus::Variant(kMaxSandboxTtlSec)}}).ttl_sec, kMaxSandboxTtlSec);
  EXPECT_EQ(ParseCreateOptions({{"quota_bytes", sdbus::Variant(UINT64_MAX)}}).quota_bytes, UINT64_MAX)
      << "the upper bound is the Manager's, which knows the disk";
}

TEST(CreateOptionsTest, AnUnknownKeyIsRefusedByName) {
  EXPECT_EQ(Refusal({{"netwrok", sdbus::Variant(true)}}, Code::kInvalidArgument), "unknown option 'netwrok' for CreateSandbox");
  // Sandbox.Run's options are not Create's.
  EXPECT_EQ(Refusal({{"timeout_sec", sdbus::Variant(uint64_t{30})}}, Code::kInvalidArgument),
            "unknown option 'timeout_sec' for CreateSandbox");
}

TEST(CreateOptionsTest, AWrongTypeIsRefusedNamingTheKeyAndType) {
  EXPECT_EQ(Refusal({{"name", sdbus::Variant(sdbus::ObjectPath("/a"))}}, Code::kInvalidArgument), "option 'name' must be a string");
  EXPECT_EQ(Refusal({{"network", sdbus::Variant(std::string("yes"))}}, Code::kInvalidArgument), "option 'network' must be a boolean");
  EXPECT_EQ(Refusal({{"shared", sdbus::Variant(uint32_t{1})}}, Code::kInvalidArgument), "option 'shared' must be a boolean");
  EXPECT_EQ(Refusal({{"hide", sdbus::Variant(std::string("/home/u/.ssh"))}}, Code::kInvalidArgument),
            "option 'hide' must be an array of strings");
  EXPECT_EQ(Refusal({{"ttl_sec", sdbus::Variant(int64_t{60})}}, Code::kInvalidArgument), "option 'ttl_sec' must be a uint64");
  EXPECT_EQ(Refusal({{"quota_bytes", sdbus::Variant(uint32_t{1u << 30})}}, Code::kInvalidArgument),
            "option 'quota_bytes' must be a uint64");
}

TEST(CreateOptionsTest, ATtlOutsideOneSecondToTenYearsIsRefused) {
  EXPECT_EQ(Refusal({{"ttl_sec", sdbus::Variant(uint64_t{0})}}, Code::kInvalidArgument), "a ttl of 0 s is not between 1 s and 10 years");
  EXPECT_EQ(Refusal({{"ttl_sec", sdbus::Variant(kMaxSandboxTtlSec + 1)}}, Code::kInvalidArgument),
            "a ttl of " + std::to_string(kMaxSandboxTtlSec + 1) + " s is not between 1 s and 10 years");
}

TEST(CreateOptionsTest, AQuotaBelowOneMebibyteIsRefused) {
  EXPECT_EQ(Refusal({{"quota_bytes", sdbus::Variant(kMinSandboxQuotaBytes - 1)}}, Code::kInvalidArgument),
            "a quota of 1048575 bytes is below the least a sandbox can work with, 1 MiB");
  EXPECT_EQ(RefusalOf({{"quota_bytes", sdbus::Variant(uint64_t{0})}}), Code::kInvalidArgument)
      << "no quota is the configuration's to say, not the caller's";
}

TEST(CreateOptionsTest, TooManyHiddenPathsAreRefused) {
  EXPECT_EQ(Refusal({{"hide", sdbus::Variant(std::vector<std::string>(kMaxHiddenPaths + 1, "/x"))}}, Code::kInvalidArgument),
            "more than " + std::to_string(kMaxHiddenPaths) + " hidden paths for a sandbox");
}

TEST(CreateOptionsTest, AHiddenPathThatIsNotPlainlyAbsoluteIsRefusedAsAPath) {
  EXPECT_EQ(Refusal({{"hide", sdbus::Variant(std::vector<std::string>{"/ok", ".ssh"})}}, Code::kInvalidPath),
            "cannot hide .ssh in a new sandbox: it is not an absolute path");
  EXPECT_EQ(Refusal({{"hide", sdbus::Variant(std::vector<std::string>{"~/.ssh"})}}, Code::kInvalidPath),
            "cannot hide ~/.ssh in a new sandbox: it is not an absolute path");
  EXPECT_EQ(Refusal({{"hide", sdbus::Variant(std::vector<std::string>{""})}}, Code::kInvalidPath),
            "cannot hide  in a new sandbox: it is empty");
  EXPECT_EQ(Refusal({{"hide", sdbus::Variant(std::vector<std::string>{"/home/u/../v"})}}, Code::kInvalidPath),
            "cannot hide /home/u/../v in a new sandbox: it has a \"..\" component");
}

// Keys are read in the map's (sorted) order, and the first bad one is the one named.
TEST(CreateOptionsTest, TheFirstBadKeyInOrderIsTheOneRefused) {
  EXPECT_EQ(Refusal({{"zzz", sdbus::Variant(true)}, {"network", sdbus::Variant(uint64_t{1})}}, Code::kInvalidArgument),
            "option 'network' must be a boolean");
  EXPECT_EQ(Refusal({{"aaa", sdbus::Variant(true)}, {"network", sdbus::Variant(uint64_t{1})}}, Code::kInvalidArgument),
            "unknown option 'aaa' for CreateSandbox");
}

}  // namespace
}  // namespace sandboxd
