#include "review_changes.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "change_list.h"
#include "wire_selector.h"

namespace sandboxctl {
namespace {

/// The verdicts a listed change reports: per hunk for a change decided hunk by hunk, else whole.
std::vector<Verdict> VerdictsOf(const ListedChange& change) {
  const std::string& review = change.review;
  uint32_t hunks = change.hunks.value_or(0);
  if (review == "approved") return {Verdict::kApproved};
  if (review == "rejected") return {Verdict::kRejected};
  if (review != "partial" || hunks == 0) return {Verdict::kPending};
  std::vector<Verdict> verdicts(hunks, Verdict::kPending);
  for (auto [list, verdict] : {std::pair{&change.approved_hunks, Verdict::kApproved}, std::pair{&change.rejected_hunks, Verdict::kRejected}})
    for (uint32_t hunk : *list)
      if (hunk >= 1 && hunk <= hunks) verdicts[hunk - 1] = verdict;
  return verdicts;
}

}  // namespace

void ReviewedChange::SpreadOverHunks(size_t hunks) {
  if (verdicts.size() == 1) verdicts.assign(hunks, verdicts.front());
  else verdicts.resize(hunks, Verdict::kPending);  // counted otherwise than the diff shows: trust the diff
}

std::string ReviewedChange::State() const {
  auto all = [&](Verdict verdict) {
    for (Verdict each : verdicts)
      if (each != verdict) return false;
    return true;
  };
  if (all(Verdict::kApproved)) return "approved";
  if (all(Verdict::kRejected)) return "rejected";
  if (all(Verdict::kPending)) return "pending";
  return "partial";
}

ReviewedChange Reviewed(const ListedChange& change) {
  ReviewedChange reviewed;
  reviewed.path = change.path;
  reviewed.kind = change.kind;
  reviewed.old_type = change.old_type;
  reviewed.new_type = change.new_type;
  reviewed.verdicts = VerdictsOf(change);
  reviewed.renamed_from = change.renamed_from;
  reviewed.renamed_to = change.renamed_to;
  reviewed.conflict = change.conflict_reason;
  reviewed.unreadable = change.unreadable;
  return reviewed;
}

std::vector<ReviewedChange> ReadChanges(Context& ctx, const std::string& sandbox_path) {
  std::vector<ReviewedChange> read;
  ForEachChange(ctx, sandbox_path, [&](const ListedChange& change, std::string_view) { read.push_back(Reviewed(change)); });
  return read;
}

std::string DiffOf(SandboxProxy& sandbox, const std::string& path) {
  // A memory file rather than a pipe: Diff returns once all is written, so one thread can
  // call, then read, and a file's diff is small enough to hold.
  sdbus::UnixFd file(memfd_create("sandboxctl-review-diff", MFD_CLOEXEC), sdbus::adopt_fd);
  if (file.get() < 0)
    throw sdbus::Error("org.freedesktop.DBus.Error.Failed", std::string("cannot make a memory file for the diff: ") + strerror(errno));
  sandbox.raw()
      .callMethod("Diff")
      .onInterface(sandboxd::api::kSandboxInterface)
      .withTimeout(std::chrono::minutes(10))
      .withArguments(sandboxd::api::ToWire(std::vector<sandboxd::api::Selector>{sandboxd::api::Selector{path}}), file, std::map<std::string, sdbus::Variant>{});
  std::string text;
  char buffer[65536];
  for (;;) {
    ssize_t got = pread(file.get(), buffer, sizeof buffer, static_cast<off_t>(text.size()));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  return text;
}

void SendDecision(SandboxProxy& sandbox, Verdict verdict, const std::vector<sandboxd::api::Selector>& selectors) {
  uint32_t decided = 0;
  sandbox.raw()
      .callMethod(verdict == Verdict::kApproved ? "Approve" : "Reject")
      .onInterface(sandboxd::api::kSandboxInterface)
      .withTimeout(std::chrono::minutes(10))
      .withArguments(sandboxd::api::ToWire(selectors), uint64_t{0})
      .storeResultsTo(decided);
}

bool AtOrBeneath(const std::string& path, const std::string& dir) {
  return dir == "." || path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

}  // namespace sandboxctl
