#include "review/decision_pins.h"

#include <map>
#include <utility>
#include <vector>

#include "unique_fd.h"
#include "review/fingerprint.h"

namespace sandboxd {
namespace {

/// Rewrites every stored decision with `pin` (the new fingerprint, or nullopt to forget it), a
/// page at a time: a million decisions (approve --all) are never held at once. Each decision
/// is its own: one cut off half-way is pinned by the next call (an 's' pin says which it is).
template <typename Pin>
void Repin(ApprovalStore& approvals, const SandboxReader& sandbox, Pin pin) {
  constexpr size_t kPage = 4096;
  std::map<size_t, std::pair<UniqueFd, UniqueFd>> roots;  // live, upper
  RecordKey from{0, std::string()};
  for (;;) {
    auto page = approvals.Page(sandbox.id(), from, kPage);
    std::vector<Approval> kept;
    std::vector<std::pair<size_t, std::string>> forgotten;
    for (auto& [key, approval] : page) {
      if (approval.root >= sandbox.roots().size()) continue;
      auto& fds = roots[approval.root];
      if (!fds.first) fds = {sandbox.OpenLiveRoot(approval.root), sandbox.OpenUpper(approval.root)};
      auto parts = SplitFingerprint(approval.fingerprint);
      std::optional<std::string> now = parts ? pin(*parts, fds.first.get(), fds.second.get(), approval.path, approval.root) : std::nullopt;
      if (!now) {
        forgotten.emplace_back(approval.root, approval.path);
      } else if (*now != approval.fingerprint) {
        approval.fingerprint = *now;
        kept.push_back(std::move(approval));
      }
    }
    if (!kept.empty()) approvals.Save(sandbox.id(), kept);
    if (!forgotten.empty()) approvals.Forget(sandbox.id(), forgotten);
    if (page.size() < kPage) return;
    // The next page starts just after this one's last key (its row may be gone now).
    from = page.back().first;
    from.second.push_back('\0');
  }
}

}  // namespace

void PinDecisionsForMove(ApprovalStore& approvals, const SandboxReader& sandbox) {
  Repin(approvals, sandbox,
        [](const FingerprintParts& parts, int live, int upper, const std::string& path, size_t) -> std::optional<std::string> {
          if (parts.kind == 's') return JoinFingerprint(parts);  // pinned by an earlier, cut-off suspend
          if (JoinFingerprint(parts) != ChangeFingerprint(live, upper, path)) return std::nullopt;
          return JoinFingerprint({'s', ArchivedStamp(upper, path), parts.live});
        });
}

void PinDecisionsToLayers(ApprovalStore& approvals, const SandboxReader& sandbox, const InodesByRoot& worked) {
  Repin(approvals, sandbox,
        [&](const FingerprintParts& parts, int live, int upper, const std::string& path, size_t root) -> std::optional<std::string> {
          if (parts.kind != 's') return JoinFingerprint(parts);
          if (!SameSandboxSide(parts.upper, ArchivedStamp(upper, path))) return std::nullopt;
          std::string live_side = parts.live;
          if (auto it = worked.find(root); it != worked.end())
            if (std::string now = EntryStamp(live, path); MovedOnlyByLinkWork(parts.live, now, it->second)) live_side = now;
          return JoinFingerprint({'u', EntryStamp(upper, path), live_side});
        });
}

}  // namespace sandboxd
