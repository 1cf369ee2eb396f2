// Hostile input: the git-style diff that `diff --stat` and `--name-only` read from the daemon.
// Its file names and every line of content are bytes a job chose. Beyond not crashing: one entry
// per "diff --git" line; the pieces the diff arrives in change nothing (fed whole, or cut at
// any point); and the totals line adds the files' own counts up.

#include <string>
#include <string_view>

#include "check.h"
#include "diff_summary.h"

namespace sandboxd::fuzz {
namespace {

size_t FileLines(std::string_view diff) {
  size_t count = 0;
  for (size_t start = 0; start < diff.size();) {
    count += diff.substr(start).starts_with("diff --git ");
    size_t newline = diff.find('\n', start);
    if (newline == std::string_view::npos) break;
    start = newline + 1;
  }
  return count;
}

void Check(std::string_view diff) {
  sandboxctl::DiffSummary whole;
  whole.Add(diff);
  size_t insertions = 0, deletions = 0;
  for (const auto& file : whole.Files()) {
    insertions += file.insertions;
    deletions += file.deletions;
  }
  Require(whole.Files().size() == FileLines(diff), "one entry per diff --git line");
  std::string stat = whole.Stat(), names = whole.NameOnly();
  if (!whole.Files().empty()) {
    std::string totals = std::to_string(insertions) + " insertion";
    Require(stat.find(totals) != std::string::npos || insertions == 0, "the totals add the insertions up");
    Require(stat.find(std::to_string(deletions) + " deletion") != std::string::npos || deletions == 0,
            "the totals add the deletions up");
  }
  // The same diff in two pieces, cut where its length says.
  size_t cut = diff.empty() ? 0 : diff.size() * 7 / 13;
  sandboxctl::DiffSummary pieces;
  pieces.Add(diff.substr(0, cut));
  pieces.Add(diff.substr(cut));
  Require(pieces.Stat() == stat && pieces.NameOnly() == names, "the pieces the diff arrives in change nothing");
}

}  // namespace
}  // namespace sandboxd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sandboxd::fuzz::Check(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
