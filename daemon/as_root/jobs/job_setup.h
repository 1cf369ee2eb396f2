#pragma once
/// Pure decisions about a job before it starts: its working directory (inside a root, or
/// refused) and its environment (a documented minimal set plus what the caller passes, never
/// the daemon's own).

#include <map>
#include <string>
#include <vector>

#include "base/credentials.h"

namespace sandboxd {

/// "" → the first root. Otherwise an absolute, normalised path (no ".", ".." or empty
/// components) equal to or beneath one of `roots`. Throws Error(kInvalidPath) naming it;
/// with `outside_means_first_root`, a well-formed path outside every root is the first root.
/// Purely lexical, on purpose: the daemon never looks the path up (as root it would follow
/// what the caller's symlinks say, and could tell what exists where the caller cannot look).
/// bwrap's --chdir looks it up inside the job, as the owner, in the job's own view.
std::string ResolveJobCwd(const std::string& cwd, const std::vector<std::string>& roots, const std::string& sandbox_id,
                          bool outside_means_first_root = false);

/// PATH, HOME, USER, LOGNAME, SHELL, LANG=C.UTF-8; on a terminal (`on_terminal`), a prompt that
/// names the sandbox, so that no one takes its shell for the host's: PS1 for shells that take it
/// from the environment, and debian_chroot, which Debian's bash prompt shows in parentheses.
/// Then `extra` (which may override them all), and last SANDBOXD_SANDBOX=`sandbox_name`, which
/// it may not: a program can tell whose sandbox it runs in. Throws Error(kInvalidArgument) for
/// an empty name, one containing '=' or NUL, or a value containing NUL. These are the
/// command's variables: bwrap_args.h hands them to bwrap as --setenv, never as bwrap's own
/// environment.
std::vector<std::string> JobEnvironment(const UserCredentials& user, const std::string& sandbox_name, bool on_terminal,
                                        const std::map<std::string, std::string>& extra);

/// The host files a job needs from what are its private directories (kJobPrivateDirs): the
/// file /etc/resolv.conf leads to, where that is in one (systemd-resolved keeps it in /run), so
/// that a job with the network resolves names as the host does. Looked up as the daemon: what
/// /etc holds is the system's, not a user's.
std::vector<std::string> HostFilesJobsNeed();

/// What a job allowed some hosts sees in place of the host's files that say where names are
/// looked up: {the daemon's file, the path it is bound over}, for /etc/resolv.conf and
/// /etc/hosts, each bound over the file the host's path leads to (in a private directory too,
/// where HostFilesJobsNeed binds the host's). A host without one of them gets nothing bound
/// there: a resolver without resolv.conf asks 127.0.0.1, which reaches the forwarder too.
std::vector<std::pair<std::string, std::string>> NameFilesOfAllowlistedJobs(const std::string& resolv_conf, const std::string& hosts);

}  // namespace sandboxd
