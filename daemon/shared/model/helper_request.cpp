#include "model/helper_request.h"

#include <unistd.h>

#include <cerrno>
#include <iostream>

#include "base/errors.h"
#include "base/name_table.h"
#include "model/change_json.h"

namespace sandboxd {

std::vector<RootRequest> ParseRoots(const nlohmann::json& request) {
  std::vector<RootRequest> roots;
  for (const auto& root : request.at("roots")) {
    RootRequest r;
    r.live_fd = root.at("live_fd").get<int>();
    r.upper_fd = root.at("upper_fd").get<int>();
    r.prefix = root.at("prefix").get<std::string>();
    for (const auto& change : root.at("changes")) r.changes.push_back(ChangeFromJson(change));
    for (const auto& pair : root.value("renames", nlohmann::json::array()))
      r.renames.push_back({pair.at(0).get<std::string>(), pair.at(1).get<std::string>()});
    // {PATH: ["2", "2.1"], ...}: hunks and parts as selectors write them after the colon.
    for (const auto& [path, refs] : root.value("only_hunks", std::map<std::string, std::vector<std::string>>{}))
      for (const auto& ref : refs)
        if (auto parsed = api::ParseHunkSelector("-:" + ref)) r.only_hunks[path].insert(parsed->ref());
    r.binary = root.value("binary", false);
    roots.push_back(std::move(r));
  }
  return roots;
}

namespace {

/// All of standard input, read in blocks (std::cin, synced with stdio, takes a byte a call: a
/// page of a commit's steps is half a megabyte).
std::string ReadStandardInput() {
  std::string input;
  char block[65536];
  for (;;) {
    ssize_t got = read(STDIN_FILENO, block, sizeof block);
    if (got > 0) {
      input.append(block, static_cast<size_t>(got));
    } else if (got == 0) {
      return input;
    } else if (errno != EINTR) {
      ThrowErrno("cannot read the request");
    }
  }
}

void WriteHelperMessage(const nlohmann::json& message) {
  std::string bytes = HelperMessageBytes(message);
  std::cout.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::cout.flush();
}

}  // namespace

std::string HelperMessageBytes(const nlohmann::json& message) {
  std::vector<uint8_t> bytes = nlohmann::json::to_cbor(message);
  return std::string(bytes.begin(), bytes.end());
}

nlohmann::json ReadHelperMessage(const std::string& bytes) {
  return nlohmann::json::from_cbor(bytes.begin(), bytes.end(), true, false);
}

namespace {

constexpr std::pair<HelperOp, std::string_view> kOpNames[] = {
    {HelperOp::kCompare, "compare"}, {HelperOp::kRenames, "renames"}, {HelperOp::kLanding, "landing"},
    {HelperOp::kSteps, "steps"},     {HelperOp::kDiff, "diff"},       {HelperOp::kHunks, "hunks"},
    {HelperOp::kMerge, "merge"},     {HelperOp::kLeft, "left"},       {HelperOp::kDigest, "digest"},
    {HelperOp::kStaged, "staged"},   {HelperOp::kGit, "git"},
};

}  // namespace

std::string_view ToString(HelperOp op) { return NameOf(kOpNames, op, "unknown"); }

std::optional<HelperOp> HelperOpFromString(std::string_view name) { return ValueOf<HelperOp>(kOpNames, name); }

bool IsTextHelperOp(HelperOp op) {
  switch (op) {
    case HelperOp::kDiff:
    case HelperOp::kHunks:
    case HelperOp::kMerge:
    case HelperOp::kLeft:
    case HelperOp::kStaged:
    case HelperOp::kGit:
      return true;
    case HelperOp::kCompare:
    case HelperOp::kRenames:
    case HelperOp::kLanding:
    case HelperOp::kSteps:
    case HelperOp::kDigest:
      return false;
  }
  return false;
}

int ServeHelperRequest(int argc, char** argv, const std::map<HelperOp, HelperOperation>& operations) {
  std::optional<HelperOp> op = argc == 2 ? HelperOpFromString(argv[1]) : std::nullopt;
  if (!op || !operations.count(*op)) {
    std::string names;
    for (const auto& [name, operation] : operations) names += (names.empty() ? "" : "|") + std::string(ToString(name));
    std::cerr << "usage: " << (argc > 0 ? argv[0] : "helper") << " " << names
              << " < request.cbor (started by sandboxd only)\n";
    return 2;
  }
  try {
    WriteHelperMessage(operations.at(*op)(ReadHelperMessage(ReadStandardInput())));
    return 0;
  } catch (const Error& e) {
    WriteHelperMessage({{"error", {{"name", DBusErrorName(e.code())}, {"message", e.what()}}}});
  } catch (const std::exception& e) {
    WriteHelperMessage({{"error", {{"name", "org.freedesktop.DBus.Error.Failed"}, {"message", e.what()}}}});
  }
  return 1;
}

}  // namespace sandboxd
