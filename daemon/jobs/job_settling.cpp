#include "jobs/job_settling.h"

#include <malloc.h>

#include "base/background_priority.h"
#include "sandbox/live_sight.h"
#include "sandbox/sandbox.h"

namespace sandboxd {

void SettleAfterJob(Sandbox& sandbox, SightStore& sights, int64_t unseen_from_ns, const std::function<int64_t()>& agreed_usec,
                    const std::function<void(std::optional<size_t>)>& settled, const std::function<void(const std::string&)>& failed) {
  if (!sandbox.QueueSettle(unseen_from_ns)) return;  // the settling under way takes it in
  BackgroundPriority background;  // nobody's call waits for it, unless it reads conflicts
  while (auto pass = sandbox.NextSettlePass()) {
    // What the jobs saw of the live tree, recorded before anything compares with it (a commit
    // right after a job: live_sight.h). A live change from the earliest start on is unseen, so
    // taking it in later only ever finds more unseen changes, never fewer. One scan serves both
    // the sights and the count the owner is told (a scan also links up hard links:
    // hard_links.h).
    std::optional<size_t> changes;
    try {
      sandbox.ForgetIndexWhiteouts();
      // As a stream: a job may have made a million changes. A listing reads its conflicts a
      // page at a time behind this pass (StreamedConflicts).
      SightRecorder recorder(sights, sandbox, pass->unseen_from_ns, agreed_usec() * 1000, sandbox.SightedBeforeNs(),
                             [&](const RecordKey& through) { sandbox.SettledThrough(through); });
      size_t counted = 0;
      for (size_t i = 0; i < sandbox.roots().size(); ++i) {
        sandbox.PrepareStream(i);
        sandbox.StreamChangesTimed(i, [&](Change&& change, const UpperEntry& upper) {
          ++counted;
          recorder.Add(i, change, upper.ctime_ns);
        });
      }
      recorder.Finish();
      sandbox.SightsRecordedBefore(pass->unseen_from_ns);
      changes = counted;
    } catch (const std::exception& e) {
      failed(e.what());
    }
    sandbox.SettlePassDone(*pass);  // settled before the owner hears of it
    settled(changes);
    malloc_trim(0);  // the scan's memory goes back to the system, as after a worker's calls
  }
}

}  // namespace sandboxd
