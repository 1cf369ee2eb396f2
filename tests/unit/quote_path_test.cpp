#include "quote_path.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

#include "temp_dir.h"

namespace sandboxd::api {
namespace {

TEST(QuotePathTest, QuotesWhatGitQuotesAndNothingElse) {
  EXPECT_EQ(QuotePath("src/a b.c"), "src/a b.c");
  EXPECT_EQ(QuotePath("-rf"), "-rf");
  EXPECT_EQ(QuotePath("new\nline.txt"), "\"new\\nline.txt\"");
  EXPECT_EQ(QuotePath("evil\033[2K\rname"), "\"evil\\033[2K\\rname\"");
  EXPECT_EQ(QuotePath("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
  EXPECT_EQ(QuotePath("caf\xc3\xa9"), "\"caf\\303\\251\"");
  EXPECT_EQ(QuotePath("\x7f"), "\"\\177\"");
}

TEST(QuotePathTest, EveryQuotedNameReadsBackAsItself) {
  std::mt19937 random(7);
  for (int round = 0; round < 2000; ++round) {
    std::string name;
    for (int i = random() % 12; i >= 0; --i) name += static_cast<char>(1 + random() % 255);
    auto back = UnquotePath(QuotePath(name));
    ASSERT_TRUE(back) << QuotePath(name);
    EXPECT_EQ(*back, name);
  }
  EXPECT_FALSE(UnquotePath("\"unterminated"));
  EXPECT_FALSE(UnquotePath("\"bad \\q escape\""));
  EXPECT_FALSE(UnquotePath("\"bare \" quote\""));
  EXPECT_EQ(UnquotePath("plain"), "plain");
}

// The same names through git itself (core.quotePath is on by default).
TEST(QuotePathTest, MatchesGit) {
  testing::ScopedTempDir dir;
  const std::string names[] = {"plain", "a b", "new\nline", "tab\there", "esc\033[2K", "q\"uote", "back\\slash", "caf\xc3\xa9", "del\x7f"};
  for (const auto& name : names) testing::WriteFile(dir / name, "x");
  std::string command = "cd '" + dir.path() + "' && git init -q . && git -c core.quotePath=true ls-files -o";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string listed;
  char buffer[4096];
  for (size_t got; (got = fread(buffer, 1, sizeof buffer, pipe)) > 0;) listed.append(buffer, got);
  ASSERT_EQ(pclose(pipe), 0);
  for (const auto& name : names) EXPECT_NE(listed.find(QuotePath(name) + "\n"), std::string::npos) << QuotePath(name) << " in\n" << listed;
}

TEST(QuotePathTest, ControlBytesInMessagesAreEscaped) {
  EXPECT_EQ(EscapeControlBytes("no change at 'x\033[2K\r' in sandbox\n"), "no change at 'x\\033[2K\\015' in sandbox\n");
  EXPECT_EQ(EscapeControlBytes("caf\xc3\xa9\tok"), "caf\xc3\xa9\tok");
}

}  // namespace
}  // namespace sandboxd::api
