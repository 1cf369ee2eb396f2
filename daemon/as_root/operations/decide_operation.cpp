#include "operations/decide_operation.h"

#include "runtime/clock.h"
#include "logging/log.h"
#include "helper_clients/helper_client.h"
#include "sandbox/sandbox_reader.h"
#include "review/review.h"

namespace sandboxd {
namespace {

ContentDigester DigesterOf(const OperationParts& parts, const SandboxReader& sandbox) {
  return [&parts, &sandbox](size_t root, const std::vector<std::string>& paths) {
    UniqueFd upper = sandbox.OpenUpper(root);
    return DigestsAsOwner(parts.helpers, LookupUser(sandbox.owner()), upper.get(), paths);
  };
}

}  // namespace

void CheckBoundDecisions(const OperationParts& parts, const SandboxReader& sandbox) {
  size_t lapsed = parts.review.CheckBound(sandbox, DigesterOf(parts, sandbox), sandbox.running_jobs() == 0);
  if (lapsed > 0)
    LogAbout({sandbox.id(), sandbox.owner()}, spdlog::level::warn,
             "sandbox {}: {} decisions made while a job ran lapsed: the job changed the bytes they were made on", sandbox.id(), lapsed);
}

void RecordReviewAct(const OperationParts& parts, const SandboxReader& sandbox, ReviewEntry entry) noexcept {
  try {
    entry.time_usec = TheSystemClock().NowUsec();
    parts.review_log.Add(sandbox.id(), std::move(entry));
  } catch (const std::exception& e) {
    LogAbout({sandbox.id(), sandbox.owner()}, spdlog::level::warn, "sandbox {}: cannot add to its review log: {}", sandbox.id(), e.what());
  }
}

size_t DecideChanges(const OperationParts& parts, const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, bool all, Verdict verdict,
                     const std::string& note) {
  sandbox.CheckActive(verdict == Verdict::kApproved ? "approve changes in" : "reject changes in");
  auto count_hunks = [&](const std::vector<RootChanges>& asked, bool with_parts) {
    std::vector<UniqueFd> fds;
    std::vector<HelperRoot> roots;
    for (const auto& root : asked) {
      fds.push_back(sandbox.OpenLiveRoot(root.root));
      fds.push_back(sandbox.OpenUpper(root.root));
      roots.push_back({fds[fds.size() - 2].get(), fds.back().get(), sandbox.PathPrefix(root.root), root.changes, {}, {}});
    }
    auto counted = CountHunksAsOwner(parts.helpers, LookupUser(sandbox.owner()), roots, with_parts);
    HunkCounts counts;
    for (size_t i = 0; i < asked.size() && i < counted.size(); ++i)
      for (auto& [path, shape] : counted[i]) counts[{asked[i].root, path}] = std::move(shape);
    return counts;
  };
  // A job that runs may hold a file mapped writable and change it without moving a time stamp
  // (approval.h): what is decided now is bound to the bytes as they are.
  ContentDigester bind;
  if (sandbox.running_jobs() > 0) bind = DigesterOf(parts, sandbox);
  size_t decided = parts.review.Decide(sandbox, selectors, all, verdict, count_hunks, bind);
  LogAbout({sandbox.id(), sandbox.owner()}, spdlog::level::info, "sandbox {}: {} {} changes or hunks", sandbox.id(), ToString(verdict),
           decided);
  ReviewEntry entry{.time_usec = 0, .act = verdict == Verdict::kApproved ? ReviewAct::kApproved : ReviewAct::kRejected, .what = {}, .note = note};
  if (all) entry.what.push_back(".");
  for (const auto& selector : selectors) entry.what.push_back(api::ToString(selector));
  RecordReviewAct(parts, sandbox, std::move(entry));
  return decided;
}

}  // namespace sandboxd
