#include "changes/git_index_sights.h"

#include <sys/stat.h>

#include <algorithm>

#include "base/beneath.h"
#include "git_data.h"
#include "helper_clients/helper_client.h"

namespace sandboxd {
namespace {

/// The sight a staged read's file had (live_sight.h's form of a file seen).
std::string SightOfRead(const StagedRead& read) {
  struct stat st {};
  st.st_mode = S_IFREG;
  st.st_ino = read.ino;
  st.st_ctim.tv_sec = read.ctime_ns / 1000000000;
  st.st_ctim.tv_nsec = read.ctime_ns % 1000000000;
  return SightOf(st);
}

/// Whether `sight` is of a file seen (not unseen, absent or a directory).
bool SeenFile(const std::string& sight) { return sight != kUnseen && sight != "-" && sight != "dir"; }

}  // namespace

void RecordStagedSights(SightStore& sights, const SandboxReader& sandbox, OwnerHelpers& helpers, const Sights& recorded) {
  std::map<size_t, std::vector<std::pair<std::string, std::string>>> indexes;  // root → {path, sight}
  // Only a sight that is the one kept (the first recorded wins: SightGitIndexesNow may have
  // recorded it before the settling did).
  for (const auto& [key, sight] : recorded)
    if (api::IsGitIndex(key.second) && SeenFile(sight) && sights.SightAt(sandbox.id(), key.first, key.second) == sight)
      indexes[key.first].emplace_back(key.second, sight);
  std::vector<SightStore::StagedSight> staged;
  for (const auto& [root, paths] : indexes) {
    std::vector<std::string> names;
    for (const auto& [path, sight] : paths) names.push_back(path);
    UniqueFd live = sandbox.OpenLiveRoot(root);
    auto reads = StagedDigestsAsOwner(helpers, LookupUser(sandbox.owner()), live.get(), names);
    for (size_t i = 0; i < reads.size(); ++i)
      // Read after the sight was taken: kept only when the file read is the one sighted.
      if (!reads[i].digest.empty() && SightOfRead(reads[i]) == paths[i].second)
        staged.push_back({root, paths[i].first, paths[i].second, reads[i].digest});
  }
  sights.RecordStaged(sandbox.id(), staged);
}

void SightGitIndexesNow(SightStore& sights, const SandboxReader& sandbox, OwnerHelpers& helpers, int64_t unseen_from_ns) {
  static const std::string kIndex = ".git/index";
  Sights now;
  for (size_t root = 0; root < sandbox.roots().size(); ++root) {
    UniqueFd upper = sandbox.OpenUpper(root);
    auto held = StatBeneath(upper.get(), kIndex);
    if (!held || !S_ISREG(held->st_mode) || sights.SightAt(sandbox.id(), root, kIndex)) continue;
    UniqueFd live = sandbox.OpenLiveRoot(root);
    now[{root, kIndex}] = LiveSight(sandbox.LiveIdentity(), live.get(), kIndex, unseen_from_ns);
  }
  if (now.empty()) return;
  sights.RecordFirst(sandbox.id(), now);
  RecordStagedSights(sights, sandbox, helpers, now);
}

void DropRefreshedIndexes(SightStore& sights, const SandboxReader& sandbox, OwnerHelpers& helpers, const UserCredentials& owner,
                          size_t root, int live_fd, const std::map<std::string, std::string>& seen,
                          std::vector<ConflictCandidate>& candidates) {
  std::vector<std::string> paths, was;
  for (const auto& candidate : candidates) {
    if (!candidate.same_content_possible || !api::IsGitIndex(candidate.path)) continue;
    auto sight = seen.find(candidate.path);
    if (sight == seen.end() || !SeenFile(sight->second)) continue;
    auto staged = sights.StagedAt(sandbox.id(), root, candidate.path, sight->second);
    if (!staged) continue;
    paths.push_back(candidate.path);
    was.push_back(*staged);
  }
  if (paths.empty()) return;
  auto now = StagedDigestsAsOwner(helpers, owner, live_fd, paths);
  std::set<std::string> refreshed;
  for (size_t i = 0; i < paths.size() && i < now.size(); ++i)
    if (!now[i].digest.empty() && now[i].digest == was[i]) refreshed.insert(paths[i]);
  std::erase_if(candidates, [&](const ConflictCandidate& candidate) { return refreshed.count(candidate.path) > 0; });
}

}  // namespace sandboxd
