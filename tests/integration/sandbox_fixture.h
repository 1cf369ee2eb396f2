#pragma once
/// The fixture most integration tests share: one sandbox of alice's over a fresh project,
/// destroyed after the test, and the calls that drive it as alice.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.h"

namespace sandboxd::it {

class AliceSandboxTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  /// Runs in SetUp after the project is made and before the sandbox is created over it: the
  /// live files a test starts from.
  virtual void PrepareProject() {}

  /// sandboxctl as alice.
  Result Ctl(const std::vector<std::string>& args) const;
  /// A job in the sandbox (sh -c `script`, in the project); fails the test unless it exits 0.
  void Job(const std::string& script) const;
  /// `changes` of the sandbox, all of it.
  std::string Changes() const;

  std::string project_;
  std::string id_;
};

}  // namespace sandboxd::it
