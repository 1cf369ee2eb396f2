#include "listed_change.h"

#include <nlohmann/json.hpp>

#include "units.h"
#include "utf8.h"

namespace sandboxctl {
namespace {

/// nlohmann's SAX events for one flat object, each value put where its key says: no object is
/// built (that took most of `changes`'s time at a million lines).
class FieldReader : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit FieldReader(ListedChange& out) : out_(out) {}

  bool null() override { return true; }
  bool boolean(bool value) override {
    if (depth_ == 1 && key_ == "conflict") out_.conflict = value;
    if (depth_ == 1 && key_ == "unreadable") out_.unreadable = value;
    return true;
  }
  bool number_integer(number_integer_t value) override { return value < 0 || Number(static_cast<uint64_t>(value)); }
  bool number_unsigned(number_unsigned_t value) override { return Number(value); }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t& value) override {
    if (depth_ != 1) return true;
    if (std::string* field = TextField()) *field = std::move(value);
    return true;
  }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    if (depth_ == 0 && seen_top_) return false;  // a second value on the line
    seen_top_ = true;
    ++depth_;
    return true;
  }
  bool key(string_t& value) override {
    if (depth_ == 1) key_ = std::move(value);
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) return false;  // the line is no object
    ++depth_;
    if (depth_ == 2)
      array_ = key_ == "approved_hunks"   ? &out_.approved_hunks
               : key_ == "rejected_hunks" ? &out_.rejected_hunks
               : key_ == "split_hunks"    ? &out_.split_hunks
                                          : nullptr;
    return true;
  }
  bool end_array() override {
    if (--depth_ == 1) array_ = nullptr;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

  bool IsObject() const { return seen_top_ && depth_ == 0; }

 private:
  bool Number(uint64_t value) {
    if (depth_ == 1 && key_ == "old_size") out_.old_size = value;
    else if (depth_ == 1 && key_ == "new_size") out_.new_size = value;
    if (value > UINT32_MAX) return true;  // no other field of ours is that large
    auto number = static_cast<uint32_t>(value);
    if (depth_ == 2 && array_) {
      array_->push_back(number);
    } else if (depth_ == 1) {
      if (key_ == "root") out_.root = number;
      else if (key_ == "old_mode") out_.old_mode = number;
      else if (key_ == "new_mode") out_.new_mode = number;
      else if (key_ == "hunks") out_.hunks = number;
    }
    return true;
  }

  std::string* TextField() {
    if (key_ == "path") return &out_.path;
    if (key_ == "kind") return &out_.kind;
    if (key_ == "type") return &out_.type;
    if (key_ == "old_type") return &out_.old_type;
    if (key_ == "new_type") return &out_.new_type;
    if (key_ == "review") return &out_.review;
    if (key_ == "renamed_from") return &out_.renamed_from;
    if (key_ == "renamed_to") return &out_.renamed_to;
    if (key_ == "conflict_reason") return &out_.conflict_reason;
    return nullptr;
  }

  ListedChange& out_;
  std::string key_;
  int depth_ = 0;
  bool seen_top_ = false;
  std::vector<uint32_t>* array_ = nullptr;
};

}  // namespace

std::optional<ListedChange> ParseListedChange(std::string_view line) {
  ListedChange change;
  FieldReader reader(change);
  if (!nlohmann::json::sax_parse(line, &reader) || !reader.IsObject()) return std::nullopt;
  return change;
}

char ChangeLetter(std::string_view kind) {
  if (kind == "added") return 'A';
  if (kind == "modified") return 'M';
  if (kind == "deleted") return 'D';
  if (kind == "type-changed") return 'T';
  if (kind == "mode-changed") return 'P';
  return '?';
}

namespace {

std::string HunkNumbers(const std::vector<uint32_t>& hunks) {
  std::string text;
  for (uint32_t hunk : hunks) text += (text.empty() ? "" : ",") + std::to_string(hunk);
  return text;
}

}  // namespace

/// "" for a pending change, " [approved]", " [rejected]", or for a change decided hunk by hunk
/// " [partial: hunks 2 approved, 1 rejected, of 3]" (", hunks 3 decided in parts" for hunks
/// split by PATH:N.M).
std::string ReviewNote(const ListedChange& change) {
  const std::string& state = change.review;
  if (state == "pending") return "";
  if (state != "partial") return " [" + state + "]";
  std::string note = " [partial:";
  if (!change.approved_hunks.empty()) note += " hunks " + HunkNumbers(change.approved_hunks) + " approved";
  if (!change.rejected_hunks.empty())
    note += std::string(note.back() == ':' ? "" : ",") + " hunks " + HunkNumbers(change.rejected_hunks) + " rejected";
  if (!change.split_hunks.empty())
    note += std::string(note.back() == ':' ? "" : ",") + " hunks " + HunkNumbers(change.split_hunks) + " decided in parts";
  if (change.hunks) note += ", of " + std::to_string(*change.hunks);
  return note + "]";
}

std::string RenameNote(const ListedChange& change) {
  if (!change.renamed_from.empty()) return " (renamed from " + sandboxd::api::ShowWireName(change.renamed_from) + ")";
  if (!change.renamed_to.empty()) return " (renamed to " + sandboxd::api::ShowWireName(change.renamed_to) + ")";
  return "";
}

std::string SizeNote(const ListedChange& change) {
  if (change.old_size && change.new_size && *change.old_size != *change.new_size)
    return "  " + sandboxd::units::HumanBytes(*change.old_size) + " -> " + sandboxd::units::HumanBytes(*change.new_size);
  if (change.new_size) return "  " + sandboxd::units::HumanBytes(*change.new_size);
  if (change.old_size) return "  " + sandboxd::units::HumanBytes(*change.old_size);
  return "";
}

std::string ConflictNote(const ListedChange& change) {
  return change.conflict || !change.conflict_reason.empty() ? " [conflict: " + change.conflict_reason + "]" : "";
}

}  // namespace sandboxctl
