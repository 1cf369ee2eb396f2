#include "progress_follower.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

#include "api.h"

namespace sandboxctl {
namespace {

constexpr auto kQuietFor = std::chrono::seconds(1);

size_t TerminalWidth() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

ProgressFollower::ProgressFollower(const Context& ctx, const std::string& sandbox_path, std::string operation)
    : operation_(std::move(operation)) {
  if (ctx.json || !isatty(STDERR_FILENO)) return;
  try {
    bus_ = ctx.OpenBus();
    proxy_ = sdbus::createProxy(*bus_, sandboxd::api::kBusName, sandbox_path);
    proxy_->uponSignal("Progress")
        .onInterface(sandboxd::api::kSandboxInterface)
        .call([this](const std::string& operation, const std::string& phase, uint64_t entries_done, uint64_t entries_total,
                     uint64_t bytes_done, uint64_t bytes_total) {
          Heard({operation, phase, entries_done, entries_total, bytes_done, bytes_total});
        });
    proxy_->finishRegistration();
    bus_->enterEventLoopAsync();
  } catch (const sdbus::Error&) {
    // No progress to show is no reason to fail the verb.
    proxy_.reset();
    bus_.reset();
  }
}

ProgressFollower::~ProgressFollower() {
  if (bus_) bus_->leaveEventLoop();
  proxy_.reset();
  Wipe();
}

void ProgressFollower::Heard(const ProgressReport& report) {
  if (report.operation != operation_) return;
  std::lock_guard lock(mutex_);
  if (report.phase == "done" || report.phase == "failed") return;  // the verb's own line follows
  if (std::chrono::steady_clock::now() - started_ < kQuietFor) return;
  std::string line = ProgressLine(report, TerminalWidth() - 1);
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressFollower::Wipe() {
  std::lock_guard lock(mutex_);
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace sandboxctl
