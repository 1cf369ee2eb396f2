#pragma once
/// What the attack tests share: programs and libraries an attacker would build, compiled at
/// test time into a directory that jobs see (the attacker's code must run where the attack
/// needs it: in a job, in bwrap, beside a job as the owner), and small probes of the host.

#include <sys/types.h>

#include <string>
#include <vector>

#include "harness.h"

namespace sandboxd::it {

/// Compiles `c_source` with the system's C compiler into World().job_visible_dir()/`name`
/// (`shared`: a shared library, for LD_PRELOAD), readable and executable by everyone; returns
/// its path, or "" with a test failure naming the compiler's complaint.
std::string CompileC(const std::string& name, const std::string& c_source, bool shared = false);

/// A process (root's, or `user`'s) that does nothing until killed: a victim whose death an
/// attack wants. Killed and reaped by the destructor.
class Sleeper {
 public:
  explicit Sleeper(const std::string& user = "root");
  ~Sleeper();
  Sleeper(const Sleeper&) = delete;
  Sleeper& operator=(const Sleeper&) = delete;
  pid_t pid() const { return pid_; }
  /// Whether it is still alive (not killed by someone else).
  bool Alive() const;

 private:
  pid_t pid_ = -1;
};

/// Starts `argv` as `user` (with the user's groups) without waiting; its output goes nowhere.
pid_t SpawnAs(const std::string& user, const std::vector<std::string>& argv);

/// The uid of a test user.
uid_t UidOf(const std::string& user);

}  // namespace sandboxd::it
