#pragma once
/// RunAsNobody: the rest of a test runs as nobody when the test binary is root (as in CI), so
/// that what an owner may not do (write where the owner cannot) holds in a test there too, and
/// the code under test shows it needs no privilege. Every uid and gid becomes nobody's (the
/// daemon's own checks of a dropped child insist on all three), and the capabilities stay only
/// in the permitted set (PR_SET_KEEPCAPS), unused until the end raises CAP_SETUID and
/// CAP_SETGID to become root again. `dir` (made by root) is given to nobody first. A test
/// binary that is not root runs as itself.

#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/background_close.h"
#include "base/errors.h"

namespace sandboxd::testing {

/// Whether the test binary started as root: read before any test runs, since a RunAsNobody
/// makes geteuid() nobody's for the rest of its test (SetUp included).
inline const bool kStartedAsRoot = geteuid() == 0;

class RunAsNobody {
 public:
  static constexpr uid_t kNobody = 65534;

  explicit RunAsNobody(const std::string& dir) : was_root_(geteuid() == 0) {
    if (!was_root_) return;
    // Every thread changes credentials with the calls below, and only this one gets its
    // capabilities back at the end: no other may be running (a background close).
    FlushBackgroundCloses();
    groups_.resize(static_cast<size_t>(getgroups(0, nullptr)));
    if (getgroups(static_cast<int>(groups_.size()), groups_.data()) < 0) ThrowErrno("getgroups");
    if (chown(dir.c_str(), kNobody, kNobody) != 0) ThrowErrno("cannot give " + dir + " to nobody");
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 || setgroups(0, nullptr) != 0 || setresgid(kNobody, kNobody, kNobody) != 0 ||
        setresuid(kNobody, kNobody, kNobody) != 0)
      ThrowErrno("cannot become nobody");
  }
  ~RunAsNobody() {
    if (!was_root_) return;
    // Root again, as the test binary was: the kept capabilities allow it.
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (syscall(SYS_capget, &header, data) != 0) std::abort();
    data[0].effective |= (1u << CAP_SETUID) | (1u << CAP_SETGID);
    if (syscall(SYS_capset, &header, data) != 0) std::abort();
    if (setresuid(0, 0, 0) != 0 || setresgid(0, 0, 0) != 0 || setgroups(groups_.size(), groups_.data()) != 0) std::abort();
    prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
  }
  RunAsNobody(const RunAsNobody&) = delete;
  RunAsNobody& operator=(const RunAsNobody&) = delete;

 private:
  const bool was_root_;
  std::vector<gid_t> groups_;
};

}  // namespace sandboxd::testing
