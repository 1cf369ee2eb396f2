#include "git_fold.h"

#include <algorithm>
#include <optional>

#include "git_data.h"
#include "proxies.h"
#include "utf8.h"

namespace sandboxctl {

namespace {

/// `change`'s place in a repository's data, and its root's prefix.
std::optional<std::pair<sandboxd::api::GitDataPlace, std::string>> PlaceOf(const ListedChange& change, size_t roots) {
  std::optional<std::string> name = sandboxd::api::NameFromWire(change.path);
  if (!name) return std::nullopt;
  std::string prefix = roots > 1 ? std::to_string(change.root) + "/" : "";
  if (name->compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  auto place = sandboxd::api::GitDataOf(name->substr(prefix.size()));
  if (!place) return std::nullopt;
  return std::make_pair(std::move(*place), prefix);
}

}  // namespace

std::optional<std::string> GitFold::GitDirOf(const ListedChange& change) {
  if (change.path.find(".git/") == std::string::npos) return std::nullopt;  // the common case, asked nothing
  if (!roots_) roots_ = root_count_();
  auto place = PlaceOf(change, *roots_);
  if (!place) return std::nullopt;
  return sandboxd::api::WireName(place->second + place->first.git_dir);
}

std::optional<std::string> GitFold::Take(const ListedChange& change) {
  if (change.path.find(".git/") == std::string::npos) return std::nullopt;  // the common case, asked nothing
  if (!roots_) roots_ = root_count_();
  auto found = PlaceOf(change, *roots_);
  if (!found) return std::nullopt;
  const auto& place = found->first;
  const std::string git_dir = sandboxd::api::WireName(found->second + place.git_dir);
  if (folded_.empty() || folded_.back().git_dir != git_dir) {
    // A repository's data comes together in the listing's order; met again, it is the same one.
    auto known = std::find_if(folded_.begin(), folded_.end(), [&](const GitFolded& f) { return f.git_dir == git_dir; });
    if (known == folded_.end()) {
      folded_.emplace_back().git_dir = git_dir;
    } else {
      std::rotate(known, known + 1, folded_.end());
    }
  }
  GitFolded& repo = folded_.back();
  ++repo.entries;
  if (change.type != "directory") ++repo.files;
  if (change.review == "approved") ++repo.approved;
  if (change.review == "rejected") ++repo.rejected;
  if (place.inner == "index") repo.index_changed = true;
  if ((place.inner.rfind("refs/", 0) == 0 || place.inner == "packed-refs") && change.type != "directory")
    repo.ref_paths.push_back(place.inner);
  if (repo.conflict.empty() && (change.conflict || !change.conflict_reason.empty()))
    repo.conflict = sandboxd::api::ShowWireName(change.path) + ": " + change.conflict_reason;
  return git_dir;
}

std::vector<std::string> GitFold::GitDirs() const {
  std::vector<std::string> dirs;
  for (const auto& repo : folded_) dirs.push_back(repo.git_dir);
  return dirs;
}

std::vector<std::string> GitFold::Lines(Context& ctx, const std::string& sandbox_path) const {
  std::vector<std::string> asked;
  for (const auto& repo : folded_) asked.push_back(repo.git_dir);
  std::vector<GitHistory> histories(folded_.size());
  try {
    SandboxProxy sandbox(ctx.Bus(), sandbox_path);
    // Asked 100 at a time, as many as one call answers.
    std::vector<std::map<std::string, sdbus::Variant>> summaries;
    for (size_t first = 0; first < asked.size(); first += 100) {
      std::vector<std::string> some(asked.begin() + static_cast<long>(first), asked.begin() + static_cast<long>(std::min(asked.size(), first + 100)));
      auto answered = sandbox.GetGitSummary(some);
      summaries.insert(summaries.end(), answered.begin(), answered.end());
    }
    for (size_t i = 0; i < summaries.size() && i < histories.size(); ++i) {
      auto& h = histories[i];
      auto& s = summaries[i];
      auto text = [&](const char* key) { return s.count(key) ? s.at(key).get<std::string>() : std::string(); };
      h.branch = text("branch");
      h.was_branch = text("was_branch");
      h.from = text("from");
      h.to = text("to");
      h.index = text("index");
      h.new_branch = s.count("new_branch") && s.at("new_branch").get<bool>();
      h.ahead = s.count("ahead") ? s.at("ahead").get<int64_t>() : -1;
      h.behind = s.count("behind") ? s.at("behind").get<int64_t>() : -1;
      h.known = true;
    }
  } catch (const sdbus::Error&) {
    // (A daemon that cannot tell: the files are still counted and decided.)
  }
  std::vector<std::string> lines;
  for (size_t i = 0; i < folded_.size(); ++i) {
    GitFolded repo = folded_[i];
    // HEAD's branch is the history part; the other refs changed are counted.
    const std::string head_ref = histories[i].branch.empty() ? "" : "refs/heads/" + sandboxd::api::NameFromWire(histories[i].branch).value_or("");
    for (const auto& ref : repo.ref_paths)
      if (ref != head_ref && ref != "packed-refs") ++repo.other_refs;
    lines.push_back(GitFoldLine(repo, histories[i]));
  }
  return lines;
}

}  // namespace sandboxctl
