#pragma once
/// sandboxd as the review app reaches it: one bus connection served from the main loop
/// (bus_source.h), every call asynchronous, every answer handed to a callback on the main
/// thread. Signals only tell the app to read again: their contents are anyone's to send (any
/// process on the bus may emit a signal with sandboxd's interface), the answers to its calls
/// are the daemon's.

#include <sdbus-c++/sdbus-c++.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bus_source.h"
#include "listed_change.h"
#include "selector.h"

namespace sandboxd_review {

/// A refusal or failure of a call, as the daemon (or the bus) worded it.
struct Failure {
  std::string name;     ///< the D-Bus error name
  std::string message;  ///< one sentence, control bytes escaped
};
using Outcome = std::optional<Failure>;  ///< nullopt: done

struct SandboxSummary {
  std::string id;
  std::string name;
  std::string state;
  std::vector<std::string> roots;
  std::string path;  ///< object path
};

struct JobSummary {
  std::string id;
  std::string path;  ///< object path
  std::vector<std::string> argv;
  std::string state;  ///< running or finished
  int32_t exit_status = 0;
};

/// What the daemon says happened, for the window to read again.
struct DaemonEvents {
  std::function<void()> sandboxes_changed;                             ///< added, removed, state changed
  std::function<void(const std::string& why)> bus_lost;                ///< the connection failed: nothing more comes
  std::function<void(const std::string& path)> change_set_changed;     ///< after a job, decision, commit...
  std::function<void(const std::string& path, const std::vector<std::pair<std::string, std::string>>& seen, bool lost)>
      changes_seen;  ///< (wire name, kind) of changes a running job made; `lost`: some were not told
  std::function<void(const std::string& path)> review_requested;
  /// How far a commit, undo, suspend or resume has come: entries or bytes `done` of `total`
  /// (0: not counted in this phase); phase "done" or "failed" at its end.
  std::function<void(const std::string& path, const std::string& operation, const std::string& phase, uint64_t done, uint64_t total)> progress;
};

/// An answer still being written into a pipe; dropping it stops reading (the daemon's call
/// then ends on its closed pipe, and nothing more is handed out).
class PendingRead {
 public:
  virtual ~PendingRead() = default;
};

class DaemonClient {
 public:
  /// Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS is honoured), or the session bus for
  /// a user's own sandboxd. Throws sdbus::Error naming the bus when it cannot.
  DaemonClient(bool user_mode, DaemonEvents events);
  ~DaemonClient();

  void ListSandboxes(std::function<void(std::vector<SandboxSummary>, const Outcome&)> done);
  void GetInfo(const std::string& sandbox, std::function<void(std::map<std::string, sdbus::Variant>, const Outcome&)> done);
  void ListJobs(const std::string& sandbox, std::function<void(std::vector<JobSummary>, const Outcome&)> done);
  void CancelJob(const std::string& job, std::function<void(const Outcome&)> done);
  /// Decide: `verdict` approved or rejected, with the person's note ("" for none).
  void Decide(const std::string& sandbox, const std::vector<sandboxd::api::Selector>& selectors, const std::string& verdict,
              const std::string& note, std::function<void(const Outcome&)> done);
  /// Commit of the approved changes (`force`: over conflicts); polkit may ask the desktop's
  /// agent for a password.
  void Commit(const std::string& sandbox, bool force, std::function<void(uint32_t committed, const Outcome&)> done);
  void Undo(const std::string& sandbox, std::function<void(const Outcome&)> done);
  void Discard(const std::string& sandbox, std::function<void(const Outcome&)> done);
  /// ListChanges: each change as it is read (its fields and its line), then `done`.
  std::unique_ptr<PendingRead> ListChanges(const std::string& sandbox,
                                           std::function<void(sandboxctl::ListedChange, std::string_view line)> each,
                                           std::function<void(const Outcome&)> done);
  /// Diff of `selector` (whole), at most `limit` bytes of it: `done` gets the text and whether
  /// it was cut.
  std::unique_ptr<PendingRead> Diff(const std::string& sandbox, const sandboxd::api::Selector& selector, size_t limit,
                                    std::function<void(std::string text, bool cut, const Outcome&)> done);

 private:
  sdbus::IProxy& Proxy(const std::string& path);
  void OnSandboxSignal(sdbus::Message& signal);

  std::unique_ptr<sdbus::IConnection> bus_;
  Glib::RefPtr<BusSource> source_;
  DaemonEvents events_;
  std::unique_ptr<sdbus::IProxy> manager_;
  sdbus::Slot sandbox_signals_;
  /// One proxy per object called: an async call's reply is lost with its proxy.
  std::map<std::string, std::unique_ptr<sdbus::IProxy>> proxies_;
};

/// `error` as a Failure: its name, and its message with control bytes escaped (a message may
/// quote names a job chose).
Failure FailureOf(const sdbus::Error& error);

}  // namespace sandboxd_review
