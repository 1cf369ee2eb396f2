#include "visible_bytes.h"

#include <gtest/gtest.h>

#include <string>

namespace sandboxctl {
namespace {

using namespace std::string_literals;

/// Marks that a test can read: [^@] for a marked ^@.
constexpr VisibleMarks kBrackets{"[", "]"};

std::string Visible(std::string_view line) { return VisibleBytes(line, kBrackets); }

TEST(VisibleBytesTest, PrintableTextAndTabStayAsTheyAre) {
  EXPECT_EQ(Visible("+int main() {\treturn 0; }"), "+int main() {\treturn 0; }");
  EXPECT_EQ(Visible("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82");
  EXPECT_EQ(Visible(""), "");
}

// The attack of issue 39: what follows a NUL is shown, on the same line.
TEST(VisibleBytesTest, ANulNoLongerEndsTheLine) {
  EXPECT_EQ(Visible("+echo harmless\0; echo PWNED"s), "+echo harmless[^@]; echo PWNED");
}

TEST(VisibleBytesTest, CarriageReturnAndEscapeSequencesAreShownNotObeyed) {
  EXPECT_EQ(Visible("+safe\rrm -rf ~"), "+safe[^M]rm -rf ~");
  EXPECT_EQ(Visible("+x\033[2K\033[1Ay"), "+x[^[][2K[^[][1Ay");
  EXPECT_EQ(Visible("crlf\r"), "crlf[^M]");
  EXPECT_EQ(Visible("\b\a\f\v\x1f\x7f"), "[^H][^G][^L][^K][^_][^?]");
}

TEST(VisibleBytesTest, EveryControlByteButTabIsMarked) {
  for (int c = 0; c < 0x20; ++c) {
    if (c == '\t') continue;
    std::string shown = Visible(std::string(1, static_cast<char>(c)));
    EXPECT_EQ(shown, "[^" + std::string(1, static_cast<char>(c + 0x40)) + "]") << c;
  }
}

// C1 controls (U+009B is CSI to some terminals), bidirectional overrides (which reorder what a
// line shows) and bytes that are not UTF-8 are marked as less marks them.
TEST(VisibleBytesTest, C1AndBidiControlsAndNonUtf8BytesAreMarked) {
  EXPECT_EQ(Visible("a\xc2\x9b" "2Kb"), "a[<U+009B>]2Kb");
  EXPECT_EQ(Visible("x = \xe2\x80\xae\"admin\"\xe2\x81\xa6"), "x = [<U+202E>]\"admin\"[<U+2066>]");
  EXPECT_EQ(Visible("\xe2\x80\x8f"), "[<U+200F>]");
  EXPECT_EQ(Visible("a\x9b" "b\xff\xc3"), "a[<9B>]b[<FF>][<C3>]");
  EXPECT_EQ(Visible("\xc0\xaf"), "[<C0>][<AF>]") << "an overlong '/'";
  EXPECT_EQ(Visible("\xed\xa0\x80"), "[<ED>][<A0>][<80>]") << "a UTF-16 surrogate";
}

TEST(VisibleBytesTest, ShownTextNeverHoldsAByteATerminalObeys) {
  std::string every;
  for (int c = 0; c < 256; ++c) every += static_cast<char>(c);
  std::string shown = VisibleBytes(every);  // the real marks: reverse video
  std::string without_marks;
  for (size_t at = 0; at < shown.size();) {
    if (shown.compare(at, 4, "\033[7m") == 0) at += 4;
    else if (shown.compare(at, 5, "\033[27m") == 0) at += 5;
    else without_marks += shown[at++];
  }
  for (unsigned char c : without_marks) EXPECT_TRUE(c == '\t' || (c >= 0x20 && c < 0x7f)) << static_cast<int>(c);
}

}  // namespace
}  // namespace sandboxctl
