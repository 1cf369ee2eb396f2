#include "operations/git_report.h"

#include "base/errors.h"
#include "helper_clients/helper_client.h"
#include "sandbox/sandbox_reader.h"

namespace sandboxd {
namespace {

/// Whether `path` (relative to a root) is a ".git" directory's name: ".git" or ".../.git", with
/// no empty, "." or ".." component.
bool NamesGitDir(const std::string& path) {
  if (path != ".git" && (path.size() < 6 || path.compare(path.size() - 5, 5, "/.git") != 0)) return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string component = path.substr(start, end - start);
    if (component.empty() || component == "." || component == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

std::vector<nlohmann::json> SummarizeRepositories(const OperationParts& parts, const SandboxReader& sandbox, const std::vector<std::string>& git_dirs) {
  sandbox.CheckActive("read the git history of");
  if (git_dirs.size() > kMostGitSummaries)
    throw Error(Code::kInvalidArgument, "ask about at most " + std::to_string(kMostGitSummaries) + " repositories of sandbox " + sandbox.id() +
                                            " at once, not " + std::to_string(git_dirs.size()));
  std::vector<nlohmann::json> summaries;
  for (const auto& shown : git_dirs) {
    std::optional<size_t> root;
    std::string path;
    for (size_t i = 0; i < sandbox.roots().size() && !root; ++i) {
      const std::string prefix = sandbox.PathPrefix(i);
      if (shown.compare(0, prefix.size(), prefix) == 0 && NamesGitDir(shown.substr(prefix.size()))) {
        root = i;
        path = shown.substr(prefix.size());
      }
    }
    if (!root)
      throw Error(Code::kInvalidArgument, "'" + shown + "' is not the .git directory of a work tree in sandbox " + sandbox.id() +
                                              " (name it as changes does: .git, lib/.git" +
                                              (sandbox.roots().size() > 1 ? ", with the root's N/ first)" : ")"));
    UniqueFd live = sandbox.OpenLiveRoot(*root), upper = sandbox.OpenUpper(*root);
    summaries.push_back(GitSummaryAsOwner(parts.helpers, LookupUser(sandbox.owner()), live.get(), upper.get(), path));
  }
  return summaries;
}

}  // namespace sandboxd
