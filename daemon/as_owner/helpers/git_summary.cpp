#include "helpers/git_summary.h"

#include <fcntl.h>
#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "base/beneath.h"
#include "helpers/staged_digest.h"
#include "unique_fd.h"

namespace sandboxd {
namespace {

/// The commits of a repository the live tree lacks are counted up to this many.
constexpr int64_t kMostCommitsCounted = 100000;

/// Refs and HEAD are a line; packed-refs of a repository with many tags is bigger, never this.
constexpr size_t kMostRefBytes = 64u << 20;

/// The regular file at `path` beneath `dir_fd`, whole; nullopt when there is none (or it is
/// bigger than kMostRefBytes). `whiteout` is set when the entry is overlayfs's mark of a name
/// the sandbox removed.
std::optional<std::string> ReadLayerFile(int dir_fd, const std::string& path, bool* whiteout = nullptr) {
  UniqueFd entry = OpenBeneath(dir_fd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (!entry || fstat(entry.get(), &st) != 0) return std::nullopt;
  if (whiteout && S_ISCHR(st.st_mode) && st.st_rdev == 0) *whiteout = true;
  if (!S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) > kMostRefBytes) return std::nullopt;
  UniqueFd file(open(("/proc/self/fd/" + std::to_string(entry.get())).c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) return std::nullopt;
  std::string text;
  char buffer[65536];
  ssize_t got;
  while ((got = read(file.get(), buffer, sizeof buffer)) > 0) {
    text.append(buffer, static_cast<size_t>(got));
    if (text.size() > kMostRefBytes) return std::nullopt;
  }
  return got == 0 ? std::optional<std::string>(std::move(text)) : std::nullopt;
}

/// One side of the repository: the sandbox's view (upper over live) or the live tree alone.
class RepositorySide {
 public:
  RepositorySide(int live_fd, int upper_fd, std::string git_dir) : live_(live_fd), upper_(upper_fd), git_dir_(std::move(git_dir)) {}

  /// A file of the git directory as this side shows it.
  std::optional<std::string> File(const std::string& name) const {
    const std::string path = git_dir_ + "/" + name;
    if (upper_ >= 0) {
      bool whiteout = false;
      if (auto text = ReadLayerFile(upper_, path, &whiteout)) return text;
      if (whiteout) return std::nullopt;
    }
    return ReadLayerFile(live_, path);
  }

  /// The commit `ref` ("HEAD", "refs/heads/main") names, following symbolic refs; "" when none.
  std::string Resolve(std::string ref, std::string* branch = nullptr) const {
    for (int depth = 0; depth < 5; ++depth) {
      std::optional<std::string> text = File(ref);
      if (!text) return Packed(ref);
      std::string line = text->substr(0, text->find('\n'));
      if (line.rfind("ref: ", 0) == 0) {
        ref = line.substr(5);
        if (branch && ref.rfind("refs/heads/", 0) == 0) *branch = ref.substr(11);
        continue;
      }
      return IsObjectId(line) ? line : "";
    }
    return "";
  }

  /// Whether `ref` has a value on this side.
  bool Has(const std::string& ref) const { return !Resolve(ref).empty(); }

 private:
  static bool IsObjectId(std::string_view text) {
    return text.size() == 40 && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  }

  std::string Packed(const std::string& ref) const {
    std::optional<std::string> packed = File("packed-refs");
    if (!packed) return "";
    size_t start = 0;
    while (start < packed->size()) {
      size_t end = packed->find('\n', start);
      std::string_view line(packed->data() + start, (end == std::string::npos ? packed->size() : end) - start);
      start = end == std::string::npos ? packed->size() : end + 1;
      if (line.size() > 41 && line[40] == ' ' && line.substr(41) == ref && IsObjectId(line.substr(0, 40))) return std::string(line.substr(0, 40));
    }
    return "";
  }

  int live_, upper_;
  std::string git_dir_;
};

/// Counts commits between two ids with both layers' object stores: an object is the same in
/// either (its name is its content), so their union is at least what the sandbox sees.
void CountCommits(int live_fd, int upper_fd, const std::string& git_dir, GitSummary& summary) {
  if (summary.to.empty()) return;
  if (summary.from == summary.to) {
    summary.ahead = summary.behind = 0;
    return;
  }
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
  git_odb* raw_odb = nullptr;
  if (git_odb_new(&raw_odb) != 0) return;
  std::unique_ptr<git_odb, decltype(&git_odb_free)> odb(raw_odb, git_odb_free);
  std::vector<UniqueFd> held;  // the object directories libgit2 reads through /proc/self/fd
  int priority = 10;
  for (int layer : {upper_fd, live_fd}) {
    UniqueFd objects = OpenBeneath(layer, git_dir + "/objects", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (!objects) continue;
    const std::string path = "/proc/self/fd/" + std::to_string(objects.get());
    git_odb_backend* backend = nullptr;
    if (git_odb_backend_loose(&backend, path.c_str(), -1, 0, 0, 0) == 0 && git_odb_add_backend(odb.get(), backend, priority--) != 0)
      backend->free(backend);
    backend = nullptr;
    if (git_odb_backend_pack(&backend, path.c_str()) == 0 && git_odb_add_backend(odb.get(), backend, priority--) != 0)
      backend->free(backend);
    held.push_back(std::move(objects));
  }
  git_repository* raw_repo = nullptr;
  if (git_repository_wrap_odb(&raw_repo, odb.get()) != 0) return;
  std::unique_ptr<git_repository, decltype(&git_repository_free)> repo(raw_repo, git_repository_free);
  git_oid from, to;
  if (git_oid_fromstr(&to, summary.to.c_str()) != 0) return;
  if (summary.from.empty()) {
    // A repository the live tree lacks: every commit is the sandbox's (counted up to a bound).
    git_revwalk* raw_walk = nullptr;
    if (git_revwalk_new(&raw_walk, repo.get()) != 0) return;
    std::unique_ptr<git_revwalk, decltype(&git_revwalk_free)> walk(raw_walk, git_revwalk_free);
    if (git_revwalk_push(walk.get(), &to) != 0) return;
    int64_t count = 0;
    git_oid next;
    while (count < kMostCommitsCounted && git_revwalk_next(&next, walk.get()) == 0) ++count;
    summary.ahead = count;
    summary.behind = 0;
    return;
  }
  if (git_oid_fromstr(&from, summary.from.c_str()) != 0) return;
  size_t ahead = 0, behind = 0;
  if (git_graph_ahead_behind(&ahead, &behind, repo.get(), &to, &from) != 0) return;
  summary.ahead = static_cast<int64_t>(ahead);
  summary.behind = static_cast<int64_t>(behind);
}

}  // namespace

GitSummary SummarizeGit(int live_fd, int upper_fd, const std::string& git_dir) {
  GitSummary summary;
  const RepositorySide view(live_fd, upper_fd, git_dir), live(live_fd, -1, git_dir);
  summary.to = view.Resolve("HEAD", &summary.branch);
  const std::string live_head = live.Resolve("HEAD", &summary.was_branch);
  if (!summary.branch.empty() && live.Has("refs/heads/" + summary.branch)) {
    summary.from = live.Resolve("refs/heads/" + summary.branch);
  } else {
    summary.new_branch = !summary.branch.empty();
    summary.from = live_head;
  }
  CountCommits(live_fd, upper_fd, git_dir, summary);
  // The index, where the sandbox's layer holds one: what it stages against the live one's.
  bool whiteout = false;
  if (ReadLayerFile(upper_fd, git_dir + "/index", &whiteout) || whiteout) {
    std::string mine = whiteout ? "" : StagedDigest(upper_fd, git_dir + "/index").digest;
    std::string theirs = StagedDigest(live_fd, git_dir + "/index").digest;
    summary.index = !mine.empty() && mine == theirs ? "same" : "changed";
  }
  return summary;
}

}  // namespace sandboxd
