#include "bus/bus_peers.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <thread>

#include "base/errors.h"

namespace sandboxd {
namespace {

constexpr pid_t kDaemonPid = 100;

/// A bus whose connections a test sets, counting what BusPeers asks of it.
class FakeBus final : public BusDirectory {
 public:
  std::vector<std::string> Names() override {
    if (fail) throw std::runtime_error("the bus daemon did not answer");
    std::vector<std::string> names = {"org.freedesktop.DBus", "org.sandboxd.Sandbox1"};
    for (const auto& [name, identity] : peers) names.push_back(name);
    for (const auto& name : leaving) names.push_back(name);
    return names;
  }
  std::optional<PeerIdentity> Identity(const std::string& unique_name) override {
    ++asked[unique_name];
    auto it = peers.find(unique_name);
    if (it == peers.end()) return std::nullopt;  // listed, then gone before the second question
    return it->second;
  }

  std::map<std::string, PeerIdentity> peers;
  std::vector<std::string> leaving;  ///< listed but gone when asked about
  std::map<std::string, int> asked;
  bool fail = false;
};

struct Fixture {
  Fixture() {
    auto owned = std::make_unique<FakeBus>();
    bus = owned.get();
    peers = std::make_unique<BusPeers>(std::move(owned), kDaemonPid);
  }
  FakeBus* bus;
  std::unique_ptr<BusPeers> peers;
};

TEST(BusPeersTest, OnlyTheUsersOwnConnectionsAreRecipients) {
  Fixture f;
  f.bus->peers = {{":1.1", {1000, 501}}, {":1.2", {1001, 502}}, {":1.3", {1000, 503}}, {":1.4", {0, 1}}};
  EXPECT_EQ(f.peers->ConnectionsOf(1000), (std::vector<std::string>{":1.1", ":1.3"}));
  EXPECT_EQ(f.peers->ConnectionsOf(1001), (std::vector<std::string>{":1.2"}));
  // Root is a recipient only of its own sandboxes' signals.
  EXPECT_EQ(f.peers->ConnectionsOf(0), (std::vector<std::string>{":1.4"}));
  EXPECT_TRUE(f.peers->ConnectionsOf(1002).empty());
}

TEST(BusPeersTest, AConnectionMadeSinceTheLastAskCountsAtOnce) {
  Fixture f;
  f.bus->peers = {{":1.1", {1000, 501}}};
  EXPECT_EQ(f.peers->ConnectionsOf(1000).size(), 1u);
  f.bus->peers[":1.9"] = {1000, 509};  // a listener that never called sandboxd
  EXPECT_EQ(f.peers->ConnectionsOf(1000), (std::vector<std::string>{":1.1", ":1.9"}));
}

TEST(BusPeersTest, EachNameIsAskedAboutOnceAndForgottenWhenGone) {
  Fixture f;
  f.bus->peers = {{":1.1", {1000, 501}}, {":1.2", {1001, 502}}};
  f.peers->ConnectionsOf(1000);
  f.peers->ConnectionsOf(1001);
  f.peers->ConnectionsOf(1000);
  EXPECT_EQ(f.bus->asked[":1.1"], 1);
  EXPECT_EQ(f.bus->asked[":1.2"], 1);
  EXPECT_EQ(f.peers->remembered(), 2u);
  f.bus->peers.erase(":1.2");
  EXPECT_EQ(f.peers->ConnectionsOf(1001).size(), 0u);
  EXPECT_EQ(f.peers->remembered(), 1u);
  // Well-known names are no connections of their own.
  EXPECT_EQ(f.bus->asked.count("org.freedesktop.DBus"), 0u);
}

TEST(BusPeersTest, ANameGoneBetweenTheTwoQuestionsIsNoRecipientAndNotRemembered) {
  Fixture f;
  f.bus->peers = {{":1.1", {1000, 501}}};
  f.bus->leaving = {":1.5"};
  EXPECT_EQ(f.peers->ConnectionsOf(1000), (std::vector<std::string>{":1.1"}));
  EXPECT_EQ(f.peers->remembered(), 1u);
}

TEST(BusPeersTest, TheDaemonsOwnConnectionsAreNeverRecipients) {
  Fixture f;
  // In user mode (and for root's sandboxes) the daemon's connections carry the owner's uid.
  f.bus->peers = {{":1.1", {1000, kDaemonPid}}, {":1.2", {1000, 502}}, {":1.3", {1000, 0}}};
  EXPECT_EQ(f.peers->ConnectionsOf(1000), (std::vector<std::string>{":1.2", ":1.3"}));
}

TEST(BusPeersTest, TheExclusionHookLeavesConnectionsOut) {
  Fixture f;
  f.bus->peers = {{":1.1", {1000, 501}}, {":1.2", {1000, 502}}};
  std::vector<std::string> offered;
  f.peers->SetExcluded([&](const std::string& name, const PeerIdentity& identity) {
    offered.push_back(name);
    return identity.pid == 502;
  });
  EXPECT_EQ(f.peers->ConnectionsOf(1000), (std::vector<std::string>{":1.1"}));
  // Only the user's connections are offered to it, each once: its answer is kept.
  EXPECT_EQ(offered, (std::vector<std::string>{":1.1", ":1.2"}));
  EXPECT_EQ(f.peers->ConnectionsOf(1000), (std::vector<std::string>{":1.1"}));
  EXPECT_EQ(offered.size(), 2u);
  // A new connection is asked about when it first counts.
  f.bus->peers[":1.3"] = {1000, 503};
  EXPECT_EQ(f.peers->ConnectionsOf(1000), (std::vector<std::string>{":1.1", ":1.3"}));
  EXPECT_EQ(offered.size(), 3u);
}

TEST(BusPeersTest, ABusThatCannotAnswerMeansNoRecipientsNotAGuess) {
  Fixture f;
  f.bus->peers = {{":1.1", {1000, 501}}};
  f.peers->ConnectionsOf(1000);
  f.bus->fail = true;
  try {
    f.peers->ConnectionsOf(1000);
    FAIL() << "an answer without the bus daemon's";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kFailed);
    EXPECT_NE(std::string(e.what()).find("uid 1000"), std::string::npos) << e.what();
  }
}

TEST(BusPeersTest, TheForbiddenThreadIsRefused) {
  Fixture f;
  f.bus->peers = {{":1.1", {1000, 501}}};
  f.peers->ForbidThread(std::this_thread::get_id());
  EXPECT_THROW(f.peers->ConnectionsOf(1000), Error);
  EXPECT_TRUE(f.bus->asked.empty());
  std::vector<std::string> elsewhere;
  std::thread([&] { elsewhere = f.peers->ConnectionsOf(1000); }).join();
  EXPECT_EQ(elsewhere, (std::vector<std::string>{":1.1"}));
}

}  // namespace
}  // namespace sandboxd
