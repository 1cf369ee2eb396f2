#pragma once
/// The checks of the real system against the model after a step: the live tree (read as
/// root), the sandbox's merged view, `changes --json` (paths, kinds, decisions, renames,
/// conflicts), the human `changes` and `diff` (no raw control bytes, names quoted as git does),
/// and the create options. Each throws Mismatch naming the difference.

#include <string>

#include "model_ops.h"

namespace sandboxd::model {

void CheckAll(Sequence& seq, bool with_diff);
void CheckLive(Sequence& seq, const Tree& expected, const std::string& what);
/// `show --json` still carries every create option, and a --hide path is still hidden.
void CheckOptions(Sequence& seq);
/// The daemon's hunks of one text file, checked to rebuild the sandbox's text from the live one.
std::vector<Hunk> HunksOf(Sequence& seq, const std::string& path);

}  // namespace sandboxd::model
