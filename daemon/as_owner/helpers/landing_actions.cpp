#include "helpers/landing_actions.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "base/directory_listing.h"
#include "base/beneath.h"
#include "base/errors.h"
#include "unique_fd.h"
#include "base/fs_util.h"
#include "base/tree_copy.h"

namespace sandboxd {

namespace {

/// Whether `name` in `dir` is a landing area as "make" makes it: a directory (not a symlink)
/// holding exactly upper/ and removed/. Missing: no.
bool IsLandingArea(int dir, const std::string& name) {
  UniqueFd area(openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!area) return false;
  DirectoryListing listing = DirectoryListing::Of(area.get());
  if (!listing) return false;
  std::vector<std::string> names = listing.Names();
  return std::set<std::string>(names.begin(), names.end()) == std::set<std::string>{"upper", "removed"};
}

}  // namespace

void RunLandingActions(const nlohmann::json& actions) {
  for (const auto& action : actions) {
    const std::string verb = action.at(0).get<std::string>();
    int fd = action.at(1).get<int>();
    if (verb == "sync") {
      SyncFileSystemOf(fd, "the landing area");
      continue;
    }
    if (verb == "copy") {
      // ["copy", FROM_FD, FD, PATH, FROM_FD, PATH, ...]: one copy of every tree beneath FD.
      int into = action.at(2).get<int>();
      std::vector<UniqueFd> targets;
      std::vector<TreeCopy> trees;
      if (action.size() < 4 || action.size() % 2 != 0)
        throw Error(Code::kInvalidArgument, "landing action copy takes FROM_FD, FD, PATH and further FROM_FD, PATH pairs");
      for (size_t at = 3; at < action.size(); at += 2) {
        const std::string target = action.at(at).get<std::string>();
        CheckRelativePath(target);
        targets.push_back(OpenBeneath(into, target, O_RDONLY | O_DIRECTORY));
        if (!targets.back()) ThrowErrno("cannot open " + target);
        trees.push_back({at == 3 ? fd : action.at(at - 1).get<int>(), targets.back().get()});
      }
      CopyTrees(trees);
      continue;
    }
    // "make" and "remove" act on one name in the directory, never on a path through others.
    const std::string target = action.at(2).get<std::string>();
    CheckRelativePath(target);
    if (target.find('/') != std::string::npos || target == ".")
      throw Error(Code::kInvalidArgument, "landing action " + verb + " takes one name, not " + target);
    if (verb == "make") {
      // Made whole under a name of its own, then renamed into place in one step: a helper
      // killed between its mkdirs must not leave a part-made area under the area's name, which
      // "remove" would take for the owner's (not exactly upper/ and removed/) and leave in the
      // live tree for good.
      std::string making = target + ".making";
      RemoveTreeAt(fd, making, making);
      if (mkdirat(fd, making.c_str(), 0700) != 0) ThrowErrno("cannot make " + making + " in the live root");
      UniqueFd area(openat(fd, making.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!area) ThrowErrno("cannot open " + making);
      for (const char* part : {"upper", "removed"})
        if (mkdirat(area.get(), part, 0700) != 0) ThrowErrno("cannot make " + making + "/" + part);
      // Why no replacing: a name someone planted (a symlink, a directory of theirs) must stop
      // the commit, never be written through.
      if (renameat2(fd, making.c_str(), fd, target.c_str(), RENAME_NOREPLACE) != 0) {
        int err = errno;
        RemoveTreeAt(fd, making, making);
        if (err == EEXIST)
          throw Error(Code::kConflict, "live " + target + " exists already; sandboxd needs that name for the commit");
        errno = err;
        ThrowErrno("cannot make " + target + " in the live root");
      }
    } else if (verb == "remove") {
      std::string retired = target + ".removing";
      RemoveTreeAt(fd, retired, retired);
      RemoveTreeAt(fd, target + ".making", target + ".making");  // a "make" cut off
      // Only an area of sandboxd's goes: something the owner has under that name (which made a
      // commit refuse to start) is the owner's, and stays.
      if (!IsLandingArea(fd, target)) continue;
      // Renamed aside first, in one step: a daemon killed half-way through the removal must
      // not find a half-emptied area under the name that says it holds a commit's backups.
      if (renameat(fd, target.c_str(), fd, retired.c_str()) != 0 && errno != ENOENT) ThrowErrno("cannot remove " + target);
      RemoveTreeAt(fd, retired, target);
    } else {
      throw Error(Code::kInvalidArgument, "unknown landing action '" + verb + "'");
    }
  }
}

}  // namespace sandboxd
