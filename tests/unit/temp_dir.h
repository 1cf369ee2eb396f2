#pragma once
/// ScopedTempDir: a fresh directory under /tmp for one test, removed with everything in it
/// (after unmounting anything a test left mounted below it).

#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
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
    std::string command = "rm -rf --one-file-system '" + path_ + "'";
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

}  // namespace sandboxd::testing
