#pragma once
/// A fuzz target's own model of an absolute path the daemon takes from a caller (a hidden path
/// or an allowed socket, hidden_paths.h and host_sockets.h), written without the daemon's code
/// so that the two can disagree.

#include <limits.h>

#include <string>

namespace sandboxd::fuzz {

/// Whether `path` is plainly absolute: not empty, starting with "/", no ".." component, shorter
/// than PATH_MAX. (D-Bus strings carry no NUL.)
inline bool PlainlyAbsolute(const std::string& path) {
  if (path.empty() || path.front() != '/' || path.size() >= PATH_MAX) return false;
  std::string component;
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (component == "..") return false;
      component.clear();
    } else {
      component += path[i];
    }
  }
  return true;
}

}  // namespace sandboxd::fuzz
