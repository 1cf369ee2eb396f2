#pragma once
/// Trees deeper than one syscall takes (a relative path past PATH_MAX), made and read in the
/// tests by walking them a directory at a time, as the code under test must.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "unique_fd.h"

namespace sandboxd::testing {

/// The name of level `level` (from 1) of a deep tree: `length` bytes, told apart by a prefix.
inline std::string DeepName(int level, size_t length = 200) {
  std::string name = "d" + std::to_string(level) + "-";
  name.resize(length, 'x');
  return name;
}

/// "DeepName(1)/DeepName(2)/.../DeepName(depth)".
inline std::string DeepPath(int depth, size_t length = 200) {
  std::string path;
  for (int level = 1; level <= depth; ++level) path += (path.empty() ? "" : "/") + DeepName(level, length);
  return path;
}

/// Makes DeepPath(depth) beneath `dir_fd` (levels that exist are kept), one mkdirat at a time;
/// the deepest directory opened (O_RDONLY), or invalid on failure.
inline UniqueFd MakeDeepDirs(int dir_fd, int depth, size_t length = 200) {
  UniqueFd current(fcntl(dir_fd, F_DUPFD_CLOEXEC, 3));
  for (int level = 1; current && level <= depth; ++level) {
    std::string name = DeepName(level, length);
    if (mkdirat(current.get(), name.c_str(), 0755) != 0 && errno != EEXIST) return UniqueFd();
    current.reset(openat(current.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  return current;
}

/// Opens DeepPath(depth) beneath `dir_fd` one level at a time; invalid when a level is missing.
inline UniqueFd OpenDeepDirs(int dir_fd, int depth, size_t length = 200) {
  UniqueFd current(fcntl(dir_fd, F_DUPFD_CLOEXEC, 3));
  for (int level = 1; current && level <= depth; ++level)
    current.reset(openat(current.get(), DeepName(level, length).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  return current;
}

/// A file's content through a directory fd ("" when it cannot be read).
inline std::string ReadAt(int dir_fd, const std::string& name) {
  UniqueFd file(openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  std::string content;
  char buffer[4096];
  for (ssize_t got; file && (got = read(file.get(), buffer, sizeof buffer)) > 0;) content.append(buffer, static_cast<size_t>(got));
  return content;
}

}  // namespace sandboxd::testing
