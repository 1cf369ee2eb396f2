#include "jobs/job_settling.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>

#include <limits>
#include <set>
#include <vector>

#include <spdlog/spdlog.h>

#include "runtime/background_priority.h"
#include "base/beneath.h"
#include "jobs/change_feed.h"
#include "jobs/known_changes.h"
#include "sandbox/changeset_scanner.h"
#include "sandbox/live_sight.h"
#include "sandbox/sandbox.h"

namespace sandboxd {
namespace {

std::optional<struct stat> StatOf(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return std::nullopt;
  return st;
}

/// What one touched path holds now.
struct Looked {
  size_t root = 0;
  std::string path;
  std::optional<Change> change;
  int64_t upper_ctime_ns = 0;
};

/// Looks at each path of `touched` and, when what they hold is the whole of what changed,
/// records their sights and counts them into `known`: true. False (nothing recorded or
/// counted) when it reaches beyond them: a live directory that an upper entry now hides
/// (opaque, replaced or deleted: every live entry beneath it is a change), or hard links that
/// were linked up (their other names changed too).
bool SettleTouched(const Sandbox& sandbox, const TouchedPaths& touched, KnownChanges& known, SightRecorder& recorder) {
  const UserCredentials owner = sandbox.LiveIdentity();
  std::vector<Looked> looked;
  for (size_t root = 0; root < touched.paths.size(); ++root) {
    if (touched.paths[root].empty()) continue;
    UniqueFd lower = sandbox.OpenLiveRoot(root);
    UniqueFd upper = sandbox.OpenUpper(root);
    std::vector<Change> link_up;
    std::set<std::string> multi_linked;
    for (const auto& path : touched.paths[root]) {
      // Compared in full, as the scan compares same-size files: a count must not guess. (The
      // root's own entry, ".", is touched whenever overlayfs marks it as it copies entries up
      // into it: only its mode can change.)
      const bool top = path == ".";
      std::optional<Change> change = ScanOnePath(lower.get(), upper.get(), owner, path, std::numeric_limits<uint64_t>::max());
      std::optional<struct stat> up = top ? StatOf(upper.get()) : StatBeneath(upper.get(), path);
      if (top) {
        if (!up) return false;
        looked.push_back({root, path, std::move(change), int64_t{up->st_ctim.tv_sec} * 1000000000 + up->st_ctim.tv_nsec});
        continue;
      }
      if (change && change->old_type == EntryType::kDirectory && change->new_type != EntryType::kDirectory) return false;
      if (up && S_ISDIR(up->st_mode) && !(change && change->kind == ChangeKind::kAdded)) {
        UniqueFd dir = OpenBeneath(upper.get(), path, O_PATH | O_DIRECTORY);
        if (dir && IsOpaque(dir.get())) return false;
      }
      if (change && change->kind == ChangeKind::kDeleted && change->old_type == EntryType::kFile) link_up.push_back(*change);
      if (change && up && S_ISREG(up->st_mode) && up->st_nlink > 1) {
        link_up.push_back(*change);
        multi_linked.insert(path);
      }
      int64_t ctime_ns = up ? int64_t{up->st_ctim.tv_sec} * 1000000000 + up->st_ctim.tv_nsec : 0;
      looked.push_back({root, path, std::move(change), ctime_ns});
    }
    if (!link_up.empty() && sandbox.LinkUpTouched(root, lower.get(), upper.get(), link_up, multi_linked)) return false;
  }
  for (const auto& each : looked) {
    known.Set(each.root, each.path, each.change.has_value());
    if (each.change) recorder.Add(each.root, *each.change, each.upper_ctime_ns);
  }
  return true;
}

/// The whole change set, each change to `recorder` (and to `known`, when given). Returns the count.
size_t SettleAll(const Sandbox& sandbox, SightRecorder& recorder, KnownChanges* known) {
  sandbox.ForgetIndexWhiteouts();
  // As a stream: a job may have made a million changes. A listing reads its conflicts a page
  // at a time behind this pass (StreamedConflicts).
  size_t counted = 0;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    sandbox.PrepareStream(i);
    sandbox.StreamChangesTimed(i, [&](Change&& change, const UpperEntry& upper) {
      ++counted;
      if (known) known->Add(i, change.path);
      recorder.Add(i, change, upper.ctime_ns);
    });
  }
  if (known) known->Seal();
  return counted;
}

}  // namespace

void SettleAfterJob(Sandbox& sandbox, SightStore& sights, int64_t unseen_from_ns, const std::function<int64_t()>& agreed_usec,
                    const std::shared_ptr<ChangeFeed>& feed, const std::function<void(std::optional<size_t>)>& settled,
                    const std::function<void(const std::string&)>& failed, const std::function<void(const Sights&)>& sighted) {
  if (!sandbox.gate().QueueSettle(unseen_from_ns)) return;  // the settling under way takes it in
  BackgroundPriority background;  // nobody's call waits for it, unless it reads conflicts
  while (auto pass = sandbox.gate().NextSettlePass()) {
    // What the jobs saw of the live tree, recorded before anything compares with it (a commit
    // right after a job: live_sight.h). A live change from the earliest start on is unseen, so
    // taking it in later only ever finds more unseen changes, never fewer. One look serves both
    // the sights and the count the owner is told (a scan also links up hard links:
    // hard_links.h).
    std::optional<size_t> changes;
    // Taken before anything is looked at: what is touched from now on is the next pass's.
    std::optional<TouchedPaths> touched;
    if (feed) touched = feed->TakeTouched();
    std::optional<KnownChanges>* known = feed ? &feed->known() : nullptr;
    try {
      SightRecorder recorder(sights, sandbox, pass->unseen_from_ns, agreed_usec() * 1000, sandbox.gate().SightedBeforeNs(),
                             [&](const RecordKey& through) { sandbox.gate().SettledThrough(through); });
      if (sighted) recorder.OnRecorded(sighted);
      if (touched && touched->whole && *known && SettleTouched(sandbox, *touched, **known, recorder)) {
        if (touched->removed) sandbox.ForgetIndexWhiteouts();
        changes = (*known)->size();
        size_t looked = 0;
        for (const auto& paths : touched->paths) looked += paths.size();
        spdlog::debug("sandbox {}: settled from {} touched paths ({} changes)", sandbox.id(), looked, *changes);
      } else {
        // Learnt again where the feed follows the layers from here on: the next pass can look
        // at what is touched alone.
        if (known) {
          if (touched && touched->followed)
            known->emplace();
          else
            known->reset();
        }
        changes = SettleAll(sandbox, recorder, known && *known ? &**known : nullptr);
        spdlog::debug("sandbox {}: settled by a scan of the whole change set ({} changes)", sandbox.id(), *changes);
      }
      recorder.Finish();
      sandbox.gate().SightsRecordedBefore(pass->unseen_from_ns);
    } catch (const std::exception& e) {
      if (known) known->reset();  // half learnt: the next pass scans it all
      changes.reset();
      failed(e.what());
    }
    sandbox.gate().SettlePassDone(*pass);  // settled before the owner hears of it
    settled(changes);
    malloc_trim(0);  // the scan's memory goes back to the system, as after a worker's calls
  }
}

}  // namespace sandboxd
