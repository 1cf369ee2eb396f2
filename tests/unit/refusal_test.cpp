#include "network/refusal.h"

#include <gtest/gtest.h>

#include "refusal_note.h"

namespace sandboxd::network {
namespace {

TEST(RefusalTest, ALineReadsBackAsTheRefusalItReports) {
  Refusal refusal{"pypi.example", 443, "not allowed on this port"};
  std::string line = RefusalLine(refusal);
  ASSERT_EQ(line.back(), '\n');
  line.pop_back();
  EXPECT_EQ(ReadRefusalLine(line), refusal);
  EXPECT_EQ(DescribeRefusal(refusal), "pypi.example:443: not allowed on this port");
  EXPECT_EQ(DescribeRefusal({"evil.example", 0, "not allowed"}), "evil.example (lookup): not allowed");
}

TEST(RefusalTest, TheDaemonTakesNothingButAWellFormedBoundedReport) {
  // The forwarder runs as the owner: each line is the owner's claim.
  EXPECT_FALSE(ReadRefusalLine("not json"));
  EXPECT_FALSE(ReadRefusalLine(R"({"host":"a","port":70000,"reason":"x"})"));
  EXPECT_FALSE(ReadRefusalLine(R"({"host":"a","port":-1,"reason":"x"})"));
  EXPECT_FALSE(ReadRefusalLine(R"({"host":"","port":1,"reason":"x"})"));
  EXPECT_FALSE(ReadRefusalLine(R"({"host":"a","port":1})"));
  EXPECT_FALSE(ReadRefusalLine(R"({"host":"a\u001b[2J","port":1,"reason":"x"})")) << "a control byte in a host";
  EXPECT_FALSE(ReadRefusalLine(R"({"host":"a","port":1,"reason":"x\ny"})"));
  EXPECT_FALSE(ReadRefusalLine(R"({"host":")" + std::string(400, 'a') + R"(","port":1,"reason":"x"})"));
  EXPECT_FALSE(ReadRefusalLine(std::string(kMaxRefusalLine + 1, ' ')));
  EXPECT_TRUE(ReadRefusalLine(R"({"host":"a","port":1,"reason":"x"})"));
}

TEST(RefusalNoteTest, OneLineNamingTheFirstRefusals) {
  using sandboxctl::RefusalNote;
  EXPECT_EQ(RefusalNote({}, 0), "");
  EXPECT_EQ(RefusalNote({{"pypi.example", 443, "not allowed"}}, 1), "sandboxd: refused 1 connection (pypi.example:443: not allowed)");
  EXPECT_EQ(RefusalNote({{"a.example", 0, "not allowed"}, {"10.0.0.1", 80, "is an address: a job reaches hosts by name"}}, 2),
            "sandboxd: refused 2 connections (a.example (lookup): not allowed; 10.0.0.1:80: is an address: a job reaches hosts by name)");
  EXPECT_EQ(RefusalNote({{"a", 1, "x"}, {"b", 2, "x"}, {"c", 3, "x"}, {"d", 4, "x"}}, 150),
            "sandboxd: refused 150 connections (a:1: x; b:2: x; c:3: x; 147 more: sandboxctl jobs --json lists them)");
  // A name a job chose cannot steer the terminal.
  EXPECT_EQ(RefusalNote({{"a\x1b[2Jb", 80, "x\ry"}}, 1), "sandboxd: refused 1 connection (\"a\\033[2Jb\":80: x\\015y)");
}

TEST(RefusalNoteTest, AJobWithNoNetworkIsToldWhatGivesItSome) {
  EXPECT_EQ(sandboxctl::NoNetworkNote(0), "");
  EXPECT_EQ(sandboxctl::NoNetworkNote(2),
            "sandboxd: refused 2 attempts to reach the network (a name lookup or a connection): the job has none; run --allow-host "
            "HOST[:PORT] or --network gives it some");
}

}  // namespace
}  // namespace sandboxd::network
