// sandboxd-helper: the unprivileged half of sandboxd that moves and compares users' files.
// sandboxd execs it already running as a sandbox's owner (uid, gid, groups dropped;
// no_new_privs), with directory fds of the live roots and upper layers, and a JSON request on
// stdin. Everything it reads or writes in users' trees is therefore checked by the kernel
// against the owner's rights. Diffs and hunks are sandboxd-text-helper's (text_helper_main.cpp):
// kept apart so that this one, started for every commit, does not load libgit2 and the
// libraries it pulls in (a dozen; starting took 19 ms instead of 4).

#include "helpers/helper_operations.h"

int main(int argc, char** argv) { return sandboxd::ServeHelperRequest(argc, argv, sandboxd::FileHelperOperations()); }
