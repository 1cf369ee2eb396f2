#include "jobs/host_sockets.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "base/errors.h"
#include "jobs/hidden_paths.h"
#include "helper_clients/fs_identity.h"

namespace sandboxd {

std::vector<std::string> BoundSocketPaths(std::string_view proc_net_unix) {
  std::vector<std::string> paths;
  size_t start = 0;
  while (start < proc_net_unix.size()) {
    size_t end = proc_net_unix.find('\n', start);
    if (end == std::string_view::npos) end = proc_net_unix.size();
    std::string_view line = proc_net_unix.substr(start, end - start);
    start = end + 1;
    // "Num RefCount Protocol Flags Type St Inode Path": the path is what follows the seventh
    // field and its space; bound by a path, it starts with '/' (abstract ones with '@').
    size_t at = 0;
    for (int field = 0; field < 7 && at != std::string_view::npos; ++field) {
      at = line.find_first_not_of(' ', at);
      if (at != std::string_view::npos) at = line.find(' ', at);
    }
    if (at == std::string_view::npos || at + 1 >= line.size() || line[at + 1] != '/') continue;
    paths.emplace_back(line.substr(at + 1));
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

std::vector<std::string> HostBoundSocketPaths() {
  std::ifstream in("/proc/net/unix");
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return BoundSocketPaths(text.str());
}

std::string AllowedSocketSyntaxError(const std::string& path) {
  return HiddenPathSyntaxError(path, /*allow_home=*/false).value_or("");
}

std::optional<std::string> SocketTheOwnerReaches(const std::string& path, const UserCredentials& owner) {
  char buffer[PATH_MAX];
  struct stat st;
  ScopedFileSystemIdentity identity(owner);
  if (realpath(path.c_str(), buffer) == nullptr || lstat(buffer, &st) != 0 || !S_ISSOCK(st.st_mode)) return std::nullopt;
  return std::string(buffer);
}

std::string ResolveAllowedSocket(const std::string& path, const UserCredentials& owner, const std::string& what) {
  if (std::string why = AllowedSocketSyntaxError(path); !why.empty())
    throw Error(Code::kInvalidPath, "cannot allow socket " + path + " for " + what + ": " + why);
  auto found = SocketTheOwnerReaches(path, owner);
  if (!found) throw Error(Code::kInvalidPath, "cannot allow socket " + path + " for " + what + ": it is not a socket you can reach");
  return *found;
}

}  // namespace sandboxd
