#pragma once
/// A repository's index is git's cache as well as what is staged: any `git status` in the live
/// tree (a shell prompt runs one at every command) rewrites `.git/index` with fresh stat data and
/// stages nothing. Read by its ctime alone, every sandbox whose job touched the index would then
/// conflict at every commit, for ever. So when a job's sight of a live index is recorded, what
/// that index stages is read too (helpers/staged_digest.h, as the owner), and a live index that
/// changed since conflicts only when what it stages changed: the owner staged or committed
/// something a sandbox's index would take back. An index seen while it changed ("?"), or one
/// that cannot be read, conflicts as any file does.

#include <map>
#include <string>
#include <vector>

#include "base/credentials.h"
#include "changes/conflict_check.h"
#include "helper_clients/owner_helpers.h"
#include "sandbox/live_sight.h"
#include "sandbox/root_changes.h"
#include "sandbox/sandbox_reader.h"

namespace sandboxd {

/// Of `recorded` (sights just stored, the first of their paths), the git indexes seen as a file:
/// what they stage now, kept with their sight when the file read is still the one sighted.
void RecordStagedSights(SightStore& sights, const SandboxReader& sandbox, OwnerHelpers& helpers, const Sights& recorded);

/// At a job's end, before anyone hears of it: the sight of each root's own index (".git/index")
/// that the sandbox holds and no job has sighted yet, and what it stages. The settling records
/// the other sights after the end is told; a `git status` the owner runs at once (their prompt
/// does) would come before it and make the index's sight unseen, a conflict for ever.
/// `unseen_from_ns`: as the settling's (Sandbox::EndJob).
void SightGitIndexesNow(SightStore& sights, const SandboxReader& sandbox, OwnerHelpers& helpers, int64_t unseen_from_ns);

/// Drops from `candidates` (root `root`'s conflicts by metadata, `seen` their sights by path)
/// each git index whose live file stages what it staged at its sight.
void DropRefreshedIndexes(SightStore& sights, const SandboxReader& sandbox, OwnerHelpers& helpers, const UserCredentials& owner,
                          size_t root, int live_fd, const std::map<std::string, std::string>& seen,
                          std::vector<ConflictCandidate>& candidates);

}  // namespace sandboxd
