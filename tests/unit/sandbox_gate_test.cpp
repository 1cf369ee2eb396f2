// A sandbox's life as one typed value (sandbox_gate.h): the state its record keeps, broken and
// destroyed, each with the name the API gives it and what it still allows; and the live roots
// an exclusive operation opened, kept for it alone.

#include "sandbox/sandbox_gate.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "base/errors.h"

namespace sandboxd {
namespace {

/// The Error code `act` throws, or none.
std::optional<Code> RefusalOf(const std::function<void()>& act) {
  try {
    act();
  } catch (const Error& error) {
    return error.code();
  }
  return std::nullopt;
}

TEST(SandboxGateTest, ItsLifeIsItsStateUntilItBreaksOrEnds) {
  SandboxGate gate("00000000000000aa", SandboxState::kActive);
  EXPECT_EQ(gate.life(), SandboxLife::kActive);
  gate.SetState(SandboxState::kSuspended);
  EXPECT_EQ(gate.life(), SandboxLife::kSuspended);
  EXPECT_EQ(ToString(gate.life()), "suspended");
  gate.SetState(SandboxState::kActive);
  gate.MarkBroken("its commit 3 could neither finish nor be taken back");
  EXPECT_EQ(gate.life(), SandboxLife::kBroken);
  EXPECT_EQ(ToString(gate.life()), "broken");
  EXPECT_EQ(gate.state(), SandboxState::kActive) << "what the record keeps is not changed by breaking";
  gate.MarkDestroyed();
  EXPECT_EQ(gate.life(), SandboxLife::kDestroyed) << "an end outranks a break";
  EXPECT_EQ(ToString(gate.life()), "destroyed");
}

TEST(SandboxGateTest, EachLifeAllowsWhatItShould) {
  SandboxGate active("00000000000000aa", SandboxState::kActive);
  EXPECT_EQ(RefusalOf([&] { active.CheckActive("read the changes of"); }), std::nullopt);
  EXPECT_EQ(RefusalOf([&] { active.BeginExclusive("resume"); }), Code::kInvalidState) << "nothing to resume";

  SandboxGate suspended("00000000000000bb", SandboxState::kSuspended);
  EXPECT_EQ(RefusalOf([&] { suspended.CheckActive("read the changes of"); }), Code::kInvalidState);
  EXPECT_EQ(RefusalOf([&] { suspended.BeginJob(); }), Code::kInvalidState);
  EXPECT_EQ(RefusalOf([&] { ExclusiveOperation resume(suspended, "resume"); }), std::nullopt);
  EXPECT_EQ(RefusalOf([&] { ExclusiveOperation destroy(suspended, "destroy"); }), std::nullopt);

  SandboxGate broken("00000000000000cc", SandboxState::kActive);
  broken.MarkBroken("its commit could neither finish nor be taken back");
  for (const char* verb : {"commit", "discard", "destroy", "suspend"})
    EXPECT_EQ(RefusalOf([&] { broken.BeginExclusive(verb); }), Code::kInvalidState) << verb;
  EXPECT_EQ(RefusalOf([&] { broken.BeginJob(); }), Code::kInvalidState);

  SandboxGate destroyed("00000000000000dd", SandboxState::kActive);
  destroyed.MarkDestroyed();
  EXPECT_EQ(RefusalOf([&] { destroyed.CheckActive("read the changes of"); }), Code::kNotFound);
  EXPECT_EQ(RefusalOf([&] { destroyed.BeginJob(); }), Code::kNotFound);
}

/// The inode of an open descriptor.
ino_t InodeOf(const UniqueFd& fd) {
  struct stat st {};
  return fstat(fd.get(), &st) == 0 ? st.st_ino : 0;
}

TEST(SandboxGateTest, AnOperationKeepsTheLiveRootItOpenedFirstAndOnlyItDoes) {
  SandboxGate gate("00000000000000aa", SandboxState::kActive);
  UniqueFd first(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)), second(open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(first && second);
  const ino_t first_inode = InodeOf(first), second_inode = InodeOf(second);
  ASSERT_NE(first_inode, second_inode);

  // Outside an operation nothing is kept: each opening is its own.
  EXPECT_EQ(InodeOf(gate.KeepOperationRoot(0, UniqueFd(open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC)))), second_inode);
  EXPECT_FALSE(gate.OperationRoot(0).has_value());
  {
    ExclusiveOperation commit(gate, "commit");
    EXPECT_EQ(InodeOf(gate.KeepOperationRoot(0, std::move(first))), first_inode);
    // A later opening (the path now another directory) is the first one again.
    EXPECT_EQ(InodeOf(gate.KeepOperationRoot(0, std::move(second))), first_inode);
    auto kept = gate.OperationRoot(0);
    ASSERT_TRUE(kept.has_value());
    EXPECT_EQ(InodeOf(*kept), first_inode);
    EXPECT_FALSE(gate.OperationRoot(1).has_value());
  }
  EXPECT_FALSE(gate.OperationRoot(0).has_value()) << "the next operation opens its roots afresh";
}

}  // namespace
}  // namespace sandboxd
