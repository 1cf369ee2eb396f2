#include "diff_pane.h"

#include <algorithm>

#include "accessible.h"
#include "diff_split.h"
#include "hunk_split.h"
#include "review_text.h"
#include "utf8.h"

namespace sandboxd_review {
namespace {

std::string LinesMarkup(std::string_view text) {
  std::string markup;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    if (!markup.empty()) markup += '\n';
    markup += DiffLineMarkup(line);
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return markup;
}

bool Holds(const std::vector<uint32_t>& numbers, int n) { return std::find(numbers.begin(), numbers.end(), static_cast<uint32_t>(n)) != numbers.end(); }

std::string HunkState(const sandboxctl::ListedChange& change, int n) {
  if (Holds(change.approved_hunks, n)) return "approved";
  if (Holds(change.rejected_hunks, n)) return "rejected";
  if (Holds(change.split_hunks, n)) return "decided in parts";
  if (change.review == "approved" || change.review == "rejected") return change.review + " with the file";
  return "pending";
}

std::string HunkTitle(const sandboxctl::ListedChange& change, int n) { return "Hunk " + std::to_string(n) + " (" + HunkState(change, n) + ")"; }

}  // namespace

DiffPane::DiffPane() : Gtk::Box(Gtk::Orientation::VERTICAL, 6) {
  title_.set_xalign(0);
  title_.set_wrap(true);
  title_.set_selectable(true);
  title_.add_css_class("heading");
  approve_file_.add_css_class("suggested-action");
  approve_file_.signal_clicked().connect([this] {
    if (change_) decide_.emit({sandboxd::api::Selector{change_->path, std::nullopt, 0}}, "approved");
  });
  reject_file_.signal_clicked().connect([this] {
    if (change_) decide_.emit({sandboxd::api::Selector{change_->path, std::nullopt, 0}}, "rejected");
  });
  note_.set_placeholder_text("Note with the decision, for whoever made the change (optional)");
  note_.set_hexpand(true);
  SetAccessibleName(note_, "Note");
  file_buttons_.append(approve_file_);
  file_buttons_.append(reject_file_);
  file_buttons_.append(note_);
  content_.set_margin(6);
  scroller_.set_child(content_);
  scroller_.set_vexpand(true);
  scroller_.set_hexpand(true);
  SetAccessibleName(content_, "Diff");
  append(title_);
  append(file_buttons_);
  append(scroller_);
  Clear();
}

void DiffPane::Clear() {
  change_.reset();
  title_.set_text("Select a change to see its diff.");
  ClearContent();
  Offer();
}

void DiffPane::ClearContent() {
  while (Gtk::Widget* child = content_.get_first_child()) content_.remove(*child);
  shown_diff_.clear();
  hunk_states_.clear();
  part_buttons_.clear();
}

void DiffPane::ShowHeader(const sandboxctl::ListedChange& change) {
  change_ = change;
  title_.set_text(ChangeRowText(change));
  ClearContent();
  Offer();
}

void DiffPane::SetActive(bool active) {
  active_ = active;
  Offer();
}

void DiffPane::Offer() {
  const bool decidable = change_.has_value() && active_;
  for (Gtk::Widget* widget : std::initializer_list<Gtk::Widget*>{&approve_file_, &reject_file_, &note_}) widget->set_sensitive(decidable);
  for (Gtk::Button* button : part_buttons_) button->set_sensitive(active_);
}

void DiffPane::ShowLoading(const sandboxctl::ListedChange& change) {
  ShowHeader(change);
  AddText("Reading the diff…", "dim-label");
}

void DiffPane::ShowUnavailable(const sandboxctl::ListedChange& change, const std::string& why) {
  ShowHeader(change);
  AddText(EscapeMarkup(why), "warning");
}

void DiffPane::AddText(const std::string& markup, const char* css_class) {
  auto* label = Gtk::make_managed<Gtk::Label>();
  label->set_markup(markup);
  label->set_xalign(0);
  label->set_selectable(true);
  if (css_class) label->add_css_class(css_class);
  content_.append(*label);
}

Gtk::Box& DiffPane::AddDecisionRow(const std::string& title, const std::string& approve, const std::string& reject,
                                   sandboxd::api::Selector selector, Gtk::Label** title_label) {
  auto* row = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::HORIZONTAL, 6);
  auto* label = Gtk::make_managed<Gtk::Label>(title);
  label->set_xalign(0);
  label->set_hexpand(true);
  auto* approve_button = Gtk::make_managed<Gtk::Button>(approve);
  auto* reject_button = Gtk::make_managed<Gtk::Button>(reject);
  approve_button->signal_clicked().connect([this, selector] { decide_.emit({selector}, "approved"); });
  reject_button->signal_clicked().connect([this, selector] { decide_.emit({selector}, "rejected"); });
  for (Gtk::Button* button : {approve_button, reject_button}) {
    button->set_sensitive(active_);
    part_buttons_.push_back(button);
  }
  if (title_label) *title_label = label;
  row->append(*label);
  row->append(*approve_button);
  row->append(*reject_button);
  return *row;
}

void DiffPane::AddHunk(const sandboxctl::ListedChange& change, int number, const std::string& hunk) {
  const std::string shown_path = sandboxd::api::ShowWireName(change.path);
  auto* box = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::VERTICAL, 4);
  box->add_css_class("card");
  // The tests and a screen reader find a hunk's buttons inside the group named for it.
  SetAccessibleName(*box, "Hunk " + std::to_string(number) + " of " + shown_path);
  Gtk::Label* state = nullptr;
  box->append(AddDecisionRow(HunkTitle(change, number), "Approve hunk", "Reject hunk", sandboxd::api::Selector{change.path, number, 0}, &state));
  hunk_states_.emplace_back(state, number);
  auto* text = Gtk::make_managed<Gtk::Label>();
  text->set_markup(LinesMarkup(hunk));
  text->set_xalign(0);
  text->set_selectable(true);
  text->add_css_class("monospace");
  box->append(*text);
  const std::vector<std::string> parts = sandboxd::api::SplitHunk(hunk);
  for (size_t p = 0; parts.size() > 1 && p < parts.size(); ++p) {
    const int part = static_cast<int>(p) + 1;
    auto* expander = Gtk::make_managed<Gtk::Expander>();
    auto& row = AddDecisionRow("Part " + std::to_string(part) + " of hunk " + std::to_string(number), "Approve part", "Reject part",
                               sandboxd::api::Selector{change.path, number, part});
    SetAccessibleName(row, "Part " + std::to_string(part) + " of hunk " + std::to_string(number) + " of " + shown_path);
    expander->set_label_widget(row);
    auto* part_text = Gtk::make_managed<Gtk::Label>();
    part_text->set_markup(LinesMarkup(parts[p]));
    part_text->set_xalign(0);
    part_text->add_css_class("monospace");
    expander->set_child(*part_text);
    box->append(*expander);
  }
  content_.append(*box);
}

void DiffPane::ShowDiff(const sandboxctl::ListedChange& change, const std::string& text, bool cut, const std::vector<std::string>& all_paths) {
  if (change_ && change_->path == change.path && !shown_diff_.empty() && shown_diff_ == text) {
    change_ = change;
    title_.set_text(ChangeRowText(change));
    for (auto& [label, number] : hunk_states_) label->set_text(HunkTitle(change, number));
    return;
  }
  ShowHeader(change);
  shown_diff_ = text.empty() ? std::string(1, '\0') : text;  // (an empty diff is shown too)
  const auto sections = sandboxctl::SectionsOfChange(sandboxctl::SplitDiff(text), change.path, all_paths);
  if (sections.empty()) AddText("No content differs (a change of type, mode or a directory).", "dim-label");
  for (size_t f = 0; f < sections.size(); ++f) {
    const auto& section = sections[f];
    AddText(LinesMarkup(std::string_view(section.header).substr(0, section.header.find_last_not_of('\n') + 1)), "monospace");
    if (IsBinarySection(section.header)) {
      AddText("<b>Binary content</b>: not shown as text.", "warning");
      continue;
    }
    // Hunks are decided one by one only in a file whose text was modified: the daemon numbers
    // them there (an added or deleted file is one whole).
    const bool hunks_decided = change.TextModification() && sections.size() == 1;
    for (size_t h = 0; h < section.hunks.size(); ++h) {
      // The last hunk of a diff cut short may be cut too: it gets no buttons, as approving it
      // would approve lines no one was shown.
      const bool whole = !cut || f + 1 < sections.size() || h + 1 < section.hunks.size();
      if (hunks_decided && whole) AddHunk(change, static_cast<int>(h) + 1, section.hunks[h]);
      else AddText(LinesMarkup(section.hunks[h]), "monospace");
    }
  }
  if (cut)
    AddText("<b>The diff goes on</b>: only its beginning is shown here, and its last hunk may be cut short (sandboxctl diff shows "
            "all of it). Approve file approves all of it.",
            "warning");
}

std::string DiffPane::Note() const { return note_.get_text(); }

void DiffPane::ClearNote() { note_.set_text(""); }

}  // namespace sandboxd_review
