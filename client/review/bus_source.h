#pragma once
/// The bus connection served from the GLib main loop the window runs in: replies and signals
/// are handled on the one thread that owns the widgets, so no handler needs a lock or a hop
/// between threads, and a call never blocks the window (every call the app makes is async).

#include <glibmm/main.h>
#include <sdbus-c++/sdbus-c++.h>

#include <functional>
#include <string>

namespace sandboxd_review {

class BusSource final : public Glib::Source {
 public:
  /// Attaches a source serving `bus` to the default main context. `bus` must outlive it: the
  /// app holds both for its whole run. `on_lost` is told why, once, if the connection fails
  /// (the bus went away): the source then stops.
  static Glib::RefPtr<BusSource> AttachTo(sdbus::IConnection& bus, std::function<void(const std::string&)> on_lost);

 private:
  BusSource(sdbus::IConnection& bus, std::function<void(const std::string&)> on_lost);
  // Asks sd-bus, before every poll, what it waits for: it wants POLLOUT only while messages
  // wait to be written, and a deadline only while a call waits for its reply.
  bool prepare(int& timeout) override;
  bool check() override;
  bool dispatch(sigc::slot_base* slot) override;

  sdbus::IConnection& bus_;
  std::function<void(const std::string&)> on_lost_;
  Glib::PollFD poll_;
  uint64_t deadline_usec_ = 0;  ///< CLOCK_MONOTONIC; 0 for none
};

}  // namespace sandboxd_review
