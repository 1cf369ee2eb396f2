#include "base/tree_count.h"

#include <filesystem>
#include <system_error>

namespace sandboxd {

TreeCount CountTree(const std::string& top) {
  namespace fs = std::filesystem;
  TreeCount count{.entries = 1};
  std::error_code error;
  for (fs::recursive_directory_iterator it(top, fs::directory_options::skip_permission_denied, error), end; !error && it != end;
       it.increment(error)) {
    ++count.entries;
    auto status = it->symlink_status(error);
    if (!error && fs::is_regular_file(status)) count.bytes += it->file_size(error);
    error.clear();
  }
  return count;
}

}  // namespace sandboxd
