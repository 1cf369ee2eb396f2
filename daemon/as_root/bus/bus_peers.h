#pragma once
/// Which connections on the bus belong to a user: the recipients of the signals about that
/// user's sandboxes and jobs (owner_signal.h). Asked of the bus daemon at the moment of asking
/// (every unique name connected now, and the uid the bus daemon recorded for each), so a
/// connection that never called sandboxd counts as soon as it is on the bus: a desktop app's
/// listener, `gdbus monitor`, the owner's second connection. It must never take an identity
/// from anywhere but the bus daemon (not /proc, not what a peer says), never guess when the
/// bus daemon cannot answer (it throws: better no signal than one to the wrong user), and never
/// be asked on the bus loop thread (it waits for the bus daemon).

#include <sys/types.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace sandboxd {

/// What the bus daemon recorded of a connection when it connected.
struct PeerIdentity {
  uid_t uid = static_cast<uid_t>(-1);
  pid_t pid = 0;  ///< 0 when the bus daemon does not know it
};

/// The seam to the bus daemon (bus_directory_dbus.h over D-Bus; a fake in unit tests).
class BusDirectory {
 public:
  virtual ~BusDirectory() = default;
  /// Every name on the bus now (org.freedesktop.DBus.ListNames); well-known names may be among
  /// them. Throws when the bus daemon cannot say.
  virtual std::vector<std::string> Names() = 0;
  /// What the bus daemon recorded of `unique_name`; nothing when that name has left the bus
  /// meanwhile. Throws for any other failure.
  virtual std::optional<PeerIdentity> Identity(const std::string& unique_name) = 0;
};

class BusPeers {
 public:
  /// The one hook for leaving a connection of the owner's out (e.g. one whose process runs
  /// inside a job, which must learn nothing through sandboxd). Called once per connection (its
  /// answer is kept with the name: the facts it judges, recorded at connect time, do not
  /// change), with what the bus daemon recorded of it, outside any lock of ours; true leaves
  /// that connection out. None by default.
  using Excluded = std::function<bool(const std::string& unique_name, const PeerIdentity& identity)>;

  /// `own_pid`: the daemon's own connections (its process) are never recipients, whoever's
  /// uid they carry (in user mode, and for root's sandboxes, it is the owner's).
  explicit BusPeers(std::unique_ptr<BusDirectory> directory, pid_t own_pid = getpid());

  /// The unique names of `uid`'s connections on the bus now, ours and excluded ones left out.
  /// Throws Error(kFailed) when the bus daemon cannot say, and on the forbidden thread.
  std::vector<std::string> ConnectionsOf(uid_t uid);

  void SetExcluded(Excluded excluded);
  /// ConnectionsOf refuses to run on `thread` (the bus loop's): waiting there for the bus
  /// daemon would stall every caller, so a mistake shows in the log instead of as a hang.
  void ForbidThread(std::thread::id thread);

  /// How many unique names' identities are remembered (for tests: names gone are forgotten).
  size_t remembered() const;

 private:
  std::unique_ptr<BusDirectory> directory_;
  const pid_t own_pid_;
  mutable std::mutex mutex_;  ///< one ask of the bus daemon at a time; guards what follows
  /// Identity per unique name. A unique name is never reused on a bus, so what is remembered
  /// stays true for as long as the name is there; a name no longer listed is dropped.
  struct Known {
    PeerIdentity identity;
    std::optional<bool> excluded;  ///< the hook's answer, once asked
  };
  std::map<std::string, Known> known_;
  Excluded excluded_;
  std::thread::id forbidden_thread_;
};

}  // namespace sandboxd
