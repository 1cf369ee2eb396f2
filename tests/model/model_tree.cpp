#include "model_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <vector>

#include "model_names.h"

namespace sandboxd::model {
namespace {

std::string ReadFd(int fd) {
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

void Walk(int dirfd, const std::string& prefix, Tree& tree, std::map<std::pair<dev_t, ino_t>, std::vector<std::string>>& inodes) {
  DIR* dir = fdopendir(dup(dirfd));
  if (!dir) return;
  std::vector<std::string> names;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  for (const auto& name : names) {
    struct stat st;
    if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    std::string path = prefix + name;
    Entry entry;
    entry.mode = st.st_mode & 07777;
    if (S_ISDIR(st.st_mode)) {
      entry.type = 'd';
      tree[path] = entry;
      int child = openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child >= 0) {
        Walk(child, path + "/", tree, inodes);
        close(child);
      }
    } else if (S_ISLNK(st.st_mode)) {
      entry.type = 'l';
      entry.mode = 0777;
      char target[4096];
      ssize_t n = readlinkat(dirfd, name.c_str(), target, sizeof target);
      entry.data.assign(target, n > 0 ? static_cast<size_t>(n) : 0);
      tree[path] = entry;
    } else if (S_ISREG(st.st_mode)) {
      entry.type = 'f';
      int fd = openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0) {
        entry.data = ReadFd(fd);
        close(fd);
      } else {
        entry.data = "<unreadable>";
      }
      tree[path] = entry;
      inodes[{st.st_dev, st.st_ino}].push_back(path);
    } else {
      entry.type = '?';
      tree[path] = entry;
    }
  }
}

/// Per path of a group with 2+ names in the tree, the group's smallest name: a label that
/// means the same in any two trees.
std::map<std::string, std::string> GroupLabels(const Tree& tree) {
  std::map<long, std::vector<std::string>> groups;
  for (const auto& [path, entry] : tree)
    if (entry.type == 'f' && entry.group != 0) groups[entry.group].push_back(path);
  std::map<std::string, std::string> labels;
  for (const auto& [id, paths] : groups)
    if (paths.size() > 1)
      for (const auto& p : paths) labels[p] = paths.front();  // map order: front is smallest
  return labels;
}

}  // namespace

Tree ReadTree(const std::string& dir) {
  Tree tree;
  std::map<std::pair<dev_t, ino_t>, std::vector<std::string>> inodes;
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return tree;
  Walk(fd, "", tree, inodes);
  close(fd);
  long next = 1;
  for (const auto& [ino, paths] : inodes) {
    if (paths.size() < 2) continue;
    for (const auto& p : paths) tree[p].group = next;
    ++next;
  }
  return tree;
}

std::string DescribeEntry(const Entry& entry) {
  char mode[16];
  std::snprintf(mode, sizeof mode, "%04o", entry.mode);
  switch (entry.type) {
    case 'd': return std::string("dir ") + mode;
    case 'l': return "symlink -> " + Printable(entry.data, 60);
    case 'f': return std::string("file ") + mode + " \"" + Printable(entry.data, 60) + "\"";
    default: return "special";
  }
}

std::string CompareTrees(const Tree& expected, const Tree& actual, bool compare_groups, size_t limit) {
  std::string out;
  size_t count = 0;
  auto note = [&](const std::string& line) {
    if (count++ < limit) out += "    " + line + "\n";
  };
  std::set<std::string> paths;
  for (const auto& [p, e] : expected) paths.insert(p);
  for (const auto& [p, e] : actual) paths.insert(p);
  for (const auto& p : paths) {
    auto x = expected.find(p), a = actual.find(p);
    std::string name = GitQuote(p);
    if (a == actual.end()) note(name + ": missing (expected " + DescribeEntry(x->second) + ")");
    else if (x == expected.end()) note(name + ": unexpected " + DescribeEntry(a->second));
    else if (x->second.type != a->second.type || x->second.data != a->second.data || x->second.mode != a->second.mode)
      note(name + ": expected " + DescribeEntry(x->second) + ", found " + DescribeEntry(a->second));
  }
  auto want = GroupLabels(expected), have = GroupLabels(actual);
  for (const auto& p : paths) {
    if (!compare_groups || !expected.count(p) || !actual.count(p)) continue;
    auto w = want.find(p), h = have.find(p);
    std::string ws = w == want.end() ? "" : w->second, hs = h == have.end() ? "" : h->second;
    if (ws != hs)
      note(GitQuote(p) + ": hard links: expected " + (ws.empty() ? "its own inode" : "one inode with " + GitQuote(ws)) +
           ", found " + (hs.empty() ? "its own inode" : "one inode with " + GitQuote(hs)));
  }
  if (count > limit) out += "    ... and " + std::to_string(count - limit) + " more\n";
  return out;
}

}  // namespace sandboxd::model
