// DirectoryListing: the entries without "." and "..", through a descriptor of its own that
// closes with it, even when the walk is left by a throw; the caller's descriptor untouched.

#include "base/directory_listing.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <stdexcept>

#include "base/fs_util.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;
using testing::WriteFile;

size_t OpenFds() { return DirectoryListing::AtPath("/proc/self/fd").Names().size(); }

TEST(DirectoryListingTest, ListsEveryEntryButDotAndDotDotThroughItsOwnDescriptor) {
  ScopedTempDir dir;
  WriteFile(dir / "a", "a");
  MakeDirectory(dir / "b", 0755);
  UniqueFd path(open(dir.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(path);
  DirectoryListing listing = DirectoryListing::Of(path.get());  // an O_PATH fd will do
  ASSERT_TRUE(listing);
  EXPECT_NE(listing.fd(), path.get());
  struct stat st;
  EXPECT_EQ(fstatat(listing.fd(), "b", &st, 0), 0) << "its descriptor is not the directory's";
  std::vector<std::string> names = listing.Names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(listing.Next(), nullptr);
}

TEST(DirectoryListingTest, ClosesItsDescriptorHoweverTheWalkEnds) {
  ScopedTempDir dir;
  WriteFile(dir / "a", "a");
  const size_t before = OpenFds();
  try {
    DirectoryListing listing = DirectoryListing::AtPath(dir.path());
    ASSERT_NE(listing.Next(), nullptr);
    throw std::runtime_error("left half-way");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(OpenFds(), before) << "a listing left by a throw kept its descriptor";
}

TEST(DirectoryListingTest, AMissingDirectoryIsAnInvalidListingWithErrno) {
  ScopedTempDir dir;
  DirectoryListing listing = DirectoryListing::AtPath(dir / "missing");
  EXPECT_FALSE(listing);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(listing.Next(), nullptr);
  EXPECT_TRUE(listing.Names().empty());
}

}  // namespace
}  // namespace sandboxd
