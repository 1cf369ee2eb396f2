#pragma once
/// A call whose answer the daemon writes into a pipe (Diff, ListChanges): the answer can be
/// far bigger than a D-Bus message may be, and the daemon returns only once all is written, so
/// the call runs on a thread and connection of its own while this thread reads the pipe.

#include <sdbus-c++/sdbus-c++.h>

#include <functional>
#include <string>
#include <string_view>

#include "context.h"

namespace sandboxctl {

struct PipeCall {
  std::string method;  ///< of the Sandbox interface
  /// Appends the call's arguments; `output` is the pipe's write end, for its place among them.
  std::function<void(sdbus::MethodCall& call, const sdbus::UnixFd& output)> arguments;
  /// Reads the results from the reply (on the call's thread); none when empty.
  std::function<void(sdbus::MethodReply& reply)> results;
};

/// Makes `call` on the sandbox at `sandbox_path` and hands what the daemon writes to `consume`
/// as it comes. Throws the call's sdbus::Error, or what `consume` threw (the pipe is closed
/// first, so the daemon's writes end and the call with them).
void CallIntoPipe(Context& ctx, const std::string& sandbox_path, const PipeCall& call,
                  const std::function<void(std::string_view)>& consume);

}  // namespace sandboxctl
