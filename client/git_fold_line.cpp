#include "git_fold_line.h"

#include "utf8.h"

namespace sandboxctl {
namespace {

std::string Short(const std::string& id) { return id.substr(0, 7); }

std::string Commits(int64_t count) { return std::to_string(count) + (count == 1 ? " commit" : " commits"); }

/// "main" as the branch is shown, "detached HEAD" for none.
std::string BranchName(const std::string& wire) { return wire.empty() ? "detached HEAD" : sandboxd::api::ShowWireName(wire); }

/// What the sandbox did to HEAD's branch: "2 commits on main (a..b)" and its kin; "" for nothing.
std::string HistoryPart(const GitHistory& h) {
  if (h.to.empty() || h.to == h.from) return "";
  const std::string range = " (" + (h.from.empty() ? std::string("none") : Short(h.from)) + ".." + Short(h.to) + ")";
  const std::string branch = BranchName(h.branch);
  // A repository the live tree does not have (git init in a job): no branch to count from.
  if (h.new_branch && h.from.empty()) return "new repository, " + (h.ahead >= 0 ? Commits(h.ahead) + " on " : "") + branch + " (" + Short(h.to) + ")";
  if (h.new_branch) return (h.ahead >= 0 ? Commits(h.ahead) + " on new branch " : "new branch ") + branch + range;
  if (h.ahead > 0 && h.behind == 0) return Commits(h.ahead) + " on " + branch + range;
  if (h.ahead == 0 && h.behind > 0) return branch + " moved back " + Commits(h.behind) + range;
  if (h.ahead > 0 && h.behind > 0) return branch + " rewritten: " + Commits(h.ahead) + " in place of " + std::to_string(h.behind) + range;
  return branch + " moved" + range;
}

}  // namespace

std::string GitFoldLine(const GitFolded& folded, const GitHistory& history) {
  // "git" for the root's own repository, "git (lib/)" for another's.
  std::string work_tree = folded.git_dir.size() > 4 ? folded.git_dir.substr(0, folded.git_dir.size() - 5) : "";
  std::string line = work_tree.empty() ? "git: " : "git (" + sandboxd::api::ShowWireName(work_tree) + "/): ";
  std::vector<std::string> parts;
  if (history.known) {
    if (!history.branch.empty() && !history.was_branch.empty() && history.branch != history.was_branch)
      parts.push_back("on " + BranchName(history.branch) + " (was " + BranchName(history.was_branch) + ")");
    if (std::string moved = HistoryPart(history); !moved.empty()) parts.push_back(moved);
  }
  if (folded.other_refs > 0) parts.push_back(std::to_string(folded.other_refs) + (folded.other_refs == 1 ? " other ref" : " other refs"));
  if (folded.index_changed) parts.push_back(history.known && history.index == "same" ? "index refreshed" : "index");
  if (parts.empty()) parts.push_back("data");
  for (size_t i = 0; i < parts.size(); ++i) line += (i ? ", " : "") + parts[i];
  line += " (" + std::to_string(folded.files) + (folded.files == 1 ? " file)" : " files)");
  if (folded.approved == folded.entries)
    line += " [approved]";
  else if (folded.rejected == folded.entries)
    line += " [rejected]";
  else if (folded.approved + folded.rejected > 0)
    line += " [partly decided: approve or reject " + sandboxd::api::ShowWireName(folded.git_dir) + " whole]";
  if (!folded.conflict.empty()) line += " [conflict: " + folded.conflict + "]";
  return line;
}

}  // namespace sandboxctl
