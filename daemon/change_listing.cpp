#include "change_listing.h"

#include <set>
#include <vector>

#include "change_selection.h"
#include "utf8.h"

namespace sandboxd {
namespace {

std::vector<uint32_t> HunkList(const std::set<int>& hunks) { return std::vector<uint32_t>(hunks.begin(), hunks.end()); }

/// A string marshalled: its length (4, aligned to 4), its bytes and a NUL, at most 3 of padding.
size_t StringBound(size_t bytes) { return 4 + bytes + 1 + 3; }

size_t ValueBound(const nlohmann::json& value) {
  if (value.is_string()) return StringBound(value.get_ref<const std::string&>().size());
  if (value.is_array()) return 4 + 4 * value.size() + 4;  // au: length, elements, padding
  return 4;                                               // u, b
}

}  // namespace

nlohmann::json ListedChange(const ReviewedChange& item, const std::string& prefix, const std::string* conflict) {
  const Change& change = item.change;
  const Approval& approval = item.approval;
  // Names travel as wire names: a job's name need not be UTF-8, a D-Bus string (or JSON) must be.
  nlohmann::json listed = {{"root", static_cast<uint32_t>(item.root)},
                           {"path", api::WireName(DisplayPath(change, prefix))},
                           {"kind", std::string(ToString(change.kind))}};
  if (!item.renamed_from.empty()) listed["renamed_from"] = api::WireName(prefix + item.renamed_from);
  if (!item.renamed_to.empty()) listed["renamed_to"] = api::WireName(prefix + item.renamed_to);
  EntryType shown = change.new_type != EntryType::kNone ? change.new_type : change.old_type;
  listed["type"] = std::string(ToString(shown));
  if (change.old_type != EntryType::kNone) {
    listed["old_type"] = std::string(ToString(change.old_type));
    listed["old_mode"] = static_cast<uint32_t>(change.old_mode);
  }
  if (change.new_type != EntryType::kNone) {
    listed["new_type"] = std::string(ToString(change.new_type));
    listed["new_mode"] = static_cast<uint32_t>(change.new_mode);
  }
  listed["review"] = std::string(ToString(approval.State()));
  if (!approval.hunks.empty()) {
    listed["hunks"] = static_cast<uint32_t>(approval.hunk_count);
    listed["approved_hunks"] = HunkList(approval.HunksWith(Verdict::kApproved));
    listed["rejected_hunks"] = HunkList(approval.HunksWith(Verdict::kRejected));
  }
  if (conflict) {
    listed["conflict"] = true;
    listed["conflict_reason"] = api::EscapeInvalidUtf8(*conflict);
  }
  return listed;
}

size_t MarshalledBound(const nlohmann::json& listed) {
  // The struct (aligned to 8), root (u), path and kind (s), the array's length and padding.
  size_t bytes = 8 + 4 + 4 + 8;
  for (const auto& [key, value] : listed.items()) {
    if (key == "root") continue;
    if (key == "path" || key == "kind") {
      bytes += ValueBound(value);
      continue;
    }
    // A dict entry (aligned to 8), its key, the variant's signature (at most "au": 4 bytes)
    // and value.
    bytes += 8 + StringBound(key.size()) + 4 + ValueBound(value);
  }
  return bytes;
}

}  // namespace sandboxd
