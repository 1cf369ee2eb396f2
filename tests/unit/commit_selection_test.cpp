// What a partial commit takes, decided as the change set streams by (commit_selection.h), against
// the rules applied to the whole change set held at once (the reference below is how
// Review::Selection worked before it streamed): the same changes, hunks, renames and refusals,
// with parents before children.

#include "changes/commit_selection.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>

#include "base/errors.h"
#include "changes/change_selection.h"
#include "sandbox/sandbox.h"
#include "sandbox/layout.h"

namespace sandboxd {
namespace {

using Key = std::pair<size_t, std::string>;

struct Reference {
  std::set<Key> taken;
  std::map<Key, HunkPick> hunks;
  TakenRenames renames;
};

/// The rules over the whole change set held (after commit --all's approvals, when asked).
Reference ReferenceSelection(const Sandbox& sandbox, std::vector<ReviewedChange> reviewed, const std::vector<api::Selector>& selectors,
                             bool approve_pending) {
  std::vector<bool> named(reviewed.size(), selectors.empty());
  api::SelectorIndex index(selectors);
  std::vector<bool> used(selectors.size(), false);
  for (size_t c = 0; c < reviewed.size(); ++c)
    index.ForEachNaming(DisplayPath(reviewed[c].change, sandbox.PathPrefix(reviewed[c].root)), [&](size_t s) { named[c] = used[s] = true; });
  for (size_t s = 0; s < selectors.size(); ++s)
    if (!used[s]) throw Error(Code::kNotFound, "no change at " + api::ToString(selectors[s]));
  std::map<Key, size_t> at;
  for (size_t c = 0; c < reviewed.size(); ++c) at[{reviewed[c].root, reviewed[c].change.path}] = c;
  std::vector<bool> directly = named;
  for (size_t c = 0; c < reviewed.size(); ++c) {
    const std::string& other = !reviewed[c].renamed_from.empty() ? reviewed[c].renamed_from : reviewed[c].renamed_to;
    if (directly[c] && !other.empty()) named[at.at({reviewed[c].root, other})] = true;
  }
  // Content its owner could not be shown is approved by --all only when named by its own path.
  auto named_exactly = [&](const ReviewedChange& item) {
    for (const auto& selector : selectors)
      if (!selector.hunk && selector.path == DisplayPath(item.change, sandbox.PathPrefix(item.root))) return true;
    return false;
  };
  if (approve_pending)
    for (size_t c = 0; c < reviewed.size(); ++c)
      if (named[c] && (!UnreadableByOwner(reviewed[c].change) || named_exactly(reviewed[c]))) reviewed[c].approval.ApprovePending();
  Reference result;
  for (size_t c = 0; c < reviewed.size(); ++c) {
    const auto& item = reviewed[c];
    if (!named[c] || !(item.approval.CommitsWhole() || item.approval.CommitsPart())) continue;
    result.taken.insert({item.root, item.change.path});
    if (!item.approval.CommitsAll()) result.hunks[{item.root, item.change.path}] = item.approval.Approved();
  }
  for (const auto& key : std::set<Key>(result.taken)) {
    std::string path = key.second;
    for (size_t slash = path.rfind('/'); slash != std::string::npos; slash = path.rfind('/')) {
      path.resize(slash);
      auto it = at.find({key.first, path});
      if (it == at.end() || reviewed[it->second].change.new_type != EntryType::kDirectory) continue;
      if (reviewed[it->second].change.kind == ChangeKind::kModeChanged) continue;
      if (reviewed[it->second].approval.State() == ReviewState::kRejected) throw Error(Code::kInvalidArgument, "rejected parent " + path);
      result.taken.insert({key.first, path});
    }
  }
  for (const auto& item : reviewed)
    if (!item.renamed_from.empty() && result.taken.count({item.root, item.change.path}) && result.taken.count({item.root, item.renamed_from}))
      result.renames[{item.root, item.change.path}] = item.renamed_from;
  return result;
}

TEST(SelectionStreamTest, TakesWhatTheRulesOverTheWholeChangeSetTake) {
  Layout layout("/nonexistent/state", "/nonexistent/run");
  Sandbox sandbox({"00000000000000aa", "p", 1000, SandboxState::kActive, 0, {"/p"}}, layout);
  std::mt19937 random(23);
  auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  // In byte order, as a scan gives them: "d-1" and "d.c" come between "d" and what is beneath it.
  const std::vector<std::string> names = {"a", "b", "d", "d-1", "d-1/z", "d.c", "d/e", "d/e/f", "d/x", "d/y", "e", "s"};
  const std::set<std::string> directories = {"d", "d-1", "d/e"};
  int refusals = 0, along = 0, hunked = 0, renamed = 0;
  for (int round = 0; round < 20000; ++round) {
    std::vector<ReviewedChange> reviewed;
    for (const auto& name : names) {
      if (pick(4) == 0) continue;
      ReviewedChange item;
      item.change.path = name;
      item.approval.path = name;
      if (directories.count(name)) {
        item.change.kind = pick(4) == 0 ? ChangeKind::kModeChanged : ChangeKind::kAdded;
        item.change.old_type = item.change.kind == ChangeKind::kAdded ? EntryType::kNone : EntryType::kDirectory;
        item.change.new_type = EntryType::kDirectory;
      } else {
        item.change.kind = std::vector<ChangeKind>{ChangeKind::kAdded, ChangeKind::kModified, ChangeKind::kDeleted}[pick(3)];
        item.change.old_type = item.change.kind == ChangeKind::kAdded ? EntryType::kNone : EntryType::kFile;
        item.change.new_type = item.change.kind == ChangeKind::kDeleted ? EntryType::kNone : EntryType::kFile;
        // Now and then a file its owner cannot read (mode 0200): --all leaves it unless named.
        if (item.change.new_type == EntryType::kFile) item.change.new_mode = pick(6) == 0 ? 0200 : 0644;
      }
      Verdict verdict = std::vector<Verdict>{Verdict::kPending, Verdict::kApproved, Verdict::kApproved, Verdict::kRejected}[pick(4)];
      if (item.change.kind == ChangeKind::kModified && pick(3) == 0) {
        item.approval.DecideHunk(1, 3, verdict);
        item.approval.DecideHunk(1 + pick(3), 3, std::vector<Verdict>{Verdict::kPending, Verdict::kApproved, Verdict::kRejected}[pick(3)]);
      } else {
        item.approval.DecideWhole(verdict);
      }
      reviewed.push_back(std::move(item));
    }
    // A rename pairs a deletion with an addition (either may come first); its halves hold one decision.
    for (auto& deleted : reviewed) {
      if (deleted.change.kind != ChangeKind::kDeleted || pick(2) == 0) continue;
      for (auto& added : reviewed) {
        if (added.change.kind != ChangeKind::kAdded || added.change.new_type != EntryType::kFile || !added.renamed_from.empty()) continue;
        deleted.renamed_to = added.change.path;
        added.renamed_from = deleted.change.path;
        added.approval = deleted.approval;
        added.approval.path = added.change.path;
        break;
      }
    }
    std::vector<api::Selector> selectors;
    for (const auto& name : {"a", "d", "d-1", "d/e/f", "d/x", "e", "zz"})
      if (pick(7) == 0) selectors.push_back(api::Selector{name});
    bool approve_pending = pick(2) == 0;
    SCOPED_TRACE("round " + std::to_string(round));

    std::optional<Reference> expected;
    Code expected_refusal = Code::kFailed;
    try {
      expected = ReferenceSelection(sandbox, reviewed, selectors, approve_pending);
    } catch (const Error& e) {
      expected_refusal = e.code();
    }
    std::vector<TakenChange> emitted;
    std::optional<TakenRenames> renames;
    Code refusal = Code::kFailed;
    try {
      SelectionStream stream(sandbox, selectors, approve_pending, [&](TakenChange&& taken) { emitted.push_back(std::move(taken)); });
      for (const auto& item : reviewed) stream.Add(item);
      renames = stream.Finish();
    } catch (const Error& e) {
      refusal = e.code();
    }
    if (!expected) {
      ++refusals;
      ASSERT_FALSE(renames) << "the stream took what the rules refuse";
      // Refused for both reasons, either may be named; for one alone, that one.
      if (expected_refusal == Code::kInvalidArgument) {
        EXPECT_EQ(refusal, Code::kInvalidArgument);
      }
      continue;
    }
    ASSERT_TRUE(renames) << "the stream refused what the rules take";
    std::set<Key> taken;
    std::map<Key, HunkPick> hunks;
    for (const auto& item : emitted) {
      Key key{item.root, item.change.path};
      EXPECT_TRUE(taken.insert(key).second) << key.second << " taken twice";
      if (!item.hunks.empty()) hunks[key] = item.hunks;
      // Parents before children.
      for (std::string parent = key.second; parent.find('/') != std::string::npos;) {
        parent.resize(parent.rfind('/'));
        if (expected->taken.count({key.first, parent})) {
          EXPECT_TRUE(taken.count({key.first, parent})) << parent << " came after " << key.second;
        }
      }
    }
    EXPECT_EQ(taken, expected->taken);
    EXPECT_EQ(hunks, expected->hunks);
    EXPECT_EQ(*renames, expected->renames);
    hunked += !hunks.empty();
    renamed += !renames->empty();
    for (const auto& key : taken) {
      bool named_or_approved = false;
      for (const auto& item : reviewed)
        if (item.change.path == key.second) named_or_approved = item.approval.CommitsWhole() || item.approval.CommitsPart();
      along += !named_or_approved;
    }
  }
  // Every rule comes up often enough for the comparison to mean something.
  EXPECT_GT(refusals, 500);
  EXPECT_GT(along, 500);
  EXPECT_GT(hunked, 500);
  EXPECT_GT(renamed, 500);
}

}  // namespace
}  // namespace sandboxd
