#include "service/host_check.h"

#include <gtest/gtest.h>

namespace sandboxd {
namespace {

bool Says(const std::vector<std::string>& problems, const std::string& part) {
  for (const auto& problem : problems)
    if (problem.find(part) != std::string::npos) return true;
  return false;
}

TEST(HostCheckTest, AMachineWhereEverythingWorksHasNothingToSay) {
  HostFacts facts;
  facts.max_user_namespaces = 63000;
  EXPECT_TRUE(DiagnoseHost(facts).empty());
}

TEST(HostCheckTest, EachMissingPieceIsNamedWithWhereToChangeIt) {
  HostFacts facts;
  facts.bwrap_error = "bwrap: No permissions to creating new namespace";
  facts.max_user_namespaces = 0;
  auto problems = DiagnoseHost(facts);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_TRUE(Says(problems, "user.max_user_namespaces = 0")) << problems[0];
  EXPECT_TRUE(Says(problems, "bwrap said: bwrap: No permissions")) << problems[0];

  facts.max_user_namespaces = 100;
  facts.unprivileged_userns_clone = 0;
  EXPECT_TRUE(Says(DiagnoseHost(facts), "kernel.unprivileged_userns_clone = 0"));

  facts.unprivileged_userns_clone = 1;
  facts.apparmor_restrict_userns = 1;
  EXPECT_TRUE(Says(DiagnoseHost(facts), "apparmor_restrict_unprivileged_userns = 1"));
}

TEST(HostCheckTest, InsideAContainerItSaysWhichAndWhatTheContainerLacks) {
  HostFacts facts;
  facts.container = "docker";
  facts.bwrap_error = "bwrap: Creating new namespace failed: Operation not permitted";
  facts.overlay_error = "cannot mount overlay: Operation not permitted";
  auto problems = DiagnoseHost(facts);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_TRUE(Says(problems, "overlayfs cannot be mounted here (sandboxd runs inside docker)"));
  EXPECT_TRUE(Says(problems, "the container does not let its processes create user, pid or network namespaces"));
}

TEST(HostCheckTest, AKernelWithoutOverlayfsIsNamed) {
  HostFacts facts;
  facts.overlay_listed = false;
  EXPECT_TRUE(Says(DiagnoseHost(facts), "no overlay file system (modprobe overlay)"));
}

TEST(HostCheckTest, ThisMachineReadsWithoutFailing) {
  HostFacts facts = ReadHostFacts();
  EXPECT_TRUE(facts.overlay_listed);  // the suite's integration tests mount overlays here
}

}  // namespace
}  // namespace sandboxd
