#pragma once
/// One line of a ListChanges change list (the daemon's change_listing.h) read into its fields,
/// without building a JSON object: `changes` reads a million of them. Keys it does not know
/// are passed over, so a newer daemon's lines still read.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandboxctl {

struct ListedChange {
  uint32_t root = 0;
  std::string path;
  std::string kind;      ///< added, modified, deleted, type-changed, mode-changed
  std::string type;
  std::string old_type;  ///< "" when there is no old side
  std::string new_type;  ///< "" when there is no new side
  std::optional<uint32_t> old_mode, new_mode;
  std::optional<uint64_t> old_size, new_size;  ///< set for a side that is a file or symlink
  std::string review = "pending";
  std::optional<uint32_t> hunks;  ///< set for a change decided hunk by hunk
  std::vector<uint32_t> approved_hunks, rejected_hunks;
  std::vector<uint32_t> split_hunks;  ///< hunks decided part by part (PATH:N.M)
  std::string renamed_from, renamed_to;
  bool conflict = false;
  std::string conflict_reason;
  /// The sandbox's file is one its owner cannot read: its content cannot be shown, and only
  /// naming it approves or commits it (--all and directories pass it over).
  bool unreadable = false;

  /// Only these can be decided hunk by hunk (the daemon refuses PATH:N for the rest).
  bool TextModification() const { return kind == "modified" && old_type == "file" && new_type == "file"; }
};

/// The letter `changes` shows for a change of `kind` (the vocabulary's words): A, M, D, T, P;
/// '?' for a kind this client does not know.
char ChangeLetter(std::string_view kind);

/// "" for a pending change, " [approved]", " [rejected]", or for a change decided hunk by hunk
/// " [partial: hunks 2 approved, 1 rejected, of 3]" (", hunks 3 decided in parts" for hunks
/// split by PATH:N.M).
std::string ReviewNote(const ListedChange& change);

/// " (renamed from P)" on the added half of a rename, " (renamed to P)" on the deleted one; P
/// as git prints names.
std::string RenameNote(const ListedChange& change);

/// "  12 B" after a file or symlink (its size in the sandbox, or the live one's for a
/// deletion), "  900 B -> 1.2 KiB" when a modification changed it; "" otherwise.
std::string SizeNote(const ListedChange& change);

/// " [conflict: REASON]" for a change that conflicts with the live tree; "" otherwise.
std::string ConflictNote(const ListedChange& change);

/// The fields of `line`, a JSON object; nullopt when it is no JSON object.
std::optional<ListedChange> ParseListedChange(std::string_view line);

}  // namespace sandboxctl
