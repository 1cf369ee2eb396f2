#pragma once
/// The selected change: what it is, its diff hunk by hunk (and part by part, as git add -p's
/// split cuts a hunk), and the buttons that decide it, the whole file or one hunk or part. A
/// decision is a structured selector (path, hunk, part), never a name parsed back.

#include <gtkmm.h>

#include <optional>
#include <string>
#include <vector>

#include "listed_change.h"
#include "selector.h"

namespace sandboxd_review {

class DiffPane : public Gtk::Box {
 public:
  DiffPane();

  /// Nothing selected.
  void Clear();
  /// `change`, while its diff is read.
  void ShowLoading(const sandboxctl::ListedChange& change);
  /// The path of the change shown ("" for none).
  std::string ShownPath() const { return change_ ? change_->path : ""; }
  /// `change` and its diff `text` (cut short when `cut`); `all_paths` are every change's, to
  /// tell a directory's own sections from those of the changes beneath it. The same diff shown
  /// again (after a decision) keeps its widgets and updates what the decisions changed, so that
  /// a button is not taken away under the pointer.
  void ShowDiff(const sandboxctl::ListedChange& change, const std::string& text, bool cut, const std::vector<std::string>& all_paths);
  /// `change` whose diff could not be read, with why.
  void ShowUnavailable(const sandboxctl::ListedChange& change, const std::string& why);

  /// The note the person wrote for the decision ("" for none), and clearing it once used.
  std::string Note() const;
  void ClearNote();

  /// Whether its decisions may be asked for now (not while another act is under way). Each
  /// button is told itself: GTK 4.8 tells assistive technologies that a button in an
  /// insensitive box is sensitive, and drops a click on it.
  void SetActive(bool active);

  /// A decision asked for: (selectors, "approved" or "rejected").
  sigc::signal<void(std::vector<sandboxd::api::Selector>, std::string)>& signal_decide() { return decide_; }

 private:
  void ShowHeader(const sandboxctl::ListedChange& change);
  /// Gives each decision widget its sensitivity: a change shown, and the pane active.
  void Offer();
  void ClearContent();
  void AddText(const std::string& markup, const char* css_class);
  void AddHunk(const sandboxctl::ListedChange& change, int number, const std::string& hunk);
  /// A row: `title` (a label, returned through `title_label`), and the two buttons.
  Gtk::Box& AddDecisionRow(const std::string& title, const std::string& approve, const std::string& reject, sandboxd::api::Selector selector,
                           Gtk::Label** title_label = nullptr);

  Gtk::Label title_;
  Gtk::Box file_buttons_{Gtk::Orientation::HORIZONTAL, 6};
  Gtk::Button approve_file_{"Approve file"};
  Gtk::Button reject_file_{"Reject file"};
  Gtk::Entry note_;
  Gtk::ScrolledWindow scroller_;
  Gtk::Box content_{Gtk::Orientation::VERTICAL, 8};
  std::optional<sandboxctl::ListedChange> change_;
  std::string shown_diff_;  ///< the diff text the content shows ("" while none)
  std::vector<std::pair<Gtk::Label*, int>> hunk_states_;  ///< each hunk's state label and number
  std::vector<Gtk::Button*> part_buttons_;                ///< the hunks' and parts' buttons (content_'s)
  bool active_ = true;
  sigc::signal<void(std::vector<sandboxd::api::Selector>, std::string)> decide_;
};

}  // namespace sandboxd_review
