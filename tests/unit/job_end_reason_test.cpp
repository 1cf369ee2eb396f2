// Why a job ended is a word of the API (Job.Wait, the Finished signal): every reason the
// daemon can give has its own name, and the interface's documentation explains each one.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "jobs/job.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

TEST(JobEndReasonTest, EveryReasonHasItsOwnNameAndTheJobInterfaceExplainsIt) {
  const JobEndReason all[] = {JobEndReason::kExited,       JobEndReason::kFailed, JobEndReason::kCancelled, JobEndReason::kTimeout,
                              JobEndReason::kDisconnected, JobEndReason::kMemory, JobEndReason::kQuota};
  std::string xml = testing::ReadFile(SANDBOXD_SOURCE_DIR "/dbus/org.sandboxd.Sandbox1.Job.xml");
  ASSERT_FALSE(xml.empty());
  std::set<std::string> names;
  for (JobEndReason reason : all) {
    std::string name(ToString(reason));
    EXPECT_NE(name, "unknown");
    names.insert(name);
    EXPECT_NE(xml.find(name + " ("), std::string::npos) << "the Job interface does not explain the reason " << name;
  }
  EXPECT_EQ(names.size(), std::size(all)) << "two reasons share a name";
}

}  // namespace
}  // namespace sandboxd
