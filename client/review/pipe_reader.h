#pragma once
/// A pipe whose write end goes to the daemon with a call that answers into it (ListChanges,
/// Diff: answers far bigger than a D-Bus message may be) and whose read end is read from the
/// main loop as the daemon writes, so that a long answer never stalls the window.

#include <glibmm/main.h>
#include <sdbus-c++/sdbus-c++.h>

#include <functional>
#include <memory>
#include <string_view>

#include "unique_fd.h"

namespace sandboxd_review {

class PipeReader {
 public:
  /// `on_data` gets each piece as it is read; `on_end` once the daemon has closed its end (or
  /// reading failed: then with the errno's text).
  PipeReader(std::function<void(std::string_view)> on_data, std::function<void(const std::string& error)> on_end);
  ~PipeReader();
  PipeReader(const PipeReader&) = delete;
  PipeReader& operator=(const PipeReader&) = delete;

  /// The write end, for the call's arguments; this process keeps no copy of it, so the end of
  /// the daemon's writes is seen as the end of the pipe.
  sdbus::UnixFd TakeWriteEnd();

 private:
  bool OnReadable(Glib::IOCondition condition);

  sandboxd::UniqueFd read_end_;
  sandboxd::UniqueFd write_end_;
  std::function<void(std::string_view)> on_data_;
  std::function<void(const std::string&)> on_end_;
  sigc::connection watch_;
  /// False once destroyed: a callback may destroy this reader while it reads.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace sandboxd_review
