#include "changes/change_listing.h"

#include <set>
#include <vector>

#include "changes/change_selection.h"
#include "utf8.h"

namespace sandboxd {
namespace {

std::vector<uint32_t> HunkList(const std::set<int>& hunks) { return std::vector<uint32_t>(hunks.begin(), hunks.end()); }

/// A string marshalled: its length (4, aligned to 4), its bytes and a NUL, at most 3 of padding.
size_t StringBound(size_t bytes) { return 4 + bytes + 1 + 3; }

/// `text` (valid UTF-8) as a JSON string, escaped as nlohmann's dump escapes it: the two-letter
/// escapes, other control bytes as \\u00xx, everything else as it is.
void AppendJsonString(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

size_t ValueBound(const nlohmann::json& value) {
  if (value.is_string()) return StringBound(value.get_ref<const std::string&>().size());
  if (value.is_array()) return 4 + 4 * value.size() + 4;  // au: length, elements, padding
  if (value.is_number()) return 16;                       // u, or t: up to 7 of padding and 8
  return 4;                                               // b
}

}  // namespace

void ForEachListedField(const ReviewedChange& item, const std::string& prefix, const std::string* conflict,
                        const std::function<void(std::string_view key, const ListedValue& value)>& field) {
  using Type = ListedValue::Type;
  auto text = [&](std::string_view key, std::string_view value) { field(key, {Type::kString, value, 0, nullptr}); };
  auto number = [&](std::string_view key, uint32_t value) { field(key, {Type::kNumber, {}, value, nullptr}); };
  auto size = [&](std::string_view key, uint64_t value) { field(key, {Type::kSize, {}, value, nullptr}); };
  auto has_size = [](EntryType type) { return type == EntryType::kFile || type == EntryType::kSymlink; };
  auto numbers = [&](std::string_view key, const std::vector<uint32_t>& value) { field(key, {Type::kNumbers, {}, 0, &value}); };
  const Change& change = item.change;
  const Approval& approval = item.approval;
  const bool by_hunk = !approval.hunks.empty();
  std::vector<uint32_t> approved, rejected, split;
  if (by_hunk) {
    approved = HunkList(approval.HunksWith(Verdict::kApproved));
    rejected = HunkList(approval.HunksWith(Verdict::kRejected));
    split = HunkList(approval.SplitHunks());
  }
  const bool is_new = change.new_type != EntryType::kNone;
  const bool is_old = change.old_type != EntryType::kNone;
  // Names travel as wire names: a job's name need not be UTF-8, a D-Bus string (or JSON) must be.
  // The keys below stay in the order of their bytes.
  if (by_hunk) numbers("approved_hunks", approved);
  if (conflict) {
    field("conflict", {Type::kTrue, {}, 0, nullptr});
    text("conflict_reason", api::EscapeInvalidUtf8(*conflict));
  }
  if (by_hunk) number("hunks", static_cast<uint32_t>(approval.hunk_count));
  text("kind", ToString(change.kind));
  if (is_new) {
    number("new_mode", static_cast<uint32_t>(change.new_mode));
    if (has_size(change.new_type)) size("new_size", item.new_size);
    text("new_type", ToString(change.new_type));
  }
  if (is_old) {
    number("old_mode", static_cast<uint32_t>(change.old_mode));
    if (has_size(change.old_type)) size("old_size", item.old_size);
    text("old_type", ToString(change.old_type));
  }
  text("path", api::WireName(DisplayPath(change, prefix)));
  if (by_hunk) numbers("rejected_hunks", rejected);
  if (!item.renamed_from.empty()) text("renamed_from", api::WireName(prefix + item.renamed_from));
  if (!item.renamed_to.empty()) text("renamed_to", api::WireName(prefix + item.renamed_to));
  text("review", ToString(approval.State()));
  number("root", static_cast<uint32_t>(item.root));
  if (!split.empty()) numbers("split_hunks", split);
  text("type", ToString(is_new ? change.new_type : change.old_type));
  if (UnreadableByOwner(change)) field("unreadable", {Type::kTrue, {}, 0, nullptr});
}

nlohmann::json ListedChange(const ReviewedChange& item, const std::string& prefix, const std::string* conflict) {
  nlohmann::json listed = nlohmann::json::object();
  ForEachListedField(item, prefix, conflict, [&](std::string_view key, const ListedValue& value) {
    auto& slot = listed[std::string(key)];
    switch (value.type) {
      case ListedValue::Type::kString: slot = std::string(value.text); break;
      case ListedValue::Type::kNumber: slot = static_cast<uint32_t>(value.number); break;
      case ListedValue::Type::kSize: slot = value.number; break;
      case ListedValue::Type::kTrue: slot = true; break;
      case ListedValue::Type::kNumbers: slot = *value.numbers; break;
    }
  });
  return listed;
}

void AppendListedLine(std::string& out, const ReviewedChange& item, const std::string& prefix, const std::string* conflict) {
  char first = '{';
  ForEachListedField(item, prefix, conflict, [&](std::string_view key, const ListedValue& value) {
    out += first;
    first = ',';
    AppendJsonString(out, key);
    out += ':';
    switch (value.type) {
      case ListedValue::Type::kString: AppendJsonString(out, value.text); break;
      case ListedValue::Type::kNumber:
      case ListedValue::Type::kSize: out += std::to_string(value.number); break;
      case ListedValue::Type::kTrue: out += "true"; break;
      case ListedValue::Type::kNumbers: {
        out += '[';
        for (size_t i = 0; i < value.numbers->size(); ++i) {
          if (i) out += ',';
          out += std::to_string((*value.numbers)[i]);
        }
        out += ']';
        break;
      }
    }
  });
  out += "}\n";
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
