#include "review_text.h"

#include "utf8.h"
#include "visible_bytes.h"

namespace sandboxd_review {
namespace {

// Marks around a byte shown visibly: bytes no visible form contains (VisibleBytes writes
// every control byte of the content as ^X), so they can only be ours.
constexpr std::string_view kMarkOn = "\x01";
constexpr std::string_view kMarkOff = "\x02";

}  // namespace

std::string ChangeRowText(const sandboxctl::ListedChange& change) {
  std::string text(1, sandboxctl::ChangeLetter(change.kind));
  text += ' ';
  text += sandboxd::api::ShowWireName(change.path);
  text += sandboxctl::RenameNote(change);
  text += sandboxctl::SizeNote(change);
  text += sandboxctl::ReviewNote(change);
  if (change.unreadable) text += " [unreadable: not shown, approved only by name]";
  text += sandboxctl::ConflictNote(change);
  return text;
}

std::string SandboxTitle(const std::string& id, const std::string& name) { return name.empty() ? id : name + " (" + id + ")"; }

std::string EscapeMarkup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string DiffLineMarkup(std::string_view line) {
  const std::string visible = sandboxctl::VisibleBytes(line, {kMarkOn, kMarkOff});
  std::string body;
  for (char c : visible) {
    if (c == kMarkOn[0]) body += "<span background=\"#c01c28\" foreground=\"#ffffff\">";
    else if (c == kMarkOff[0]) body += "</span>";
    else body += EscapeMarkup(std::string_view(&c, 1));
  }
  const char* colour = line.starts_with("+") ? "#26a269" : line.starts_with("-") ? "#c01c28" : line.starts_with("@@") ? "#1c71d8" : nullptr;
  return colour ? std::string("<span foreground=\"") + colour + "\">" + body + "</span>" : body;
}

bool TakenByCommit(const sandboxctl::ListedChange& change) {
  // A change decided hunk by hunk lands with its approved hunks (and parts): with none, nothing.
  return change.review == "approved" || (change.review == "partial" && (!change.approved_hunks.empty() || !change.split_hunks.empty()));
}

bool IsBinarySection(std::string_view header) {
  return header.find("\nBinary files ") != std::string_view::npos || header.find("\nGIT binary patch") != std::string_view::npos;
}

}  // namespace sandboxd_review
