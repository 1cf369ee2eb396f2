#include "changes/approval.h"

#include <algorithm>
#include <array>

#include "base/name_table.h"

namespace sandboxd {
namespace {

constexpr std::array<std::pair<Verdict, std::string_view>, 3> kVerdictNames{{
    {Verdict::kPending, "pending"},
    {Verdict::kApproved, "approved"},
    {Verdict::kRejected, "rejected"},
}};

constexpr std::array<std::pair<ReviewState, std::string_view>, 4> kStateNames{{
    {ReviewState::kPending, "pending"},
    {ReviewState::kApproved, "approved"},
    {ReviewState::kRejected, "rejected"},
    {ReviewState::kPartial, "partial"},
}};

}  // namespace

std::string_view ToString(Verdict verdict) { return NameOf(kVerdictNames, verdict, "unknown"); }
std::optional<Verdict> VerdictFromString(std::string_view text) { return ValueOf<Verdict>(kVerdictNames, text); }
std::string_view ToString(ReviewState state) { return NameOf(kStateNames, state, "unknown"); }

void Approval::ApprovePending() {
  if (State() == ReviewState::kPending) {
    DecideWhole(Verdict::kApproved);
  } else if (State() == ReviewState::kPartial) {
    for (auto& [hunk, verdicts] : parts)
      for (Verdict& verdict : verdicts)
        if (verdict == Verdict::kPending) verdict = Verdict::kApproved;
    for (int hunk : HunksWith(Verdict::kPending)) hunks[hunk] = Verdict::kApproved;
    Collapse();
  }
}

void Approval::DecideWhole(Verdict verdict) {
  hunks.clear();
  parts.clear();
  hunk_count = 0;
  whole = verdict;
}

void Approval::SpreadOverHunks(int count) {
  if (!hunks.empty() && hunk_count == count) return;
  Verdict before = hunks.empty() ? whole : Verdict::kPending;
  hunks.clear();
  parts.clear();
  for (int h = 1; h <= count; ++h) hunks[h] = before;
  hunk_count = count;
}

void Approval::DecideHunk(int hunk, int count, Verdict verdict) {
  SpreadOverHunks(count);
  parts.erase(hunk);
  hunks[hunk] = verdict;
  Collapse();
}

void Approval::DecidePart(int hunk, int part, int count, int part_count, Verdict verdict) {
  SpreadOverHunks(count);
  auto& verdicts = parts[hunk];
  if (static_cast<int>(verdicts.size()) != part_count) verdicts.assign(static_cast<size_t>(part_count), hunks[hunk]);
  verdicts[static_cast<size_t>(part - 1)] = verdict;
  hunks[hunk] = Verdict::kPending;
  Collapse();
}

void Approval::Collapse() {
  for (auto it = parts.begin(); it != parts.end();) {
    bool same = std::all_of(it->second.begin(), it->second.end(), [&](Verdict v) { return v == it->second.front(); });
    if (!same) {
      ++it;
      continue;
    }
    hunks[it->first] = it->second.empty() ? Verdict::kPending : it->second.front();
    it = parts.erase(it);
  }
  if (hunks.empty() || !parts.empty()) return;
  Verdict first = hunks.begin()->second;
  for (const auto& [number, decided] : hunks)
    if (decided != first) return;
  DecideWhole(first);
}

ReviewState Approval::State() const {
  if (hunks.empty()) {
    switch (whole) {
      case Verdict::kApproved: return ReviewState::kApproved;
      case Verdict::kRejected: return ReviewState::kRejected;
      case Verdict::kPending: return ReviewState::kPending;
    }
  }
  return ReviewState::kPartial;
}

std::set<int> Approval::HunksWith(Verdict verdict) const {
  std::set<int> numbers;
  for (const auto& [number, decided] : hunks)
    if (decided == verdict && parts.count(number) == 0) numbers.insert(number);
  return numbers;
}

std::set<int> Approval::SplitHunks() const {
  std::set<int> numbers;
  for (const auto& [number, verdicts] : parts) numbers.insert(number);
  return numbers;
}

HunkPick Approval::Approved() const {
  HunkPick pick;
  pick.hunks = ApprovedHunks();
  for (const auto& [number, verdicts] : parts)
    for (size_t i = 0; i < verdicts.size(); ++i)
      if (verdicts[i] == Verdict::kApproved) pick.parts[number].insert(static_cast<int>(i + 1));
  return pick;
}

bool SplitsWhatIsLeft(const Approval& before, const HunkPick& taken) {
  for (const auto& [hunk, parts] : taken.parts) {
    auto split = before.parts.find(hunk);
    if (split == before.parts.end() || parts.size() < split->second.size()) return true;
  }
  return false;
}

namespace {

/// One hunk of what is left, before it is cut as the diff left cuts it: its verdict whole, or
/// the verdicts of its parts (a hunk split and not taken), or of the runs left (taken in part).
struct LeftHunk {
  Verdict whole = Verdict::kPending;
  std::vector<Verdict> parts;
  bool cut_anew = false;  ///< taken in part: the runs left may show as several hunks
};

/// `verdicts` as one hunk's decision: their one verdict, or split.
void PutHunk(Approval& approval, int number, const std::vector<Verdict>& verdicts) {
  bool same = std::all_of(verdicts.begin(), verdicts.end(), [&](Verdict v) { return v == verdicts.front(); });
  approval.hunks[number] = same ? verdicts.front() : Verdict::kPending;
  if (!same) approval.parts[number] = verdicts;
}

}  // namespace

Approval ApprovalLeft(const Approval& before, const HunkPick& taken, const std::vector<int>* shape_left) {
  std::vector<LeftHunk> left;
  bool any_rejected = false;
  for (const auto& [number, verdict] : before.hunks) {
    if (taken.hunks.count(number)) continue;
    LeftHunk hunk{verdict, {}, false};
    if (auto split = before.parts.find(number); split != before.parts.end()) {
      auto took = taken.parts.find(number);
      for (size_t i = 0; i < split->second.size(); ++i)
        if (took == taken.parts.end() || !took->second.count(static_cast<int>(i + 1))) hunk.parts.push_back(split->second[i]);
      hunk.cut_anew = took != taken.parts.end();
      if (hunk.parts.empty()) continue;
    }
    for (Verdict v : hunk.parts) any_rejected |= v == Verdict::kRejected;
    any_rejected |= hunk.parts.empty() && verdict == Verdict::kRejected;
    left.push_back(std::move(hunk));
  }
  Approval kept = before;
  kept.DecideWhole(Verdict::kPending);
  if (left.empty()) return kept;

  bool fits = true;
  size_t next = 0;  // the next hunk of shape_left
  int number = 0;
  for (const auto& hunk : left) {
    if (!hunk.cut_anew) {
      // Untouched hunks stay one hunk each, cut as before.
      if (shape_left && (next >= shape_left->size() || (!hunk.parts.empty() && (*shape_left)[next] != static_cast<int>(hunk.parts.size()))))
        fits = false;
      ++next;
      if (hunk.parts.empty()) kept.hunks[++number] = hunk.whole;
      else PutHunk(kept, ++number, hunk.parts);
      continue;
    }
    // The runs left of a hunk taken in part, cut into as many hunks as the diff left shows.
    if (!shape_left) {
      fits = false;
      break;
    }
    size_t run = 0;
    while (run < hunk.parts.size() && next < shape_left->size()) {
      size_t count = static_cast<size_t>((*shape_left)[next++]);
      if (count == 0 || run + count > hunk.parts.size()) {
        fits = false;
        break;
      }
      PutHunk(kept, ++number, std::vector<Verdict>(hunk.parts.begin() + static_cast<long>(run),
                                                   hunk.parts.begin() + static_cast<long>(run + count)));
      run += count;
    }
    if (run != hunk.parts.size()) fits = false;
    if (!fits) break;
  }
  if (shape_left && next != shape_left->size()) fits = false;
  if (!fits) {
    kept.DecideWhole(any_rejected ? Verdict::kRejected : Verdict::kPending);
    return kept;
  }
  kept.hunk_count = number;
  kept.Collapse();
  return kept;
}

}  // namespace sandboxd
