#include "network/host_rules.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace sandboxd::network {
namespace {

std::string RefusalOf(std::string_view text) {
  try {
    ParseHostRules(text);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), Code::kInvalidArgument) << text;
    return error.what();
  }
  return "";
}

TEST(HostRulesTest, ParsesNamesWildcardsAndPorts) {
  auto rules = ParseHostRules("PyPI.org, files.pythonhosted.org.,*.Example.org:8443,github.com:22");
  ASSERT_EQ(rules.size(), 4u);
  EXPECT_EQ(rules[0], (HostRule{"pypi.org", std::nullopt}));
  EXPECT_EQ(rules[1], (HostRule{"files.pythonhosted.org", std::nullopt}));
  EXPECT_EQ(rules[2], (HostRule{"*.example.org", 8443}));
  EXPECT_EQ(rules[3], (HostRule{"github.com", 22}));
  EXPECT_EQ(FormatHostRules(rules), "pypi.org,files.pythonhosted.org,*.example.org:8443,github.com:22");
  EXPECT_EQ(ParseHostRules(FormatHostRules(rules)), rules);
}

TEST(HostRulesTest, EmptyItemsAndRepeatsAreDropped) {
  EXPECT_TRUE(ParseHostRules("").empty());
  EXPECT_TRUE(ParseHostRules(" , ,").empty());
  EXPECT_EQ(ParseHostRules("a.org,A.org.,a.org:443").size(), 2u);
}

TEST(HostRulesTest, RefusesAddressesAndWhatIsNoHostName) {
  EXPECT_NE(RefusalOf("10.0.0.1").find("allowed host 10.0.0.1 is an address"), std::string::npos) << RefusalOf("10.0.0.1");
  EXPECT_NE(RefusalOf("10.0.0.1:443").find("is an address"), std::string::npos);
  EXPECT_NE(RefusalOf("::1").find("is an address"), std::string::npos);
  // With a trailing dot too (found by fuzz_job_network: "443." read as the name "443", whose
  // text then read back as an address).
  EXPECT_NE(RefusalOf("443.").find("is an address"), std::string::npos) << RefusalOf("443.");
  EXPECT_NE(RefusalOf("10.0.0.1.:80").find("is an address"), std::string::npos);
  EXPECT_NE(RefusalOf("[2001:db8::1]:443").find("is an address"), std::string::npos);
  EXPECT_NE(RefusalOf("pypi.org,*").find("allowed host * is not a host name"), std::string::npos) << RefusalOf("*");
  EXPECT_NE(RefusalOf("*.org").find("top-level domain"), std::string::npos);
  EXPECT_NE(RefusalOf("a.*.org").find("not a host name"), std::string::npos);
  EXPECT_NE(RefusalOf("a..org").find("not a host name"), std::string::npos);
  EXPECT_NE(RefusalOf("a b.org").find("not a host name"), std::string::npos);
  EXPECT_NE(RefusalOf(std::string("a\0b.org", 7)).find("allowed host \"a\\000b.org\" is not a host name"), std::string::npos)
      << RefusalOf(std::string("a\0b.org", 7));
  EXPECT_NE(RefusalOf(std::string(64, 'a') + ".org").find("not a host name"), std::string::npos);
  for (const char* port : {"a.org:", "a.org:0", "a.org:65536", "a.org:+1", "a.org:1x", "a.org:-1"})
    EXPECT_NE(RefusalOf(port).find("no port in 1..65535"), std::string::npos) << port << ": " << RefusalOf(port);
}

TEST(HostRulesTest, RefusesMoreRulesThanTheLimit) {
  std::string text;
  for (size_t i = 0; i <= kMaxHostRules; ++i) text += "h" + std::to_string(i) + ".org,";
  EXPECT_NE(RefusalOf(text).find("more than 256 allowed hosts"), std::string::npos);
}

TEST(HostRulesTest, AWildcardMatchesSubdomainsOnly) {
  auto rules = ParseHostRules("*.example.org");
  EXPECT_TRUE(AllowsHost(rules, "a.example.org", 443));
  EXPECT_TRUE(AllowsHost(rules, "b.a.example.org", 80));
  EXPECT_FALSE(AllowsHost(rules, "example.org", 443));
  EXPECT_FALSE(AllowsHost(rules, "badexample.org", 443));
  EXPECT_FALSE(AllowsHost(rules, "a.example.org.evil.net", 443));
  EXPECT_FALSE(AllowsName(rules, "example.org"));
  EXPECT_TRUE(AllowsName(rules, "x.example.org"));
}

TEST(HostRulesTest, PortsDefaultToTheWebsTwo) {
  auto rules = ParseHostRules("pypi.org,git.example.org:22");
  EXPECT_TRUE(AllowsHost(rules, "pypi.org", 443));
  EXPECT_TRUE(AllowsHost(rules, "pypi.org", 80));
  EXPECT_FALSE(AllowsHost(rules, "pypi.org", 8080));
  EXPECT_TRUE(AllowsHost(rules, "git.example.org", 22));
  EXPECT_FALSE(AllowsHost(rules, "git.example.org", 443));
  EXPECT_TRUE(AllowsName(rules, "git.example.org"));
  EXPECT_FALSE(AllowsName(rules, "pypi.org.example"));
}

TEST(HostRulesTest, CanonicalNames) {
  EXPECT_EQ(CanonicalHostName("PyPI.Org."), "pypi.org");
  EXPECT_EQ(CanonicalHostName("_acme.x-y.org"), "_acme.x-y.org");
  EXPECT_FALSE(CanonicalHostName("."));
  EXPECT_FALSE(CanonicalHostName(""));
  EXPECT_FALSE(CanonicalHostName("a..b"));
  EXPECT_FALSE(CanonicalHostName(".a"));
  EXPECT_FALSE(CanonicalHostName("a/b"));
  EXPECT_FALSE(CanonicalHostName(std::string(254, 'a')));
}

TEST(HostRulesTest, AnAdminsListCoversWhatItNamesOnItsPorts) {
  auto admin = ParseHostRules("pypi.org,*.pythonhosted.org,git.example.org:22");
  EXPECT_TRUE(Covers(admin, ParseHostRules("pypi.org")));
  EXPECT_TRUE(Covers(admin, ParseHostRules("pypi.org:443")));
  EXPECT_FALSE(Covers(admin, ParseHostRules("pypi.org:8443")));
  EXPECT_TRUE(Covers(admin, ParseHostRules("files.pythonhosted.org,*.cdn.pythonhosted.org:80")));
  EXPECT_TRUE(Covers(admin, ParseHostRules("*.pythonhosted.org")));
  EXPECT_FALSE(Covers(admin, ParseHostRules("pythonhosted.org")));
  EXPECT_FALSE(Covers(admin, ParseHostRules("*.org.pythonhosted.org.evil")));
  EXPECT_TRUE(Covers(admin, ParseHostRules("git.example.org:22")));
  EXPECT_FALSE(Covers(admin, ParseHostRules("git.example.org")));
  EXPECT_FALSE(Covers(admin, ParseHostRules("pypi.org,evil.example")));
  EXPECT_TRUE(Covers(admin, {}));
  EXPECT_FALSE(Covers({}, ParseHostRules("pypi.org")));
  // A wildcard is not covered by a name, even one of its own subdomains.
  EXPECT_FALSE(Covers(ParseHostRules("a.example.org"), ParseHostRules("*.example.org")));
}

}  // namespace
}  // namespace sandboxd::network
