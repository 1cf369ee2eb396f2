#include "net_forwarder/dns_message.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sandboxd::network {
namespace {

/// A query as a resolver sends one: id 0x1234, RD, one question, and optionally EDNS's OPT.
std::vector<uint8_t> Query(const std::vector<std::string>& labels, uint16_t type, bool edns = false) {
  std::vector<uint8_t> packet = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, static_cast<uint8_t>(edns ? 1 : 0)};
  for (const auto& label : labels) {
    packet.push_back(static_cast<uint8_t>(label.size()));
    packet.insert(packet.end(), label.begin(), label.end());
  }
  packet.insert(packet.end(), {0, static_cast<uint8_t>(type >> 8), static_cast<uint8_t>(type), 0, 1});
  if (edns) packet.insert(packet.end(), {0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0});
  return packet;
}

DnsQuery Read(const std::vector<uint8_t>& packet) {
  std::optional<DnsRcode> rcode;
  auto query = ReadDnsQuery(packet, &rcode);
  EXPECT_TRUE(query.has_value());
  EXPECT_FALSE(rcode.has_value());
  return query.value_or(DnsQuery{});
}

std::optional<DnsRcode> ErrorOf(const std::vector<uint8_t>& packet) {
  std::optional<DnsRcode> rcode;
  EXPECT_FALSE(ReadDnsQuery(packet, &rcode).has_value());
  return rcode;
}

TEST(DnsMessageTest, ReadsAQuestionInCanonicalForm) {
  auto query = Read(Query({"PyPI", "Example", "org"}, kDnsTypeA, true));
  EXPECT_EQ(query.id, 0x1234);
  EXPECT_EQ(query.name, "pypi.example.org");
  EXPECT_EQ(query.type, kDnsTypeA);
  EXPECT_EQ(query.klass, kDnsClassIn);
  EXPECT_TRUE(query.recursion_desired);
}

TEST(DnsMessageTest, AnAnswerCarriesTheAddressUnderTheQuestion) {
  auto packet = Query({"pypi", "org"}, kDnsTypeA, true);
  auto answer = DnsAnswer(Read(packet), DnsRcode::kNoError, std::array<uint8_t, 4>{198, 18, 0, 1}, 300);
  const std::vector<uint8_t> expected = {
      0x12, 0x34, 0x85, 0x80, 0, 1, 0, 1, 0, 0, 0, 0,            // id; QR AA RD, RA NOERROR; 1 question, 1 answer
      4, 'p', 'y', 'p', 'i', 3, 'o', 'r', 'g', 0, 0, 1, 0, 1,  // the question as asked
      0xc0, 12, 0, 1, 0, 1, 0, 0, 0x01, 0x2c, 0, 4, 198, 18, 0, 1};
  EXPECT_EQ(answer, expected);
}

TEST(DnsMessageTest, NoDataAndNxDomainCarryNoRecord) {
  auto query = Read(Query({"pypi", "org"}, kDnsTypeAaaa));
  auto nodata = DnsAnswer(query, DnsRcode::kNoError, std::nullopt, 300);
  EXPECT_EQ(nodata.size(), 12u + query.question.size());
  EXPECT_EQ(nodata[3] & 0x0f, 0);
  EXPECT_EQ(nodata[7], 0);  // no answer
  auto nxdomain = DnsAnswer(query, DnsRcode::kNxDomain, std::array<uint8_t, 4>{1, 2, 3, 4}, 300);
  EXPECT_EQ(nxdomain[3] & 0x0f, 3);
  EXPECT_EQ(nxdomain[7], 0) << "an error answer never carries an address";
  EXPECT_EQ(nxdomain.size(), 12u + query.question.size());
}

TEST(DnsMessageTest, ANameThatIsNoHostNameIsReadButNamesNothing) {
  // A dot inside a label would read as "pypi.org" in dotted form: it must not.
  EXPECT_EQ(Read(Query({"pypi.org"}, kDnsTypeA)).name, "");
  EXPECT_EQ(Read(Query({std::string("pypi\0", 5), "org"}, kDnsTypeA)).name, "");
  EXPECT_EQ(Read(Query({"py pi", "org"}, kDnsTypeA)).name, "");
  EXPECT_EQ(Read(Query({}, kDnsTypeA)).name, "") << "the root";
}

TEST(DnsMessageTest, WhatIsNoQueryGetsFormErrOrNothing) {
  auto query = Query({"pypi", "org"}, kDnsTypeA);
  EXPECT_FALSE(ErrorOf({0x12, 0x34, 0x01})) << "under a header: no answer";
  auto response = query;
  response[2] |= 0x80;
  EXPECT_FALSE(ErrorOf(response)) << "a response: no answer";
  auto notify = query;
  notify[2] = 4 << 3;
  EXPECT_EQ(ErrorOf(notify), DnsRcode::kNotImp);
  auto two = query;
  two[5] = 2;
  EXPECT_EQ(ErrorOf(two), DnsRcode::kFormErr);
  auto answers = query;
  answers[7] = 1;
  EXPECT_EQ(ErrorOf(answers), DnsRcode::kFormErr);
  auto cut = query;
  cut.resize(cut.size() - 1);
  EXPECT_EQ(ErrorOf(cut), DnsRcode::kFormErr);
  auto unterminated = std::vector<uint8_t>(query.begin(), query.begin() + 16);
  EXPECT_EQ(ErrorOf(unterminated), DnsRcode::kFormErr);
}

TEST(DnsMessageTest, ACompressionPointerInAQuestionIsFormErr) {
  std::vector<uint8_t> packet = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1};
  EXPECT_EQ(ErrorOf(packet), DnsRcode::kFormErr);
}

TEST(DnsMessageTest, ANameLongerThanTheWireAllowsIsFormErr) {
  std::vector<std::string> labels(5, std::string(63, 'a'));  // 5 * 64 + 1 bytes > 255
  EXPECT_EQ(ErrorOf(Query(labels, kDnsTypeA)), DnsRcode::kFormErr);
  labels.resize(3);  // 193 bytes: readable
  EXPECT_EQ(Read(Query(labels, kDnsTypeA)).name.size(), 3u * 63 + 2);
}

TEST(DnsMessageTest, AnErrorAnswerEchoesTheId) {
  std::vector<uint8_t> packet = {0xab, 0xcd, 0x01, 0x00, 0, 2, 0, 0, 0, 0, 0, 0};
  auto answer = DnsError(packet, DnsRcode::kFormErr);
  EXPECT_EQ(answer, (std::vector<uint8_t>{0xab, 0xcd, 0x85, 0x81, 0, 0, 0, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace sandboxd::network
