#include "operations/change_reports.h"

#include <map>
#include <utility>

#include "base/errors.h"
#include "runtime/output_relay.h"
#include "changes/change_listing.h"
#include "commit/commit_runner.h"
#include "helper_clients/helper_client.h"
#include "sandbox/sandbox_reader.h"
#include "review/diff_pages.h"
#include "review/review.h"
#include "units.h"

namespace sandboxd {
namespace {

/// A diff goes to the helper this many changes at a time (diff_pages.h); so does a listing's
/// page to the conflict check.
constexpr size_t kPage = 4096;

/// The refusal of a change list too large for one message, naming the way that has no limit.
Error TooLargeForOneReply(const std::string& sandbox_id, size_t changes, const std::string& limit) {
  return Error(Code::kTooLarge, "sandbox " + sandbox_id + " has " + std::to_string(changes) +
                                    " changes, more than one GetChanges reply holds (" + limit +
                                    "); read them with ListChanges, which writes them into an fd");
}

}  // namespace

Conflicts CurrentConflicts(const OperationParts& parts, const SandboxReader& sandbox, const std::vector<ReviewedChange>& reviewed) {
  // Sights of a job that just ended may still be on their way (job_settling.h).
  sandbox.WaitSettled("read the conflicts of");
  return FindConflicts(sandbox, ChangesByRoot(reviewed), parts.sights, parts.commits.AgreedUsec(sandbox), parts.helpers,
                       LookupUser(sandbox.owner()));
}

std::vector<nlohmann::json> ListedChanges(const OperationParts& parts, const SandboxReader& sandbox, size_t most_changes, size_t most_bytes) {
  sandbox.CheckActive("read the changes of");
  auto reviewed = parts.review.Current(sandbox);
  if (reviewed.size() > most_changes) throw TooLargeForOneReply(sandbox.id(), reviewed.size(), std::to_string(most_changes) + " changes");
  // Conflicts are marked before a commit is tried: "conflict" true and "conflict_reason".
  Conflicts conflicts = CurrentConflicts(parts, sandbox, reviewed);
  std::vector<nlohmann::json> listed;
  size_t bytes = 0;
  for (const auto& item : reviewed) {
    auto conflict = conflicts.find({item.root, item.change.path});
    listed.push_back(ListedChange(item, sandbox.PathPrefix(item.root), conflict == conflicts.end() ? nullptr : &conflict->second));
    bytes += MarshalledBound(listed.back());
    if (bytes > most_bytes)
      throw TooLargeForOneReply(sandbox.id(), reviewed.size(), units::HumanBytes(most_bytes) + " of names and details");
  }
  return listed;
}

uint32_t WriteChangeList(const OperationParts& parts, const SandboxReader& sandbox, RelayedOutput& out) {
  sandbox.CheckActive("read the changes of");
  // The change set is never held whole: it is read as a stream, a page at a time gets its
  // conflicts, and its lines go out as they are made. Right after a job, each page follows the
  // job's settling as it stores the page's sights: the listing and the settling scan side by
  // side rather than one after the other.
  StreamedConflicts conflicts(sandbox, parts.sights, parts.commits.AgreedUsec(sandbox), parts.helpers, LookupUser(sandbox.owner()));
  std::string lines;
  // Into the spool, which never waits for the reader (output_relay.h); it says when the reader
  // went away or fell too far behind, and the listing stops.
  auto flush = [&] {
    out.Append(lines);
    lines.clear();
  };
  std::vector<ReviewedChange> page;
  uint32_t listed = 0;
  auto list_page = [&] {
    if (page.empty()) return;
    Conflicts found = conflicts.Of(ChangesByRoot(page));
    for (const auto& item : page) {
      auto conflict = found.find({item.root, item.change.path});
      AppendListedLine(lines, item, sandbox.PathPrefix(item.root), conflict == found.end() ? nullptr : &conflict->second);
      if (lines.size() >= 64 * 1024) flush();
    }
    listed += static_cast<uint32_t>(page.size());
    page.clear();
  };
  parts.review.ForEach(sandbox, [&](ReviewedChange&& item) {
    page.push_back(std::move(item));
    if (page.size() >= kPage) list_page();
  });
  list_page();
  flush();
  // And the settling's own end (a change set emptied by the job has no page to wait on): a
  // listing is how a script waits until the last job's end is taken in.
  sandbox.WaitSettled("read the conflicts of");
  return listed;
}

void WriteDiff(const OperationParts& parts, const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, const DiffAsked& asked,
               RelayedOutput& out) {
  sandbox.CheckActive("diff");
  // A page of the change set at a time goes to the helper, which makes the diff as the owner:
  // it reads the live tree and the upper with the owner's rights, so a diff can never show what
  // the owner could not read. The helper writes into the call's spool, a file that never waits
  // for the caller's reader (output_relay.h): a reader that stops reading holds neither this
  // worker nor the helper.
  UserCredentials owner = LookupUser(sandbox.owner());
  std::map<size_t, std::pair<UniqueFd, UniqueFd>> roots;  // live, upper
  ForEachDiffPage(parts.review, sandbox, selectors, kPage, [&](const DiffPage& page) {
    auto& [live, upper] = roots[page.root];
    if (!live) live = sandbox.OpenLiveRoot(page.root), upper = sandbox.OpenUpper(page.root);
    try {
      RunHelper(parts.helpers, HelperOp::kDiff, owner,
                {{live.get(), upper.get(), sandbox.PathPrefix(page.root), page.changes, page.renames, page.only_hunks, asked.binary}},
                out.spool_fd());
    } catch (const Error& e) {
      // A hunk or part that is not there is refused before anything is written.
      if (e.code() == Code::kNotFound) throw Error(e.code(), std::string(e.what()) + " in sandbox " + sandbox.id());
      throw Error(e.code(), "the diff of sandbox " + sandbox.id() + " stopped: " + e.what());
    }
    out.Grew();  // throws when the reader went away or fell too far behind: no next page
    return true;
  });
}

}  // namespace sandboxd
