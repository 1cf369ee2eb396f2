#include "daemon_client.h"

#include <glibmm/main.h>

#include <chrono>
#include <string_view>
#include <utility>

#include "api.h"
#include "pipe_reader.h"
#include "quote_path.h"
#include "text_lines.h"
#include "wire_selector.h"

namespace sandboxd_review {
namespace {

using sandboxd::api::kBusName;
using sandboxd::api::kFlagAllowInteractive;
using sandboxd::api::kManagerInterface;
using sandboxd::api::kSandboxInterface;

// A commit, undo or discard may wait for a person at polkit's password prompt.
constexpr auto kPersonTimeout = std::chrono::minutes(10);
// A listing or diff takes as long as writing it takes; the pipe, not the reply, carries it.
constexpr auto kPipeCallTimeout = std::chrono::minutes(30);

Outcome OutcomeOf(const sdbus::Error* error) {
  if (error == nullptr) return std::nullopt;
  return FailureOf(*error);
}

/// `done`, shared by a call's reply handler and the failure to send it.
template <typename Done>
std::shared_ptr<Done> Shared(Done done) {
  return std::make_shared<Done>(std::move(done));
}

/// Runs `send`, which sends a call; one that cannot be sent at all (the bus connection is gone:
/// sd-bus throws ENOTCONN) is answered with that failure through `failed`, from the main loop
/// as a reply would be. Never thrown into GTK's signal and timeout handlers, where an exception
/// ends the app.
void Send(const std::function<void()>& send, std::function<void(const Outcome&)> failed) {
  try {
    send();
  } catch (const sdbus::Error& e) {
    Failure failure = FailureOf(e);
    failure.message = "sandboxd cannot be asked anything: the connection to the bus is gone (" + failure.message + ")";
    Glib::signal_idle().connect_once([failed = std::move(failed), failure = std::move(failure)] { failed(failure); });
  }
}

/// A call answering into a pipe: done once both the reply has come and the pipe has ended
/// (either may come first), or at the first failure, or when its reader has read enough.
struct PipeState {
  std::unique_ptr<PipeReader> reader;
  bool replied = false;
  bool ended = false;
  bool finished = false;
  std::function<void(const Outcome&)> finish;

  void Finish(const Outcome& outcome) {
    if (finished) return;
    finished = true;
    auto done = std::move(finish);
    done(outcome);
  }
  /// The pipe ended ("" error) or could not be read.
  void Ended(const std::string& error) {
    ended = true;
    if (!error.empty()) Finish(Failure{"org.freedesktop.DBus.Error.IOError", error});
    else if (replied) Finish(std::nullopt);
  }
  void Replied(const sdbus::Error* error) {
    replied = true;
    if (error) Finish(FailureOf(*error));
    else if (ended) Finish(std::nullopt);
  }
};

class PipeHandle final : public PendingRead {
 public:
  explicit PipeHandle(std::shared_ptr<PipeState> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<PipeState> state_;
};

/// Calls `method` of the sandbox behind `proxy` with the arguments `arguments` appends (the
/// pipe's write end among them), hands what the daemon writes to `on_data` (with the call's
/// state, to end it early) and the outcome to `finish`.
std::unique_ptr<PendingRead> CallIntoPipe(sdbus::IProxy& proxy, const char* method,
                                          const std::function<void(sdbus::MethodCall&, const sdbus::UnixFd&)>& arguments,
                                          std::function<void(std::string_view, const std::weak_ptr<PipeState>&)> on_data,
                                          std::function<void(const Outcome&)> finish) {
  auto state = std::make_shared<PipeState>();
  state->finish = std::move(finish);
  std::weak_ptr<PipeState> weak = state;
  state->reader = std::make_unique<PipeReader>([weak, on_data = std::move(on_data)](std::string_view data) { on_data(data, weak); },
                                               [weak](const std::string& error) {
                                                 if (auto state = weak.lock()) state->Ended(error);
                                               });
  {
    sdbus::UnixFd output = state->reader->TakeWriteEnd();
    Send(
        [&] {
          auto call = proxy.createMethodCall(kSandboxInterface, method);
          arguments(call, output);
          proxy.callMethod(
              call,
              [weak](sdbus::MethodReply&, const sdbus::Error* error) {
                if (auto state = weak.lock()) state->Replied(error);
              },
              kPipeCallTimeout);
        },
        [weak](const Outcome& failed) {
          if (auto state = weak.lock()) state->Finish(failed);
        });
  }  // our copies of the write end are closed here: the pipe ends when the daemon's does
  return std::make_unique<PipeHandle>(state);
}

}  // namespace

Failure FailureOf(const sdbus::Error& error) {
  return Failure{error.getName(), sandboxd::api::EscapeControlBytes(error.getMessage())};
}

DaemonClient::DaemonClient(bool user_mode, DaemonEvents events) : events_(std::move(events)) {
  try {
    bus_ = user_mode ? sdbus::createSessionBusConnection() : sdbus::createSystemBusConnection();
  } catch (const sdbus::Error& e) {
    throw sdbus::Error(e.getName(), std::string("cannot connect to the ") + (user_mode ? "session" : "system") + " bus: " + e.getMessage());
  }
  source_ = BusSource::AttachTo(*bus_, [this](const std::string& why) {
    if (events_.bus_lost) events_.bus_lost(why);
  });
  manager_ = sdbus::createProxy(*bus_, kBusName, sandboxd::api::kManagerPath);
  auto changed = [this](auto&&...) {
    if (events_.sandboxes_changed) events_.sandboxes_changed();
  };
  manager_->uponSignal("SandboxAdded").onInterface(kManagerInterface).call(
      [changed](const sdbus::ObjectPath&, const std::string&, const std::string&) { changed(); });
  manager_->uponSignal("SandboxRemoved").onInterface(kManagerInterface).call(
      [changed](const sdbus::ObjectPath&, const std::string&) { changed(); });
  manager_->uponSignal("SandboxStateChanged").onInterface(kManagerInterface).call(
      [changed](const sdbus::ObjectPath&, const std::string&, const std::string&) { changed(); });
  manager_->finishRegistration();
  // Every sandbox's signals in one match: the app shows every sandbox of the user's (a badge
  // for a review asked for), not only the one selected.
  sandbox_signals_ = bus_->addMatch(std::string("type='signal',sender='") + kBusName + "',interface='" + kSandboxInterface + "'",
                                    [this](sdbus::Message& signal) { OnSandboxSignal(signal); });
}

DaemonClient::~DaemonClient() {
  source_->destroy();
}

void DaemonClient::OnSandboxSignal(sdbus::Message& signal) {
  // A signal that does not read as its interface says is passed over: it told nothing.
  try {
    const std::string path = signal.getPath();
    const std::string member = signal.getMemberName();
    if (member == "ChangeSetChanged") {
      if (events_.change_set_changed) events_.change_set_changed(path);
    } else if (member == "ChangesSeen") {
      std::vector<sdbus::Struct<uint32_t, std::string, std::string>> seen;
      uint32_t more = 0;
      bool lost = false;
      signal >> seen >> more >> lost;
      std::vector<std::pair<std::string, std::string>> changes;
      for (const auto& change : seen) {
        // Wire names of roots past the first carry their root as "N/", as ListChanges's do.
        const uint32_t root = change.get<0>();
        std::string name = root == 0 ? change.get<1>() : std::to_string(root) + "/" + change.get<1>();
        changes.emplace_back(std::move(name), change.get<2>());
      }
      if (events_.changes_seen) events_.changes_seen(path, changes, lost || more > 0);
    } else if (member == "ReviewRequested") {
      if (events_.review_requested) events_.review_requested(path);
    } else if (member == "Progress") {
      std::string operation, phase;
      uint64_t entries_done = 0, entries_total = 0, bytes_done = 0, bytes_total = 0;
      signal >> operation >> phase >> entries_done >> entries_total >> bytes_done >> bytes_total;
      if (events_.progress)
        events_.progress(path, operation, phase, bytes_total ? bytes_done : entries_done, bytes_total ? bytes_total : entries_total);
    }
  } catch (const sdbus::Error&) {
  }
}

sdbus::IProxy& DaemonClient::Proxy(const std::string& path) {
  auto& proxy = proxies_[path];
  if (!proxy) proxy = sdbus::createProxy(*bus_, kBusName, path);
  return *proxy;
}

void DaemonClient::ListSandboxes(std::function<void(std::vector<SandboxSummary>, const Outcome&)> done) {
  using Row = sdbus::Struct<std::string, std::string, uint32_t, std::string, std::vector<std::string>, sdbus::ObjectPath>;
  auto answer = Shared(std::move(done));
  Send([&] {
    manager_->callMethodAsync("ListSandboxes").onInterface(kManagerInterface).uponReplyInvoke(
        [answer](const sdbus::Error* error, const std::vector<Row>& rows) {
          std::vector<SandboxSummary> sandboxes;
          for (const auto& row : rows)
            sandboxes.push_back(SandboxSummary{row.get<0>(), row.get<1>(), row.get<3>(), row.get<4>(), row.get<5>()});
          (*answer)(std::move(sandboxes), OutcomeOf(error));
        });
  }, [answer](const Outcome& failed) { (*answer)({}, failed); });
}

void DaemonClient::GetInfo(const std::string& sandbox, std::function<void(std::map<std::string, sdbus::Variant>, const Outcome&)> done) {
  auto answer = Shared(std::move(done));
  Send([&] {
    Proxy(sandbox).callMethodAsync("GetInfo").onInterface(kSandboxInterface).uponReplyInvoke(
        [answer](const sdbus::Error* error, const std::map<std::string, sdbus::Variant>& info) { (*answer)(info, OutcomeOf(error)); });
  }, [answer](const Outcome& failed) { (*answer)({}, failed); });
}

void DaemonClient::ListJobs(const std::string& sandbox, std::function<void(std::vector<JobSummary>, const Outcome&)> done) {
  using Row = sdbus::Struct<std::string, sdbus::ObjectPath, std::vector<std::string>, uint64_t, std::string, int32_t, std::string>;
  auto answer = Shared(std::move(done));
  Send([&] {
    Proxy(sandbox).callMethodAsync("ListJobs").onInterface(kSandboxInterface).uponReplyInvoke(
        [answer](const sdbus::Error* error, const std::vector<Row>& rows) {
          std::vector<JobSummary> jobs;
          for (const auto& row : rows) jobs.push_back(JobSummary{row.get<0>(), row.get<1>(), row.get<2>(), row.get<4>(), row.get<5>()});
          (*answer)(std::move(jobs), OutcomeOf(error));
        });
  }, [answer](const Outcome& failed) { (*answer)({}, failed); });
}

void DaemonClient::CancelJob(const std::string& job, std::function<void(const Outcome&)> done) {
  auto answer = Shared(std::move(done));
  Send([&] {
    Proxy(job).callMethodAsync("Cancel").onInterface(sandboxd::api::kJobInterface).uponReplyInvoke(
        [answer](const sdbus::Error* error) { (*answer)(OutcomeOf(error)); });
  }, *answer);
}

void DaemonClient::Decide(const std::string& sandbox, const std::vector<sandboxd::api::Selector>& selectors, const std::string& verdict,
                          const std::string& note, std::function<void(const Outcome&)> done) {
  std::map<std::string, sdbus::Variant> options;
  if (!note.empty()) options["note"] = sdbus::Variant(note);
  auto answer = Shared(std::move(done));
  Send([&] {
    Proxy(sandbox)
        .callMethodAsync("Decide")
        .onInterface(kSandboxInterface)
        .withArguments(sandboxd::api::ToWire(selectors), verdict, options, uint64_t{0})
        .uponReplyInvoke([answer](const sdbus::Error* error, uint32_t) { (*answer)(OutcomeOf(error)); });
  }, *answer);
}

void DaemonClient::Commit(const std::string& sandbox, bool force, std::function<void(uint32_t, const Outcome&)> done) {
  auto answer = Shared(std::move(done));
  Send([&] {
    Proxy(sandbox)
        .callMethodAsync("Commit")
        .onInterface(kSandboxInterface)
        .withTimeout(kPersonTimeout)
        .withArguments(std::vector<std::string>{}, kFlagAllowInteractive | (force ? sandboxd::api::kFlagForce : 0))
        .uponReplyInvoke([answer](const sdbus::Error* error, uint32_t committed, const std::vector<std::string>&) {
          (*answer)(committed, OutcomeOf(error));
        });
  }, [answer](const Outcome& failed) { (*answer)(0, failed); });
}

void DaemonClient::Undo(const std::string& sandbox, std::function<void(const Outcome&)> done) {
  auto answer = Shared(std::move(done));
  Send([&] {
    Proxy(sandbox)
        .callMethodAsync("Undo")
        .onInterface(kSandboxInterface)
        .withTimeout(kPersonTimeout)
        .withArguments(kFlagAllowInteractive)
        .uponReplyInvoke([answer](const sdbus::Error* error, int64_t) { (*answer)(OutcomeOf(error)); });
  }, *answer);
}

void DaemonClient::Discard(const std::string& sandbox, std::function<void(const Outcome&)> done) {
  auto answer = Shared(std::move(done));
  Send([&] {
    Proxy(sandbox)
        .callMethodAsync("Discard")
        .onInterface(kSandboxInterface)
        .withTimeout(kPersonTimeout)
        .uponReplyInvoke([answer](const sdbus::Error* error) { (*answer)(OutcomeOf(error)); });
  }, *answer);
}

std::unique_ptr<PendingRead> DaemonClient::ListChanges(const std::string& sandbox,
                                                       std::function<void(sandboxctl::ListedChange, std::string_view)> each,
                                                       std::function<void(const Outcome&)> done) {
  auto lines = std::make_shared<sandboxctl::LineAssembler>();
  return CallIntoPipe(
      Proxy(sandbox), "ListChanges", [](sdbus::MethodCall& call, const sdbus::UnixFd& output) { call << output; },
      [lines, each = std::move(each)](std::string_view data, const std::weak_ptr<PipeState>&) {
        lines->Add(data, [&](std::string_view line) {
          // A line this client cannot read is passed over, as sandboxctl's listing does.
          if (auto change = sandboxctl::ParseListedChange(line)) each(std::move(*change), line);
        });
      },
      std::move(done));
}

std::unique_ptr<PendingRead> DaemonClient::Diff(const std::string& sandbox, const sandboxd::api::Selector& selector, size_t limit,
                                                std::function<void(std::string, bool, const Outcome&)> done) {
  auto text = std::make_shared<std::string>();
  auto cut = std::make_shared<bool>(false);
  return CallIntoPipe(
      Proxy(sandbox), "Diff",
      [&selector](sdbus::MethodCall& call, const sdbus::UnixFd& output) {
        call << sandboxd::api::ToWire(std::vector<sandboxd::api::Selector>{selector}) << output << std::map<std::string, sdbus::Variant>{};
      },
      [text, cut, limit](std::string_view data, const std::weak_ptr<PipeState>& weak) {
        if (*cut) return;
        text->append(data.substr(0, limit - text->size()));
        if (text->size() < limit) return;
        *cut = true;
        // Enough is shown: the rest is not read. The reader is closed from the main loop, not
        // from inside its own read; the daemon's call then ends on the closed pipe (its answer
        // comes after this one's end, and is passed over).
        Glib::signal_idle().connect_once([weak] {
          if (auto state = weak.lock()) {
            state->reader.reset();
            state->Finish(std::nullopt);
          }
        });
      },
      [text, cut, done = std::move(done)](const Outcome& outcome) { done(std::move(*text), *cut, outcome); });
}

}  // namespace sandboxd_review
