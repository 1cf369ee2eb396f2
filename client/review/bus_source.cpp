#include "bus_source.h"

#include <time.h>

#include <cstdint>
#include <exception>
#include <utility>

namespace sandboxd_review {
namespace {

uint64_t MonotonicUsec() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000 + static_cast<uint64_t>(now.tv_nsec) / 1'000;
}

}  // namespace

Glib::RefPtr<BusSource> BusSource::AttachTo(sdbus::IConnection& bus, std::function<void(const std::string&)> on_lost) {
  auto source = Glib::make_refptr_for_instance(new BusSource(bus, std::move(on_lost)));
  source->attach();
  return source;
}

BusSource::BusSource(sdbus::IConnection& bus, std::function<void(const std::string&)> on_lost)
    : bus_(bus), on_lost_(std::move(on_lost)), poll_(bus.getEventLoopPollData().fd, Glib::IOCondition::IO_IN) {
  add_poll(poll_);
  // glibmm dispatches a source only through a connected slot; the work is in dispatch().
  connect_generic(sigc::slot<bool()>([] { return true; }));
}

bool BusSource::prepare(int& timeout) {
  const auto data = bus_.getEventLoopPollData();
  poll_.set_events(static_cast<Glib::IOCondition>(data.events));
  // sd-bus's "no deadline" is UINT64_MAX.
  deadline_usec_ = data.timeout_usec == UINT64_MAX ? 0 : data.timeout_usec;
  timeout = data.getPollTimeout();
  return timeout == 0;
}

bool BusSource::check() {
  if ((poll_.get_revents() & poll_.get_events()) != Glib::IOCondition{}) return true;
  if ((poll_.get_revents() & (Glib::IOCondition::IO_HUP | Glib::IOCondition::IO_ERR)) != Glib::IOCondition{}) return true;
  return deadline_usec_ != 0 && MonotonicUsec() >= deadline_usec_;
}

bool BusSource::dispatch(sigc::slot_base*) {
  // A burst of signals (ChangesSeen while a job writes) is served in turns of a few dozen
  // messages, so that the window draws between them.
  // An exception must not leave GLib's dispatch (it would end the app): a connection that
  // failed is told once, and this source stops.
  try {
    for (int served = 0; served < 64; ++served) {
      if (!bus_.processPendingRequest()) break;
    }
    return true;
  } catch (const std::exception& e) {
    if (auto on_lost = std::move(on_lost_)) on_lost(e.what());
    return false;
  }
}

}  // namespace sandboxd_review
