#include "owner/archive_helper.h"

#include <sstream>
#include <vector>

#include "base/errors.h"
#include "base/process.h"

namespace sandboxd {

ArchiveStats ArchiveHelper::Run(const std::vector<std::string>& args, const std::string& what) const {
  SpawnOptions options;
  options.path = program_;
  options.argv = {program_};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.die_with_parent = true;
  options.umask = 077;  // archives and restored layers are the daemon's
  RunResult result = RunAndCapture(options, "");
  if (result.status != 0) {
    std::string message = result.err;
    while (!message.empty() && message.back() == '\n') message.pop_back();
    // The helper's message names the path already.
    if (message.empty())
      message = "cannot " + what + ": the archive helper failed (exit status " + std::to_string(ExitStatusFromWaitStatus(result.status)) + ")";
    throw Error(Code::kFailed, message);
  }
  ArchiveStats stats;
  std::istringstream(result.out) >> stats.entries >> stats.bytes;
  return stats;
}

ArchiveStats ArchiveHelper::Write(const std::string& upper, const std::string& archive_path, int level) const {
  return Run({"write", upper, archive_path, std::to_string(level)}, "archive " + upper);
}

ArchiveStats ArchiveHelper::Extract(const std::string& archive_path, const std::string& upper) const {
  return Run({"extract", archive_path, upper}, "restore " + archive_path);
}

}  // namespace sandboxd
