#include "bus/loop_probe.h"

#include <sdbus-c++/Error.h>

namespace sandboxd {

LoopProbe::LoopProbe(std::unique_ptr<sdbus::IConnection> probe, const std::string& loop_name)
    : connection_(std::move(probe)), loop_(sdbus::createProxy(*connection_, loop_name, "/")) {}

bool LoopProbe::Answers(std::chrono::milliseconds timeout) {
  try {
    loop_->callMethod("Ping").onInterface("org.freedesktop.DBus.Peer").withTimeout(timeout);
    return true;
  } catch (const sdbus::Error&) {
    return false;
  }
}

}  // namespace sandboxd
