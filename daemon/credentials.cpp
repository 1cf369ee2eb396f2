#include "credentials.h"

#include <grp.h>
#include <pwd.h>

#include <cerrno>
#include <string>

#include "errors.h"

namespace sandboxd {

UserCredentials LookupUser(uid_t uid) {
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

}  // namespace sandboxd
