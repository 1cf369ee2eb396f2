#include "diff_summary.h"

#include <algorithm>

namespace sandboxctl {
namespace {

/// The name in a "--- a/NAME" or "+++ b/NAME" line (as written: quoted names stay quoted, with
/// their a/ or b/ inside the quotes taken out); "" for /dev/null.
std::string SideName(std::string_view rest) {
  if (rest == "/dev/null") return "";
  if (rest.size() >= 2 && rest.front() == '"' && rest.size() > 3) return "\"" + std::string(rest.substr(3));
  return std::string(rest.size() >= 2 ? rest.substr(2) : rest);
}

/// The name in "diff --git a/NAME b/NAME" when both sides name the same (a mode change, a
/// directory's), which needs no ---/+++ lines; "" otherwise (those lines then name it).
std::string HeaderName(std::string_view rest) {
  if (rest.size() < 5 || rest.size() % 2 == 0) return "";
  size_t half = (rest.size() - 1) / 2;
  std::string_view a = rest.substr(0, half), b = rest.substr(half + 1);
  bool quoted = a.front() == '"';
  size_t skip = quoted ? 1 : 0;
  if (a.substr(skip, 2) != "a/" || b.substr(skip, 2) != "b/" || a.substr(skip + 2) != b.substr(skip + 2)) return "";
  return quoted ? "\"" + std::string(a.substr(3)) : std::string(a.substr(2));
}

std::string Plural(size_t count, const char* one, const char* many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

}  // namespace

void DiffSummary::Add(std::string_view data) {
  lines_.Add(data, [this](std::string_view line) { Line(line); });
}

const std::vector<DiffSummary::File>& DiffSummary::Files() {
  if (!lines_.partial().empty()) {
    Line(lines_.partial());
    lines_.clear();
  }
  return files_;
}

void DiffSummary::Line(std::string_view line) {
  if (line.starts_with("diff --git ")) {
    files_.push_back({HeaderName(line.substr(11))});
    new_names_.emplace_back();
    in_hunk_ = false;
    rename_from_.clear();
    return;
  }
  if (files_.empty()) return;
  File& file = files_.back();
  if (in_hunk_) {
    if (line.starts_with("+")) {
      ++file.insertions;
      return;
    }
    if (line.starts_with("-")) {
      ++file.deletions;
      return;
    }
    if (line.starts_with(" ") || line.starts_with("\\") || line.starts_with("@@")) return;
    in_hunk_ = false;
  }
  if (line.starts_with("@@")) {
    in_hunk_ = true;
  } else if (line.starts_with("rename from ")) {
    rename_from_ = std::string(line.substr(12));
  } else if (line.starts_with("rename to ")) {
    new_names_.back() = std::string(line.substr(10));
    file.name = rename_from_ + " => " + new_names_.back();
  } else if (line.starts_with("--- ")) {
    if (std::string name = SideName(line.substr(4)); !name.empty() && rename_from_.empty()) file.name = name;
  } else if (line.starts_with("+++ ")) {
    std::string name = SideName(line.substr(4));
    if (!name.empty() && rename_from_.empty()) file.name = new_names_.back() = name;
  } else if (line.starts_with("Binary files ")) {
    file.binary = true;
    // "Binary files a/X and b/Y differ": the side that is not /dev/null names it.
    std::string_view rest = line.substr(13);
    size_t and_at = rest.find(" and ");
    if (file.name.empty() && and_at != std::string_view::npos) {
      std::string before = SideName(rest.substr(0, and_at));
      std::string_view after = rest.substr(and_at + 5);
      if (after.size() > 7 && after.substr(after.size() - 7) == " differ") after.remove_suffix(7);
      std::string after_name = SideName(after);
      file.name = after_name.empty() ? before : after_name;
      if (rename_from_.empty()) new_names_.back() = file.name;
    }
  }
}

std::string DiffSummary::Stat(size_t width) {
  const auto& files = Files();
  if (files.empty()) return "";
  size_t name_width = 0, most = 0, insertions = 0, deletions = 0;
  for (const auto& file : files) {
    name_width = std::max(name_width, file.name.size());
    most = std::max(most, file.insertions + file.deletions);
    insertions += file.insertions;
    deletions += file.deletions;
  }
  size_t count_width = std::max<size_t>(std::to_string(most).size(), 3);
  // " NAME | COUNT BARS": what is left of the width is for the bars, at least 10.
  size_t bars = width > name_width + count_width + 5 + 10 ? width - name_width - count_width - 5 : 10;
  std::string out;
  for (const auto& file : files) {
    out += " " + file.name + std::string(name_width - file.name.size(), ' ') + " | ";
    if (file.binary) {
      out += "Bin\n";
      continue;
    }
    std::string count = std::to_string(file.insertions + file.deletions);
    out += std::string(count_width - count.size(), ' ') + count;
    size_t total = file.insertions + file.deletions;
    size_t plus = file.insertions, minus = file.deletions;
    if (most > bars && total > 0) {
      // Scaled as git scales them: every file that changed keeps at least one mark.
      plus = file.insertions * bars / most;
      minus = file.deletions * bars / most;
      if (file.insertions > 0 && plus == 0) plus = 1;
      if (file.deletions > 0 && minus == 0) minus = 1;
    }
    if (total > 0) out += " " + std::string(plus, '+') + std::string(minus, '-');
    out += "\n";
  }
  out += " " + Plural(files.size(), "file changed", "files changed");
  if (insertions > 0 || deletions == 0) out += ", " + Plural(insertions, "insertion(+)", "insertions(+)");
  if (deletions > 0 || insertions == 0) out += ", " + Plural(deletions, "deletion(-)", "deletions(-)");
  return out + "\n";
}

std::string DiffSummary::NameOnly() {
  Files();
  std::string out;
  for (size_t i = 0; i < files_.size(); ++i) out += (new_names_[i].empty() ? files_[i].name : new_names_[i]) + "\n";
  return out;
}

}  // namespace sandboxctl
