#include "operations/after_moves.h"

#include "logging/log.h"
#include "review/review.h"
#include "sandbox/sandbox.h"

namespace sandboxd {

void SettleDecisionsQuietly(const OperationParts& parts, Sandbox& sandbox, const InodesByRoot& worked) {
  try {
    parts.review.SettleAwaitedCommits(sandbox, parts.journal);
    parts.review.PinAfterMoves(sandbox, worked);
  } catch (const std::exception& e) {
    LogAbout({sandbox.id(), sandbox.owner()}, spdlog::level::warn, "sandbox {}: cannot pin its decisions after the commit: {}",
             sandbox.id(), e.what());
  }
}

void RemountUnlessBroken(Sandbox& sandbox, const char* failed) {
  if (sandbox.gate().broken()) return;
  try {
    sandbox.SetUp();
  } catch (const std::exception& e) {
    LogAbout({sandbox.id(), sandbox.owner()}, spdlog::level::err, "sandbox {}: cannot remount after a failed {}: {}", sandbox.id(), failed,
             e.what());
  }
}

std::string MountAgainAfter(Sandbox& sandbox, const char* done) {
  try {
    sandbox.SetUp();
    return "";
  } catch (const std::exception& e) {
    LogAbout({sandbox.id(), sandbox.owner()}, spdlog::level::err, "sandbox {}: the {} took effect, but it cannot be mounted again: {}",
             sandbox.id(), done, e.what());
    return "sandbox " + sandbox.id() + ": the " + done + " took effect, but the sandbox cannot be mounted again now (" + e.what() +
           "); its next job mounts it";
  }
}

}  // namespace sandboxd
