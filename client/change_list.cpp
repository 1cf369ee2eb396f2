#include "change_list.h"

#include "pipe_call.h"
#include "text_lines.h"

namespace sandboxctl {

size_t ForEachChange(Context& ctx, const std::string& sandbox_path,
                     const std::function<void(const ListedChange& change, std::string_view line)>& each) {
  uint32_t written = 0;
  size_t read = 0;
  LineAssembler lines;
  auto take_line = [&](std::string_view line) {
    auto change = ParseListedChange(line);
    if (!change)
      throw sdbus::Error("org.freedesktop.DBus.Error.InvalidArgs", "sandboxd wrote a line of the change list of sandbox " +
                                                                       sandbox_path.substr(sandbox_path.rfind('/') + 1) + " that is no JSON object");
    ++read;
    each(*change, line);
  };
  CallIntoPipe(
      ctx, sandbox_path,
      {"ListChanges", [](sdbus::MethodCall& call, const sdbus::UnixFd& out) { call << out; },
       [&](sdbus::MethodReply& reply) { reply >> written; }},
      [&](std::string_view data) { lines.Add(data, take_line); });
  if (!lines.partial().empty() || read != written)
    throw sdbus::Error("org.freedesktop.DBus.Error.Failed", "the change list of sandbox " +
                                                                sandbox_path.substr(sandbox_path.rfind('/') + 1) + " ended after " +
                                                                std::to_string(read) + " of " + std::to_string(written) + " changes");
  return read;
}

}  // namespace sandboxctl
