#include "pipe_call.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <memory>
#include <thread>

#include "api.h"
#include "proxies.h"

namespace sandboxctl {

void CallIntoPipe(Context& ctx, const std::string& sandbox_path, const PipeCall& call,
                  const std::function<void(std::string_view)>& consume) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw sdbus::Error("org.freedesktop.DBus.Error.Failed", "cannot create a pipe");
  int read_end = pipe_fds[0];
  sdbus::UnixFd write_end(pipe_fds[1], sdbus::adopt_fd);
  std::unique_ptr<sdbus::Error> failure;
  std::thread caller([&, write_end = std::move(write_end)]() mutable {
    try {
      auto bus = ctx.OpenBus();
      SandboxProxy sandbox(*bus, sandbox_path);
      auto message = sandbox.raw().createMethodCall(sandboxd::api::kSandboxInterface, call.method);
      call.arguments(message, write_end);
      write_end.reset();  // the daemon holds the only write end now: its end is our EOF
      auto reply = sandbox.raw().callMethod(message, 3'600'000'000);
      if (call.results) call.results(reply);
    } catch (const sdbus::Error& e) {
      failure = std::make_unique<sdbus::Error>(e);
    } catch (const std::exception& e) {
      failure = std::make_unique<sdbus::Error>("org.freedesktop.DBus.Error.Failed", e.what());
    }
  });
  std::exception_ptr consumer_failure;
  char buffer[65536];
  for (;;) {
    ssize_t got = read(read_end, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    try {
      consume(std::string_view(buffer, static_cast<size_t>(got)));
    } catch (...) {
      consumer_failure = std::current_exception();
      break;
    }
  }
  close(read_end);
  caller.join();
  if (consumer_failure) std::rethrow_exception(consumer_failure);
  if (failure) throw *failure;
}

}  // namespace sandboxctl
