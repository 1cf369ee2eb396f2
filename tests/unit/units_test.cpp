#include "units.h"

#include <gtest/gtest.h>

namespace sandboxd::units {
namespace {

TEST(UnitsTest, SizesTakeBinaryUnits) {
  EXPECT_EQ(ParseSize("4096"), 4096u);
  EXPECT_EQ(ParseSize("10M"), uint64_t{10} << 20);
  EXPECT_EQ(ParseSize("2G"), uint64_t{2} << 30);
  EXPECT_EQ(ParseSize("1T"), uint64_t{1} << 40);
  for (const char* bad : {"", "M", "1.5G", "-1", "5X", "10m", "1234567890123"}) EXPECT_FALSE(ParseSize(bad)) << bad;
}

// Found by fuzz_units: 999999999999T was taken, as its value modulo 2^64.
TEST(UnitsTest, ASizePast64BitsIsRefusedNotWrapped) {
  EXPECT_EQ(ParseSize("999999999999T"), std::nullopt);
  EXPECT_EQ(ParseSize("16777216T"), std::nullopt);  // exactly 2^64
  EXPECT_EQ(ParseSize("16777215T"), uint64_t{16777215} << 40);
}

TEST(UnitsTest, DurationsTakeSecondsMinutesHoursAndDays) {
  EXPECT_EQ(ParseDuration("90"), 90u);
  EXPECT_EQ(ParseDuration("90s"), 90u);
  EXPECT_EQ(ParseDuration("5m"), 300u);
  EXPECT_EQ(ParseDuration("2h"), 7200u);
  EXPECT_EQ(ParseDuration("7d"), 604800u);
  for (const char* bad : {"", "s", "soon", "10w", "-5", "1234567890"}) EXPECT_FALSE(ParseDuration(bad)) << bad;
}

TEST(UnitsTest, BytesArePrintedInTheLargestBinaryUnit) {
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(uint64_t{2} << 20), "2.0 MiB");
}

}  // namespace
}  // namespace sandboxd::units
