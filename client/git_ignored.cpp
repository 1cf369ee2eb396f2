#include "git_ignored.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "proxies.h"
#include "utf8.h"

extern char** environ;

namespace sandboxctl {
namespace {

/// The user's environment, less the variables that give every pathspec a magic
/// (GIT_LITERAL_PATHSPECS and its kin): check-ignore refuses each of them for every path
/// ("pathspec magic not supported by this command"), which would end the folding unseen.
std::vector<char*> GitEnvironment() {
  std::vector<char*> kept;
  for (char** variable = environ; *variable; ++variable) {
    bool magic = false;
    for (const char* name : {"GIT_LITERAL_PATHSPECS=", "GIT_GLOB_PATHSPECS=", "GIT_NOGLOB_PATHSPECS=", "GIT_ICASE_PATHSPECS="})
      magic = magic || strncmp(*variable, name, strlen(name)) == 0;
    if (!magic) kept.push_back(*variable);
  }
  kept.push_back(nullptr);
  return kept;
}

}  // namespace

std::string RunGit(const std::string& dir, const std::vector<std::string>& args, const std::string& input, bool& ok) {
  ok = false;
  // The input waits in a memory file: git reads it whole while we read its answer, and no
  // pipe fills up both ways.
  int in = memfd_create("git-input", MFD_CLOEXEC);
  if (in < 0) return "";
  if (!input.empty() && write(in, input.data(), input.size()) != static_cast<ssize_t>(input.size())) {
    close(in);
    return "";
  }
  lseek(in, 0, SEEK_SET);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in);
    return "";
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> words = {"git", "-C", dir};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::vector<char*> env = GitEnvironment();
  pid_t pid = -1;
  int spawned = posix_spawnp(&pid, "git", &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in);
  close(out[1]);
  std::string answer;
  if (spawned == 0) {
    char buffer[65536];
    for (;;) {
      ssize_t got = read(out[0], buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      answer.append(buffer, static_cast<size_t>(got));
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ok = WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1);
  }
  close(out[0]);
  return answer;
}

namespace {

/// Whether git could find a work tree at `dir`: a ".git" (directory, or file of a linked work
/// tree) in it or a directory above, or a repository named by the environment. Where there is
/// none, git would say no; asking it costs a process start.
bool MayBeInWorkTree(const std::string& dir) {
  if (getenv("GIT_DIR") != nullptr || getenv("GIT_WORK_TREE") != nullptr) return true;
  std::string at = dir;
  for (;;) {
    struct stat st;
    if (lstat((at == "/" ? std::string("/.git") : at + "/.git").c_str(), &st) == 0) return true;
    if (at == "/" || at.empty()) return false;
    size_t slash = at.rfind('/');
    at = slash == 0 || slash == std::string::npos ? "/" : at.substr(0, slash);
  }
}

}  // namespace

GitIgnored GitIgnored::OfSandbox(Context& ctx, const std::string& sandbox_path) {
  return GitIgnored(std::function<std::vector<std::string>()>([&ctx, sandbox_path] {
    return SandboxProxy(ctx.Bus(), sandbox_path).GetInfo()["roots"].get<std::vector<std::string>>();
  }));
}

GitIgnored::GitIgnored(const std::vector<std::string>& roots)
    : GitIgnored(std::function<std::vector<std::string>()>([roots] { return roots; })) {}

void GitIgnored::Resolve() const {
  if (resolved_) return;
  resolved_ = true;
  roots_ = read_roots_();
  for (const auto& root : roots_) {
    bool ok = false;
    bool inside = MayBeInWorkTree(root) && RunGit(root, {"rev-parse", "--is-inside-work-tree"}, "", ok) == "true\n" && ok;
    in_work_tree_.push_back(inside);
    any_ = any_ || inside;
  }
}

bool GitIgnored::any() const {
  Resolve();
  return any_;
}

std::set<std::pair<std::string, bool>> GitIgnored::Ask(const std::vector<Path>& paths) const {
  std::set<std::pair<std::string, bool>> ignored;
  if (paths.empty() || !any()) return ignored;
  // Per root: the names' bytes, NUL-separated, as `git check-ignore --stdin -z` reads them.
  std::map<size_t, std::string> input;
  std::map<size_t, std::map<std::string, Path>> asked_as;  // root → bytes asked → the question
  for (const auto& [path, directory] : paths) {
    size_t root = 0;
    std::string_view relative = path;
    if (roots_.size() > 1) {
      // "N/path": a prefix that is no root's index (a newer daemon's form) folds nothing.
      size_t slash = path.find('/');
      if (slash == 0 || slash == std::string::npos || slash > 9 || path.find_first_not_of("0123456789") < slash) continue;
      root = std::stoul(path.substr(0, slash));
      relative.remove_prefix(slash + 1);
    }
    if (root >= roots_.size() || !in_work_tree_[root]) continue;
    auto bytes = sandboxd::api::NameFromWire(relative);
    if (!bytes || bytes->empty() || *bytes == ".") continue;
    // git decides what a name is by looking at the live tree (lstat), and a pattern like
    // "docs/" matches directories only: a name asked as no directory where the live tree has
    // one would be answered for the directory. Unsure is not ignored: it is shown.
    struct stat live;
    if (!directory && lstat((roots_[root] + "/" + *bytes).c_str(), &live) == 0 && S_ISDIR(live.st_mode)) continue;
    // Names are data: git reads a pathspec that begins with ':' as magic (":/dist/x" is
    // dist/x from the top, ":!x" an exclusion), so a job's name could be answered for another
    // path and its change folded unseen. check-ignore refuses --literal-pathspecs (git 2.39:
    // "magic not supported"); "./NAME" is read as NAME itself, never as magic, and a path, not
    // a glob, is what check-ignore matches. git answers with the name as asked.
    std::string asked = "./" + (directory ? *bytes + "/" : *bytes);
    input[root] += asked + '\0';
    asked_as[root][asked] = {path, directory};
  }
  for (const auto& [root, names] : input) {
    bool ok = false;
    std::string answer = RunGit(roots_[root], {"check-ignore", "--stdin", "-z"}, names, ok);
    if (!ok) continue;  // git could not say: nothing is folded
    for (size_t start = 0, end; (end = answer.find('\0', start)) != std::string::npos; start = end + 1) {
      auto found = asked_as[root].find(answer.substr(start, end - start));
      if (found != asked_as[root].end()) ignored.emplace(found->second.shown, found->second.directory);
    }
  }
  return ignored;
}

std::vector<bool> GitIgnored::OfChanges(const std::vector<Sides>& changes) const {
  std::vector<bool> answers(changes.size(), false);
  if (changes.empty() || !any()) return answers;
  // Every change's questions, one after another: change i's are asked[first[i], first[i + 1]).
  std::vector<Path> asked;
  std::vector<size_t> first;
  for (const Sides& change : changes) {
    first.push_back(asked.size());
    const bool old_directory = change.old_type == "directory", new_directory = change.new_type == "directory";
    if (!change.old_type.empty()) asked.push_back({std::string(change.path), old_directory});
    if (!change.new_type.empty() && (change.old_type.empty() || old_directory != new_directory))
      asked.push_back({std::string(change.path), new_directory});  // (a side as the other is, asked once)
    // A rename moves a file (never a directory): its other path is one side more.
    for (std::string_view partner : {change.renamed_from, change.renamed_to})
      if (!partner.empty()) asked.push_back({std::string(partner), false});
  }
  first.push_back(asked.size());
  // A path asked both as a directory and as none is two questions, answered apart.
  const auto ignored = Ask(asked);
  for (size_t i = 0; i < changes.size(); ++i) {
    bool all = first[i] < first[i + 1];  // a change with no side named is not folded
    for (size_t q = first[i]; all && q < first[i + 1]; ++q) all = ignored.count({asked[q].shown, asked[q].directory}) > 0;
    answers[i] = all;
  }
  return answers;
}

}  // namespace sandboxctl
