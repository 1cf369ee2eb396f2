#include "base/credentials.h"

#include <grp.h>
#include <pwd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "base/errors.h"

namespace sandboxd {

namespace {

/// How long a looked-up user is reused. Looking up the groups asks every NSS module (systemd's
/// userdb included), about a millisecond each time, and one commit needs the owner several
/// times; a change of groups reaches new jobs and commits within this much.
constexpr auto kReuseFor = std::chrono::seconds(2);

struct Remembered {
  std::chrono::steady_clock::time_point when;
  UserCredentials creds;
};

std::mutex remembered_mutex;
std::map<uid_t, Remembered> remembered;

UserCredentials ReadUser(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd pw{};
  passwd* found = nullptr;
  int err = 0;
  while ((err = getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &found)) == ERANGE) buffer.resize(buffer.size() * 2);
  if (err != 0 || found == nullptr)
    throw Error(Code::kAccessDenied, "uid " + std::to_string(uid) + " has no entry in the user database");

  UserCredentials creds;
  creds.uid = pw.pw_uid;
  creds.gid = pw.pw_gid;
  creds.name = pw.pw_name;
  creds.home = pw.pw_dir ? pw.pw_dir : "/";
  creds.shell = pw.pw_shell && *pw.pw_shell ? pw.pw_shell : "/bin/sh";

  int count = 32;
  std::vector<gid_t> groups(count);
  while (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &count) < 0) groups.resize(count);
  groups.resize(count);
  creds.groups = std::move(groups);
  return creds;
}

}  // namespace

UserCredentials LookupUser(uid_t uid) {
  auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(remembered_mutex);
    auto it = remembered.find(uid);
    if (it != remembered.end() && now - it->second.when < kReuseFor) return it->second.creds;
  }
  UserCredentials creds = ReadUser(uid);  // unknown users throw, and are never remembered
  std::lock_guard lock(remembered_mutex);
  remembered[uid] = {now, creds};
  return creds;
}

}  // namespace sandboxd
