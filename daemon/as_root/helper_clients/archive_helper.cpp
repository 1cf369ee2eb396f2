#include "helper_clients/archive_helper.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/errors.h"
#include "base/process.h"

namespace sandboxd {

namespace {

/// The helper's exit status when a write of the layer found no room (archive_helper_main.cpp).
constexpr int kNoRoomStatus = 3;

/// The helper's OWNER argument: UID:GID:[GROUP[,GROUP]...].
std::string OwnerArgument(const UserCredentials& owner) {
  std::string identity = std::to_string(owner.uid) + ":" + std::to_string(owner.gid) + ":";
  for (size_t i = 0; i < owner.groups.size(); ++i) identity += (i ? "," : "") + std::to_string(owner.groups[i]);
  return identity;
}

/// Reads the helper's progress lines (archive_helper_main.cpp) from `pipe` until the helper has
/// gone, handing each to `progress`.
std::thread ReadProgress(UniqueFd& pipe, const ArchiveProgressSink& progress) {
  return std::thread([&pipe, &progress] {
    std::string partial;  // of a line split between reads
    char buffer[4096];
    for (;;) {
      ssize_t got = read(pipe.get(), buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return;
      std::string_view data(buffer, static_cast<size_t>(got));
      for (size_t at; (at = data.find('\n')) != std::string_view::npos; data.remove_prefix(at + 1)) {
        partial += data.substr(0, at);
        ArchiveProgress figures;
        std::istringstream(partial) >> figures.entries_done >> figures.entries_total >> figures.bytes_done >> figures.bytes_total;
        partial.clear();
        progress(figures);
      }
      partial += data;
    }
  });
}

}  // namespace

ArchiveStats ArchiveHelper::Run(const std::vector<std::string>& args, const std::string& what, const ArchiveProgressSink& progress) const {
  SpawnOptions options;
  options.path = program_;
  options.argv = {program_};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.die_with_parent = true;
  options.umask = 077;  // archives and restored layers are the daemon's
  UniqueFd progress_read, progress_write;
  std::thread reader;
  if (progress) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) ThrowErrno("cannot make a pipe for the archive helper's progress");
    progress_read.reset(ends[0]);
    progress_write.reset(ends[1]);
    options.fds.push_back({3, progress_write.get()});
    reader = ReadProgress(progress_read, progress);
  }
  // The reader ends once the helper has gone and our end is closed, whatever happens.
  struct JoinReader {
    std::thread& reader;
    UniqueFd& write_end;
    ~JoinReader() {
      write_end.reset();
      if (reader.joinable()) reader.join();
    }
  } join{reader, progress_write};
  RunResult result = RunAndCapture(options, "");
  if (result.status != 0) {
    std::string message = result.err;
    while (!message.empty() && message.back() == '\n') message.pop_back();
    int status = ExitStatusFromWaitStatus(result.status);
    // The helper's message names the path already.
    if (message.empty()) message = "cannot " + what + ": the archive helper failed (exit status " + std::to_string(status) + ")";
    throw Error(status == kNoRoomStatus ? Code::kQuotaExceeded : Code::kFailed, message);
  }
  ArchiveStats stats;
  std::istringstream(result.out) >> stats.entries >> stats.bytes;
  return stats;
}

ArchiveStats ArchiveHelper::Write(const std::string& upper, const std::string& archive_path, int level, const UserCredentials& owner,
                                  const ArchiveProgressSink& progress) const {
  return Run({"write", upper, archive_path, std::to_string(level), OwnerArgument(owner)}, "archive " + upper, progress);
}

ArchiveStats ArchiveHelper::Extract(const std::string& archive_path, const std::string& upper, const UserCredentials& owner,
                                    const ArchiveProgressSink& progress) const {
  return Run({"extract", archive_path, upper, OwnerArgument(owner)}, "restore " + archive_path, progress);
}

}  // namespace sandboxd
