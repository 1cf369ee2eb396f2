#include "sandbox/sandbox_paths.h"

#include <algorithm>

#include "sandbox/quota_layer.h"

namespace sandboxd {

SandboxPaths::SandboxPaths(const Layout& layout, std::string id, std::vector<std::string> stores, bool hard_quota)
    : layout_(&layout), id_(std::move(id)), stores_(std::move(stores)), hard_quota_(hard_quota) {}

std::string SandboxPaths::StorageDir(size_t root) const {
  return hard_quota_ ? QuotaLayer::LayersDirIn(layout_->QuotaMount(id_)) : StoreDir(root);
}

std::vector<std::string> SandboxPaths::StorageDirs() const {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& dir) {
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  };
  for (size_t i = 0; i < stores_.size(); ++i) add(StorageDir(i));
  if (hard_quota_)
    for (size_t i = 0; i < stores_.size(); ++i) add(StoreDir(i));
  return dirs;
}

}  // namespace sandboxd
