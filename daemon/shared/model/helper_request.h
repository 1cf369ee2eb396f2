#pragma once
/// What both sandboxd helpers share: reading the request a helper gets (roots with their
/// changes) and serving one operation, answering one JSON object on stdout; an error is
/// {"error": {"name": D-Bus error name, "message": ...}}. See helper_main.cpp.

#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/change.h"
#include "model/renames.h"
#include "selector.h"

namespace sandboxd {

struct RootRequest {
  int live_fd = -1;
  int upper_fd = -1;
  std::string prefix;
  std::vector<Change> changes;
  std::vector<Rename> renames;
  std::map<std::string, std::set<api::HunkRef>> only_hunks;  ///< "diff" only: see DiffOptions
  bool binary = false;  ///< "diff" only: binary changes as git's binary patches
};

std::vector<RootRequest> ParseRoots(const nlohmann::json& request);

/// Requests and answers between sandboxd and its helpers travel as CBOR, not JSON text: the names
/// in them are bytes a job chose, and JSON text holds only UTF-8 (nlohmann refuses to write any
/// other string). CBOR's strings carry the bytes as they are.
std::string HelperMessageBytes(const nlohmann::json& message);
/// The message `bytes` hold; a discarded value when they are not one.
nlohmann::json ReadHelperMessage(const std::string& bytes);

/// The operations the owner-side helpers serve, named on their command line.
enum class HelperOp {
  kCompare,  ///< sandboxd-helper: which paths hold the same content live and in the upper
  kRenames,  ///< sandboxd-helper: confirm rename candidates by content
  kLanding,  ///< sandboxd-helper: make, fill, sync, remove landing areas
  kSteps,    ///< sandboxd-helper: carry out a journaled commit's steps
  kDigest,   ///< sandboxd-helper: digests of upper files a decision is bound to
  kDiff,     ///< sandboxd-text-helper: a git-style diff
  kHunks,    ///< sandboxd-text-helper: hunk counts
  kMerge,    ///< sandboxd-text-helper: a file merged from approved hunks
  kLeft,     ///< sandboxd-text-helper: the shape of the diff a partial commit would leave
  kStaged,   ///< sandboxd-text-helper: what live git indexes stage (staged_digest.h)
  kGit,      ///< sandboxd-text-helper: a repository's history as a sandbox left it (git_summary.h)
};
std::string_view ToString(HelperOp op);
std::optional<HelperOp> HelperOpFromString(std::string_view name);
/// The text operations run in sandboxd-text-helper (the one that loads libgit2), the others in
/// sandboxd-helper.
bool IsTextHelperOp(HelperOp op);

using HelperOperation = std::function<nlohmann::json(const nlohmann::json& request)>;

/// main() of a helper: `argv[1]` names one of `operations`, the request comes on stdin.
/// Returns the exit status.
int ServeHelperRequest(int argc, char** argv, const std::map<HelperOp, HelperOperation>& operations);

}  // namespace sandboxd
