#pragma once
/// The change set as `review` walks it: each change with the verdict of each of its units (a
/// hunk of a text modification, or else the whole change), read from ListChanges and kept up to
/// date as decisions are sent, and the calls that read its diffs and send the decisions.

#include <map>
#include <string>
#include <vector>

#include "context.h"
#include "listed_change.h"
#include "proxies.h"
#include "selector.h"

namespace sandboxctl {

enum class Verdict { kPending, kApproved, kRejected };

struct ReviewedChange {
  std::string path;      ///< as selectors name it
  std::string kind;      ///< added, modified, deleted, type-changed, mode-changed
  std::string old_type;  ///< file, directory, symlink, ...; "" when there is no old side
  std::string new_type;  ///< "" when there is no new side
  /// One per hunk for a change decided hunk by hunk, else one for the whole change.
  std::vector<Verdict> verdicts;
  /// Of each hunk this review split (hunk number → one per part): what it decided of the parts.
  std::map<size_t, std::vector<Verdict>> parts;
  /// The other half of a rename, decided with this one: its old path on the added half, its
  /// new path on the deleted half; "" for a change that is no rename.
  std::string renamed_from;
  std::string renamed_to;
  /// Why it conflicts with the live tree (committing it needs --force); "" when it does not.
  std::string conflict;
  /// A file its owner cannot read: its content cannot be shown (listed_change.h).
  bool unreadable = false;

  /// Only these can be decided hunk by hunk (the daemon refuses PATH:N for the rest).
  bool TextModification() const { return kind == "modified" && old_type == "file" && new_type == "file"; }
  /// One verdict per hunk of the `hunks` the diff shows; a whole decision holds for each.
  void SpreadOverHunks(size_t hunks);
  /// "approved", "rejected", "pending" or "partial".
  std::string State() const;
};

/// A change as the daemon lists it, for review.
ReviewedChange Reviewed(const ListedChange& change);
/// The change set of the sandbox at `sandbox_path` (ListChanges), in its order.
std::vector<ReviewedChange> ReadChanges(Context& ctx, const std::string& sandbox_path);

/// The git-style diff that Diff writes for the change at `path` (a wire name).
std::string DiffOf(SandboxProxy& sandbox, const std::string& path);

/// Approve or Reject `selectors`.
void SendDecision(SandboxProxy& sandbox, Verdict verdict, const std::vector<sandboxd::api::Selector>& selectors);

/// Whether `path` is `dir` or lies beneath it, as a PATH selector names them ("." names all).
bool AtOrBeneath(const std::string& path, const std::string& dir);

}  // namespace sandboxctl
