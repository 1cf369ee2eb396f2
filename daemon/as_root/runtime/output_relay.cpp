#include "runtime/output_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace sandboxd {
namespace {

constexpr size_t kChunk = 64 * 1024;

int64_t NowMs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1000 + now.tv_nsec / 1000000;
}

/// An unlinked file in `dir` for a spool: on disk, not on the daemon's heap, and gone with its
/// last fd whatever happens to the daemon.
UniqueFd OpenSpool(const std::string& dir) {
  UniqueFd spool(open(dir.c_str(), O_TMPFILE | O_RDWR | O_APPEND | O_CLOEXEC, 0600));
  if (spool) return spool;
  if (errno != EOPNOTSUPP && errno != EISDIR) ThrowErrno("cannot make a spool in " + dir);
  std::string name = dir + "/.spool-XXXXXX";
  spool.reset(mkostemp(name.data(), O_APPEND | O_CLOEXEC));
  if (!spool) ThrowErrno("cannot make a spool in " + dir);
  unlink(name.c_str());
  return spool;
}

std::string Mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

void RelayedOutput::Append(std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t put = write(spool_.get(), bytes.data() + done, bytes.size() - done);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) ThrowErrno("cannot spool " + what_);
    done += static_cast<size_t>(put);
  }
  Grew();
}

void RelayedOutput::Grew() {
  struct stat st;
  if (fstat(spool_.get(), &st) != 0) ThrowErrno("cannot read the spool of " + what_);
  std::lock_guard lock(relay_.mutex_);
  if (end_) throw *end_;
  written_ = static_cast<uint64_t>(st.st_size);
  if (written_ - sent_ > relay_.max_unread_)
    throw Error(Code::kQuotaExceeded, what_ + " is more than " + Mib(relay_.max_unread_) +
                                          " ahead of its reader, the most sandboxd keeps for one call; gave up");
  relay_.Wake();
}

void RelayedOutput::Finish() {
  std::lock_guard lock(relay_.mutex_);
  finished_ = true;
  relay_.CountLocked(*this);
  relay_.Wake();
}

void RelayedOutput::Fail(const Error& error) {
  std::lock_guard lock(relay_.mutex_);
  if (!end_) end_ = std::make_unique<Error>(error);
  relay_.CountLocked(*this);
  relay_.Wake();
}

void OutputRelay::CountLocked(RelayedOutput& out) {
  // Counted from when its producer is done: until then the call is counted by its worker.
  if (out.ended_ || out.counted_) return;
  out.counted_ = true;
  ++per_uid_[out.uid_];
}

OutputRelay::OutputRelay(std::string spool_dir, int64_t stall_ms, uint64_t max_unread)
    : spool_dir_(std::move(spool_dir)), stall_ms_(stall_ms), max_unread_(max_unread), buffer_(kChunk) {
  wake_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_) ThrowErrno("cannot make the output relay's eventfd");
  thread_ = std::thread([this] { Run(); });
}

OutputRelay::~OutputRelay() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    Wake();
  }
  thread_.join();
}

size_t OutputRelay::Relaying() const {
  std::lock_guard lock(mutex_);
  size_t count = 0;
  for (const auto& [uid, calls] : per_uid_) count += calls;
  return count;
}

size_t OutputRelay::Relaying(uid_t uid) const {
  std::lock_guard lock(mutex_);
  auto found = per_uid_.find(uid);
  return found == per_uid_.end() ? 0 : found->second;
}

std::shared_ptr<RelayedOutput> OutputRelay::Start(uid_t uid, UniqueFd reader, std::string what, std::function<void(const Error*)> done) {
  std::shared_ptr<RelayedOutput> out(
      new RelayedOutput(*this, uid, OpenSpool(spool_dir_), std::move(reader), std::move(what), std::move(done)));
  struct stat st;
  if (fstat(out->reader_.get(), &st) != 0) ThrowErrno("cannot inspect the output fd of " + out->what_);
  if (S_ISSOCK(st.st_mode)) {
    out->socket_ = true;
  } else if (S_ISFIFO(st.st_mode) || isatty(out->reader_.get())) {
    // Why a second open and not O_NONBLOCK on the caller's fd: flags belong to the open file,
    // which the caller shares; its own writes must not start failing with EAGAIN.
    std::string self = "/proc/self/fd/" + std::to_string(out->reader_.get());
    out->nonblocking_.reset(open(self.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!out->nonblocking_ && errno == ENXIO) throw Error(Code::kFailed, "the reader of " + out->what_ + " went away");
    if (!out->nonblocking_) ThrowErrno("cannot open the output fd of " + out->what_ + " without blocking");
  }
  std::lock_guard lock(mutex_);
  if (stopping_) throw Error(Code::kFailed, "sandboxd is stopping; " + out->what_ + " was not written");
  out->progress_ms_ = NowMs();
  outputs_.emplace(out.get(), out);
  Wake();
  return out;
}

void OutputRelay::Wake() {
  uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof one);
}

void OutputRelay::EndLocked(RelayedOutput& out, std::unique_ptr<Error> why) {
  if (out.ended_) return;
  out.ended_ = true;
  if (why && !out.end_) out.end_ = std::move(why);
  // The reader's fd closes now: a reader given up on sees the end of its pipe.
  out.nonblocking_.reset();
  out.reader_.reset();
  auto found = outputs_.find(&out);
  ended_.push_back(found->second);
  outputs_.erase(found);
}

void OutputRelay::PumpLocked(RelayedOutput& out, short revents, int64_t now_ms) {
  if (out.end_) return EndLocked(out, nullptr);
  while (out.sent_ < out.written_) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(out.written_ - out.sent_, kChunk));
    const bool blocking = !out.socket_ && !out.nonblocking_;
    // A file or other device has no reader to wait for; still, after a poll that said "room",
    // PIPE_BUF bytes go without blocking wherever they go.
    if (blocking && !(revents & POLLOUT)) break;
    if (blocking) want = std::min<size_t>(want, PIPE_BUF);
    ssize_t got = pread(out.spool_.get(), buffer_.data(), want, static_cast<off_t>(out.sent_));
    if (got <= 0) return EndLocked(out, std::make_unique<Error>(Code::kFailed, "cannot read back the spool of " + out.what_));
    ssize_t put = out.socket_ ? send(out.reader_.get(), buffer_.data(), static_cast<size_t>(got), MSG_DONTWAIT | MSG_NOSIGNAL)
                              : write(out.nonblocking_ ? out.nonblocking_.get() : out.reader_.get(), buffer_.data(), static_cast<size_t>(got));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (put < 0 && (errno == EPIPE || errno == ECONNRESET))
      return EndLocked(out, std::make_unique<Error>(Code::kFailed, "the reader of " + out.what_ + " went away"));
    if (put < 0) return EndLocked(out, std::make_unique<Error>(Code::kFailed, "cannot write " + out.what_ + ": " + strerror(errno)));
    out.sent_ += static_cast<uint64_t>(put);
    out.progress_ms_ = now_ms;
    if (blocking) break;  // one piece per poll
  }
  if (out.sent_ == out.written_) {
    out.progress_ms_ = now_ms;  // a reader that has everything there is is not stalling
    if (out.finished_) return EndLocked(out, nullptr);
  }
  if (revents & (POLLERR | POLLHUP))
    return EndLocked(out, std::make_unique<Error>(Code::kFailed, "the reader of " + out.what_ + " went away"));
  if (stall_ms_ > 0 && now_ms - out.progress_ms_ >= stall_ms_)
    EndLocked(out, std::make_unique<Error>(Code::kFailed, "the reader of " + out.what_ + " took nothing for " +
                                                              std::to_string(stall_ms_ / 1000) +
                                                              " s ([Limits] StalledReaderTimeout=); gave up and closed it"));
}

void OutputRelay::Run() {
  std::vector<pollfd> polled;
  std::vector<RelayedOutput*> of;
  for (;;) {
    std::vector<std::shared_ptr<RelayedOutput>> ended;
    int timeout = -1;
    {
      std::unique_lock lock(mutex_);
      if (stopping_) {
        for (auto& [key, out] : outputs_) {
          out->end_ = std::make_unique<Error>(Code::kFailed, "sandboxd stopped before " + out->what_ + " was read");
          out->ended_ = true;
          ended_.push_back(out);
        }
        outputs_.clear();
      }
      ended.swap(ended_);
      if (stopping_ && ended.empty()) return;
      polled.assign(1, pollfd{wake_.get(), POLLIN, 0});
      of.assign(1, nullptr);
      const int64_t now = NowMs();
      for (auto& [key, out] : outputs_) {
        const bool pending = out->sent_ < out->written_;
        // Polled without events too: a pipe whose reader closed reports POLLERR all the same.
        int fd = out->nonblocking_ ? out->nonblocking_.get() : out->reader_.get();
        polled.push_back(pollfd{fd, static_cast<short>(pending ? POLLOUT : 0), 0});
        of.push_back(key);
        if (pending && stall_ms_ > 0) {
          int64_t left = std::max<int64_t>(0, out->progress_ms_ + stall_ms_ - now);
          timeout = timeout < 0 ? static_cast<int>(std::min<int64_t>(left, INT_MAX)) : std::min(timeout, static_cast<int>(std::min<int64_t>(left, INT_MAX)));
        }
      }
    }
    // Outside the lock: done replies on the bus, and may start another call's output.
    for (auto& out : ended) {
      auto done = std::move(out->done_);
      if (done) done(out->end_.get());
      // Counted until answered: a user's calls in flight include those waiting on a reader.
      std::lock_guard lock(mutex_);
      if (out->counted_ && --per_uid_[out->uid_] == 0) per_uid_.erase(out->uid_);
    }
    if (!ended.empty()) continue;
    if (poll(polled.data(), polled.size(), timeout) < 0 && errno != EINTR) polled.resize(1);
    uint64_t drained;
    (void)!read(wake_.get(), &drained, sizeof drained);
    std::lock_guard lock(mutex_);
    const int64_t now = NowMs();
    for (size_t i = 1; i < polled.size(); ++i) {
      auto found = outputs_.find(of[i]);
      if (found != outputs_.end()) PumpLocked(*found->second, polled[i].revents, now);
    }
    // Outputs that grew, finished or failed since the poll was set up have no revents yet.
    for (auto it = outputs_.begin(); it != outputs_.end();) {
      RelayedOutput& out = *(it++)->second;
      if (out.end_ || (out.finished_ && out.sent_ == out.written_)) PumpLocked(out, 0, now);
    }
  }
}

}  // namespace sandboxd
