#pragma once
/// What the attack tests share: programs and libraries an attacker would build, compiled at
/// test time into a directory that jobs see (the attacker's code must run where the attack
/// needs it: in a job, in bwrap, beside a job as the owner), and small probes of the host.

#include <sys/types.h>

#include <string>

#include "harness.h"

namespace sandboxd::it {

/// Compiles `c_source` with the system's C compiler into World().job_visible_dir()/`name`
/// (`shared`: a shared library, for LD_PRELOAD), readable and executable by everyone; returns
/// its path, or "" with a test failure naming the compiler's complaint.
std::string CompileC(const std::string& name, const std::string& c_source, bool shared = false);

/// A process as root that does nothing until killed: a victim whose death an attack wants.
/// Killed and reaped by the destructor.
class RootSleeper {
 public:
  RootSleeper();
  ~RootSleeper();
  RootSleeper(const RootSleeper&) = delete;
  RootSleeper& operator=(const RootSleeper&) = delete;
  pid_t pid() const { return pid_; }
  /// Whether it is still alive (not killed by someone else).
  bool Alive() const;

 private:
  pid_t pid_ = -1;
};

/// The uid of a test user.
uid_t UidOf(const std::string& user);

}  // namespace sandboxd::it
