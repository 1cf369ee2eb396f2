#pragma once
/// ScopedTempDir: a fresh directory under /tmp for one test, removed with everything in it
/// (after unmounting anything a test left mounted below it).

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace sandboxd::testing {

class ScopedTempDir {
 public:
  ScopedTempDir() {
    char templ[] = "/tmp/sandboxd-test-XXXXXX";
    if (mkdtemp(templ) != nullptr) path_ = templ;
  }
  ~ScopedTempDir() {
    if (path_.empty()) return;
    // As a user, made writable first: a test's read-only directory is removable only by root
    // otherwise. (Never as root, where the tree might still hold a mount of something real.)
    std::string command = (geteuid() != 0 ? "chmod -R u+rwx '" + path_ + "' 2>/dev/null; " : std::string()) +
                          "rm -rf --one-file-system '" + path_ + "'";
    if (std::system(command.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", path_.c_str());
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& content, mode_t mode = 0644) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  chmod(path.c_str(), mode);
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

/// Whether the file system under `dir` takes trusted xattrs (root only). Only ENOTSUP says no:
/// any other refusal fails the test where the attributes are set.
inline bool TrustedXattrsWork(const std::string& dir) {
  std::string probe = dir + "/.xattr-probe";
  WriteFile(probe, "");
  bool works = lsetxattr(probe.c_str(), "trusted.sandboxd.probe", "1", 1, 0) == 0 || errno != ENOTSUP;
  unlink(probe.c_str());
  return works;
}

/// Whether anything (a dangling symlink included) is at `path`.
inline bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

/// lstat of `path`; a failure fails the test and gives a zeroed stat.
inline struct stat Lstat(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) ADD_FAILURE() << "cannot lstat " << path << ": " << strerror(errno);
  return st;
}

}  // namespace sandboxd::testing
