#pragma once
/// The owner's side of a landing area (commit/landing_area.h): what sandboxd-helper does in a live
/// root, as the owner, when the daemon asks it to make, fill, sync or remove one.

#include <nlohmann/json.hpp>

namespace sandboxd {

/// The helper's side (sandboxd-helper "landing"): runs `actions`, each one of
/// ["make", FD, NAME] (the area NAME with upper/ and removed/ in directory FD; refused when NAME
/// exists), ["copy", FROM_FD, FD, PATH, ...] (CopyTree of FROM_FD's contents into PATH beneath FD;
/// each further FROM_FD, PATH pair is copied into its PATH beneath FD as part of one copy, names
/// of one inode across them kept one inode: CopyTrees),
/// ["remove", FD, NAME] (RemoveTreeAt of an area "make" made: a directory holding exactly upper/
/// and removed/; anything else at NAME is left alone) and ["sync", FD] (syncfs), in order.
void RunLandingActions(const nlohmann::json& actions);

}  // namespace sandboxd
