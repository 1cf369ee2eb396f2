#pragma once
/// The operations of the owner-side helpers, by name (model/helper_request.h HelperOp): each
/// takes the request's JSON, whose fds are open in the process that runs it, and returns the
/// answer. sandboxd-helper serves the file operations and sandboxd-text-helper the text ones
/// (apart so that the one every commit starts loads no libgit2); the unit tests run both in a
/// child of their own (tests/unit/forked_helpers.h).

#include <map>

#include "model/helper_request.h"

namespace sandboxd {

/// compare, renames, steps, landing.
const std::map<HelperOp, HelperOperation>& FileHelperOperations();
/// diff, hunks, merge.
const std::map<HelperOp, HelperOperation>& TextHelperOperations();

}  // namespace sandboxd
