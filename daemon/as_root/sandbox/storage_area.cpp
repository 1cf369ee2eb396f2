#include "sandbox/storage_area.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "unique_fd.h"

namespace sandboxd {
namespace {

std::string ParentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

/// Makes `path` (a directory only root may use) unless it is there, and checks that what is
/// there is exactly that, on device `dev`. Returns why not, or "".
std::string MakeRootOnlyDirectory(const std::string& path, dev_t dev) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return "cannot make " + path + ": " + strerror(errno);
  UniqueFd dir(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (!dir || fstat(dir.get(), &st) != 0) return "cannot open " + path + ": " + strerror(errno);
  if (st.st_uid != 0 || (st.st_mode & 07777) != 0700 || st.st_dev != dev)
    return path + " is not a directory of sandboxd's (root-owned, mode 0700, on the root's file system)";
  return "";
}

}  // namespace

StoreChoice ChooseStore(const std::string& root, const std::string& state_dir) {
  struct stat state_st, root_st;
  if (stat(state_dir.c_str(), &state_st) != 0 || lstat(root.c_str(), &root_st) != 0)
    return {"", "cannot stat " + root + " or the state directory"};
  if (state_st.st_dev == root_st.st_dev) return {};
  // The top of the root's file system: its highest ancestor on the same device.
  std::string top = root;
  while (top != "/") {
    struct stat parent_st;
    if (lstat(ParentOf(top).c_str(), &parent_st) != 0 || parent_st.st_dev != root_st.st_dev) break;
    top = ParentOf(top);
  }
  if (top == root) return {"", root + " is the top of its file system"};
  struct stat top_st;
  if (lstat(top.c_str(), &top_st) != 0 || !S_ISDIR(top_st.st_mode) || top_st.st_uid != 0 || (top_st.st_mode & 022) != 0)
    return {"", top + ", the top of the file system of " + root + ", may be written by others than root"};
  std::string area = (top == "/" ? "" : top) + "/.sandboxd";
  for (const std::string& dir : {area, area + "/sandboxes", area + "/trash"})
    if (std::string why = MakeRootOnlyDirectory(dir, root_st.st_dev); !why.empty()) return {"", why};
  return {area, ""};
}

}  // namespace sandboxd
