#pragma once
/// The Manager's signals about sandboxes coming and going and changing state (SandboxAdded,
/// SandboxRemoved, SandboxStateChanged), so that an app can follow a user's sandboxes without
/// polling ListSandboxes. Each goes to the sandbox owner's connections only, never broadcast
/// (owner_signal.h): a sandbox's name and state are its owner's business. Never call it on the
/// bus loop thread. Until the Manager's object is attached (start-up), nothing is sent: no one
/// can be listening yet.

#include <sdbus-c++/sdbus-c++.h>

#include <atomic>
#include <string_view>

namespace sandboxd {

class BusPeers;
class Sandbox;

class SandboxAnnouncer {
 public:
  explicit SandboxAnnouncer(BusPeers& peers) : peers_(peers) {}

  /// The Manager's object, which sends the signals: attached by it when made, detached when it
  /// goes (nothing is sent from then on).
  void Attach(sdbus::IObject& manager) { manager_ = &manager; }
  void Detach() { manager_ = nullptr; }

  void Added(const Sandbox& sandbox) const;
  void Removed(const Sandbox& sandbox) const;
  /// Says the state the sandbox is in now: broken when it is (a commit or undo that could
  /// neither finish nor be taken back: it runs nothing until the next start-up settles it),
  /// else its SandboxState's name (active, suspended).
  void StateChanged(const Sandbox& sandbox) const;

 private:
  BusPeers& peers_;
  std::atomic<sdbus::IObject*> manager_{nullptr};
};

}  // namespace sandboxd
