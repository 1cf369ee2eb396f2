#pragma once
/// What a call writes into a caller's fd (a diff, a change list) on its way there: the call
/// writes it into a spool (an unlinked file on disk) as fast as it makes it, and the relay's one
/// thread passes it on as the reader takes it, with writes that never block. Why: a caller that
/// does not read must never hold a worker (four users leaving Diffs in pipes nobody read once
/// held all 16 and stalled every other user, issue 40), and must not hold the daemon's memory
/// either (the spool is on disk, and at most `max_unread` bytes ahead of its reader). A reader
/// that takes nothing for `stall_ms` is given up on: its fd is closed and the call ends.
/// It never runs a call's work, and never waits on one fd while others could be served.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/errors.h"
#include "unique_fd.h"

namespace sandboxd {

class OutputRelay;

/// One call's output: the producer's side. Thread-safe.
class RelayedOutput {
 public:
  /// The spool, open for appending: a helper may write into it directly (then Grew).
  int spool_fd() const { return spool_.get(); }
  /// Appends `bytes` to the spool and passes them on (Grew).
  void Append(std::string_view bytes);
  /// The spool grew (a helper wrote into it): the relay passes it on. Throws the call's end when
  /// the reader went away or was given up on, and Error(kTooLarge) when the spool is more than
  /// the relay's max_unread ahead of its reader: the producer then stops.
  void Grew();
  /// Everything is written: the call ends once the reader has it all.
  void Finish();
  /// The producer failed: the call ends with `error` (what the reader has stays written).
  void Fail(const Error& error);

 private:
  friend class OutputRelay;
  RelayedOutput(OutputRelay& relay, uid_t uid, UniqueFd spool, UniqueFd reader, std::string what,
                std::function<void(const Error*)> done)
      : relay_(relay), uid_(uid), spool_(std::move(spool)), reader_(std::move(reader)), what_(std::move(what)), done_(std::move(done)) {}

  OutputRelay& relay_;
  const uid_t uid_;  ///< whose call (OutputRelay::Relaying)
  UniqueFd spool_;
  // The rest is the relay's, under its mutex.
  UniqueFd reader_;          ///< the caller's fd
  UniqueFd nonblocking_;     ///< the same pipe or tty opened anew without blocking (not the caller's flags)
  bool socket_ = false;      ///< written with MSG_DONTWAIT
  std::string what_;         ///< "the diff of sandbox 3fa2", for messages
  std::function<void(const Error*)> done_;
  uint64_t written_ = 0;     ///< spool bytes the producer made
  uint64_t sent_ = 0;        ///< spool bytes the reader took
  int64_t progress_ms_ = 0;  ///< when the reader last took bytes, or had all there was
  bool finished_ = false;
  std::unique_ptr<Error> end_;  ///< why the call ended early (reader gone, given up, producer failed)
  bool ended_ = false;          ///< done_ was called (or is about to be)
  bool counted_ = false;        ///< in OutputRelay::per_uid_ (once the producer is done)
};

class OutputRelay {
 public:
  /// Spools go in `spool_dir` (unlinked at once). `stall_ms`: [Limits] StalledReaderTimeout=.
  OutputRelay(std::string spool_dir, int64_t stall_ms, uint64_t max_unread);
  /// Ends the calls still relaying (their done gets an error) and stops the thread.
  ~OutputRelay();
  OutputRelay(const OutputRelay&) = delete;
  OutputRelay& operator=(const OutputRelay&) = delete;

  /// Starts passing a new spool of `uid`'s call on to `reader` (the caller's fd, open for
  /// writing). `done` is
  /// called once, on the relay's thread, with nullptr when the reader has everything or with
  /// why the call ended. `what` names the output in messages ("the diff of sandbox 3fa2").
  std::shared_ptr<RelayedOutput> Start(uid_t uid, UniqueFd reader, std::string what, std::function<void(const Error*)> done);

  int64_t stall_ms() const { return stall_ms_; }
  uint64_t max_unread() const { return max_unread_; }
  /// Calls whose output waits on its reader now, all users' or `uid`'s: in flight still, for
  /// the limits (a call still making its output is counted by its worker).
  size_t Relaying() const;
  size_t Relaying(uid_t uid) const;

 private:
  friend class RelayedOutput;
  void Wake();
  void Run();
  /// Passes on what `out` has and the reader takes now; ends it when it is over. Under mutex_.
  void PumpLocked(RelayedOutput& out, short revents, int64_t now_ms);
  void EndLocked(RelayedOutput& out, std::unique_ptr<Error> why);
  void CountLocked(RelayedOutput& out);

  std::string spool_dir_;
  const int64_t stall_ms_;
  const uint64_t max_unread_;
  mutable std::mutex mutex_;
  std::map<RelayedOutput*, std::shared_ptr<RelayedOutput>> outputs_;
  std::map<uid_t, size_t> per_uid_;  ///< outputs by uid whose producer is done, until done is called
  std::vector<std::shared_ptr<RelayedOutput>> ended_;  ///< whose done is still to be called (outside mutex_)
  std::vector<char> buffer_;
  UniqueFd wake_;  ///< an eventfd: a spool grew, a call started or ended, stopping
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sandboxd
