#include "sandbox/stale_origins.h"

#include <gtest/gtest.h>

#include <string>

namespace sandboxd {
namespace {

std::string Origin(unsigned char type, const std::string& handle) {
  std::string origin = {0, static_cast<char>(0xfb), static_cast<char>(21 + handle.size()), 0, static_cast<char>(type)};
  origin += std::string(16, 'u');  // the lower file system's uuid
  return origin + handle;
}

TEST(StaleOriginsTest, AnOriginNamesExactlyTheHandleItHolds) {
  const std::string handle("\x0c\x00\x00\x00\x2a\x00\x00\x00", 8);
  EXPECT_TRUE(OriginNamesHandle(Origin(1, handle), 1, handle));
  EXPECT_FALSE(OriginNamesHandle(Origin(1, handle), 2, handle));                  // another handle type
  EXPECT_FALSE(OriginNamesHandle(Origin(1, handle), 1, handle.substr(0, 4)));     // another length
  EXPECT_FALSE(OriginNamesHandle(Origin(1, "\x0d" + handle.substr(1)), 1, handle));  // another inode
  std::string bad_magic = Origin(1, handle);
  bad_magic[1] = 0;
  EXPECT_FALSE(OriginNamesHandle(bad_magic, 1, handle));
  EXPECT_FALSE(OriginNamesHandle("short", 1, handle));
}

}  // namespace
}  // namespace sandboxd

namespace sandboxd {
namespace {

TEST(StaleOriginsTest, TheIndexNamesAnOriginByItsBytesInHex) {
  EXPECT_EQ(IndexName(std::string("\x00\xfb\x1d\x01", 4)), "00fb1d01");
}

}  // namespace
}  // namespace sandboxd
