// sandboxd-text-helper: the unprivileged half of sandboxd that reads text: diffs, hunk counts
// and the merge of approved hunks (with libgit2's patch API). Started like sandboxd-helper
// (helper_main.cpp), as the sandbox's owner with directory fds and a JSON request on stdin.

#include "helpers/helper_operations.h"

int main(int argc, char** argv) { return sandboxd::ServeHelperRequest(argc, argv, sandboxd::TextHelperOperations()); }
