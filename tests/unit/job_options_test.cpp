#include "job_options.h"

#include <gtest/gtest.h>

#include "errors.h"

namespace sandboxd {
namespace {

Code RefusalOf(const std::map<std::string, sdbus::Variant>& options, std::string* message = nullptr) {
  try {
    ParseJobOptions(options, "s1");
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return Code::kFailed;  // not refused at all
}

TEST(JobOptionsTest, NoOptionsMeanOfflineUnlimitedNothingHidden) {
  JobOptions options = ParseJobOptions({}, "s1");
  EXPECT_FALSE(options.network);
  EXPECT_EQ(options.timeout_sec, 0u);
  EXPECT_TRUE(options.hide.empty());
}

TEST(JobOptionsTest, EachOptionIsRead) {
  JobOptions options = ParseJobOptions({{"network", sdbus::Variant(true)},
                                        {"timeout_sec", sdbus::Variant(uint64_t{30})},
                                        {"hide", sdbus::Variant(std::vector<std::string>{"/home/u/.ssh", "/srv/keys"})}},
                                       "s1");
  EXPECT_TRUE(options.network);
  EXPECT_EQ(options.timeout_sec, 30u);
  EXPECT_EQ(options.hide, (std::vector<std::string>{"/home/u/.ssh", "/srv/keys"}));
}

TEST(JobOptionsTest, UnknownKeysWrongTypesAndLimitsAreRefusedByName) {
  std::string message;
  EXPECT_EQ(RefusalOf({{"netwrok", sdbus::Variant(true)}}, &message), Code::kInvalidArgument);
  EXPECT_NE(message.find("'netwrok'"), std::string::npos) << message;
  EXPECT_EQ(RefusalOf({{"network", sdbus::Variant(std::string("yes"))}}, &message), Code::kInvalidArgument);
  EXPECT_NE(message.find("'network'"), std::string::npos) << message;
  EXPECT_EQ(RefusalOf({{"timeout_sec", sdbus::Variant(int32_t{5})}}), Code::kInvalidArgument);
  EXPECT_EQ(RefusalOf({{"timeout_sec", sdbus::Variant(kMaxJobTimeoutSec + 1)}}, &message), Code::kInvalidArgument);
  EXPECT_NE(message.find(std::to_string(kMaxJobTimeoutSec)), std::string::npos) << message;
  EXPECT_EQ(RefusalOf({{"hide", sdbus::Variant(std::vector<std::string>{".ssh"})}}, &message), Code::kInvalidPath);
  EXPECT_NE(message.find("'.ssh'"), std::string::npos) << message;
  EXPECT_EQ(RefusalOf({{"hide", sdbus::Variant(std::vector<std::string>(kMaxHiddenPaths + 1, "/x"))}}), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sandboxd
