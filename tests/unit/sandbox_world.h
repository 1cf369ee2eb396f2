#pragma once
/// SandboxWorldTest: what a test of a sandbox's life needs, unprivileged: a temp dir holding a
/// state dir, a run dir and the store, overlays recorded rather than mounted
/// (recorded_mounts.h), a registry over them, and the test running as nobody when the binary is
/// root (unprivileged.h). Members in the order they must be made (and unmade in reverse).

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "base/credentials.h"
#include "base/fs_util.h"
#include "recorded_mounts.h"
#include "sandbox/sandbox_registry.h"
#include "store/store.h"
#include "temp_dir.h"
#include "unprivileged.h"

namespace sandboxd::testing {

class SandboxWorldTest : public ::testing::Test {
 protected:
  SandboxWorldTest() {
    MakeDirectory(layout_.SandboxesDir(), 0700);
    MakeDirectory(temp_ / "run", 0755);
  }

  /// A sandbox of the test's user, made as the daemon makes one (authorized).
  std::shared_ptr<Sandbox> Create(CreateRequest request) {
    return registry_.Create(request, LookupUser(geteuid()), [](const std::vector<std::string>&) {});
  }
  /// A sandbox over the directory `root` (made here), named as it.
  std::shared_ptr<Sandbox> CreateOver(const std::string& name, uint64_t ttl_sec = 0) {
    MakeDirectory(temp_ / name, 0755);
    CreateRequest request;
    request.roots = {temp_ / name};
    request.name = name;
    request.ttl_sec = ttl_sec;
    return Create(request);
  }

  ScopedTempDir temp_;
  RunAsNobody as_nobody_{temp_.path()};
  RecordedMounts mounts_;
  Layout layout_{StateDir(temp_), temp_ / "run", false, mounts_};
  Store store_{layout_.Database()};
  SandboxRegistry registry_{layout_, store_};

 private:
  /// The state directory, made (as nobody) before the store that lives in it.
  static std::string StateDir(const ScopedTempDir& temp) {
    MakeDirectory(temp / "state", 0700);
    return temp / "state";
  }
};

}  // namespace sandboxd::testing
