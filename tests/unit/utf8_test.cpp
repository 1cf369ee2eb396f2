#include "utf8.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "selector.h"

namespace sandboxd::api {
namespace {

TEST(Utf8Test, AcceptsWhatDBusAccepts) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain/ascii.txt"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("raw\xffname"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));                  // cut short
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));              // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));          // a UTF-16 surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));      // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xef\xbf\xbe"));          // U+FFFE, a noncharacter
  EXPECT_FALSE(IsValidUtf8(std::string("a\0b", 3)));  // NUL
}

TEST(Utf8Test, EscapesOnlyTheBytesThatAreNotUtf8) {
  EXPECT_EQ(EscapeInvalidUtf8("cannot archive raw\xffname: caf\xc3\xa9"), "cannot archive raw\\377name: caf\xc3\xa9");
  EXPECT_EQ(EscapeInvalidUtf8("\xc3"), "\\303");
  std::mt19937 random(11);
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    for (int i = random() % 16; i >= 0; --i) text += static_cast<char>(random() % 256);
    EXPECT_TRUE(IsValidUtf8(EscapeInvalidUtf8(text))) << EscapeInvalidUtf8(text);
  }
}

TEST(Utf8Test, EveryNameHasOneWireNameThatMapsBackToIt) {
  EXPECT_EQ(WireName("src/a b.c"), "src/a b.c");
  EXPECT_EQ(WireName("caf\xc3\xa9"), "caf\xc3\xa9");      // UTF-8 travels as it is
  EXPECT_EQ(WireName("raw\xffname"), "\"raw\\377name\"");  // anything else, quoted
  EXPECT_EQ(WireName("\"quoted\""), "\"\\\"quoted\\\"\"");  // so a leading quote always means quoted
  std::mt19937 random(13);
  for (int round = 0; round < 3000; ++round) {
    std::string name;
    for (int i = random() % 12; i >= 0; --i) name += static_cast<char>(1 + random() % 255);
    std::string wire = WireName(name);
    ASSERT_TRUE(IsValidUtf8(wire)) << wire;
    auto back = NameFromWire(wire);
    ASSERT_TRUE(back) << wire;
    EXPECT_EQ(*back, name) << wire;
  }
}

TEST(Utf8Test, SelectorsNameBytesThroughTheirWireNames) {
  EXPECT_EQ(NameFromWire("src/a.c"), "src/a.c");
  EXPECT_EQ(NameFromWire("\"raw\\377name\""), "raw\xffname");
  EXPECT_EQ(NameFromWire("\"unclosed"), std::nullopt);  // no quoting could have written it
  EXPECT_EQ(ShowWireName("\"raw\\377name\""), "\"raw\\377name\"");
  EXPECT_EQ(ShowWireName("new\nline"), "\"new\\nline\"");
}

TEST(Utf8Test, CutToBytesKeepsShortTextAndCutsLongTextAtACharactersEnd) {
  EXPECT_EQ(CutToBytes("short", 64), "short");
  std::string long_text;
  for (int i = 0; i < 100; ++i) long_text += "caf\xc3\xa9 ";  // 6 bytes each, a 2-byte character inside
  for (size_t max : {64u, 65u, 66u, 67u, 68u, 69u, 100u, 599u}) {
    std::string cut = CutToBytes(long_text, max);
    EXPECT_LE(cut.size(), max);
    EXPECT_TRUE(IsValidUtf8(cut)) << max;
    EXPECT_NE(cut.find("(cut: 600 bytes in all)"), std::string::npos) << cut;
    EXPECT_EQ(long_text.compare(0, cut.find(" ... (cut:"), cut, 0, cut.find(" ... (cut:")), 0);
  }
  EXPECT_EQ(CutToBytes(long_text, 600), long_text);
}

}  // namespace
}  // namespace sandboxd::api
