#include "changes/approval.h"

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
    for (int hunk : HunksWith(Verdict::kPending)) DecideHunk(hunk, hunk_count, Verdict::kApproved);
  }
}

void Approval::DecideWhole(Verdict verdict) {
  hunks.clear();
  hunk_count = 0;
  whole = verdict;
}

void Approval::DecideHunk(int hunk, int count, Verdict verdict) {
  if (hunks.empty() || hunk_count != count) {
    hunks.clear();
    for (int h = 1; h <= count; ++h) hunks[h] = whole;
    hunk_count = count;
  }
  hunks[hunk] = verdict;
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
    if (decided == verdict) numbers.insert(number);
  return numbers;
}

std::set<int> Approval::ApprovedHunks() const { return HunksWith(Verdict::kApproved); }

std::map<int, Verdict> RemainingHunks(const Approval& before, const std::set<int>& committed) {
  std::map<int, Verdict> left;
  int next = 1;
  for (const auto& [number, decided] : before.hunks)
    if (!committed.count(number)) left[next++] = decided;
  return left;
}

}  // namespace sandboxd
