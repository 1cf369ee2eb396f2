#pragma once
/// After a job's end, what it changed is taken in: the sights of the live tree its jobs had
/// (live_sight.h) are recorded before anything compares with them, and the change set is
/// counted for the owner. It runs off the caller's time (Job.Wait is answered first), and while
/// it runs the sandbox is settling: a commit, and anyone reading conflicts, waits for it
/// (Sandbox::WaitSettled).
///
/// Where the sandbox's change feed (change_feed.h) followed its layers since the last settling,
/// a pass looks at the paths touched since then alone, and counts the change set from what it
/// knew before (KnownChanges): a job's end costs what the job did, not what the sandbox holds
/// (issue 41). Otherwise, and where what a touched path holds reaches beyond it (a live
/// directory an upper entry now hides, a hard link to link up), the pass scans the whole
/// change set, and learns it again for the next.

#include <cstdint>
#include <functional>
#include <memory>
#include <map>
#include <optional>
#include <string>

namespace sandboxd {

class ChangeFeed;
class Sandbox;
class SightStore;

/// Runs the settling passes of `sandbox` until none is left, when this thread is the one to run
/// them (Sandbox::QueueSettle with `unseen_from_ns`, what EndJob returned); else the settling
/// under way takes this end in. `feed`: the sandbox's change feed, if it has one. After each
/// pass: `settled` with the changes counted, or none and `failed` with why the sights could
/// not be recorded. `sighted` (may be empty) hears the sights as they are first recorded.
void SettleAfterJob(Sandbox& sandbox, SightStore& sights, int64_t unseen_from_ns, const std::function<int64_t()>& agreed_usec,
                    const std::shared_ptr<ChangeFeed>& feed, const std::function<void(std::optional<size_t>)>& settled,
                    const std::function<void(const std::string&)>& failed,
                    const std::function<void(const std::map<std::pair<size_t, std::string>, std::string>&)>& sighted = {});

}  // namespace sandboxd
