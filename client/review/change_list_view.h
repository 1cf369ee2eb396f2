#pragma once
/// The changes of the selected sandbox: a filter entry and a list that stays smooth at a
/// hundred thousand rows. Only the rows in view are widgets, and a change not in view is kept
/// as the line ListChanges wrote for it (a string list, GTK's most compact model), read again
/// when a row shows it: a hundred thousand changes cost their lines, not a hundred thousand
/// objects of fields.

#include <gtkmm.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "listed_change.h"

namespace sandboxd_review {

class ChangeListView : public Gtk::Box {
 public:
  ChangeListView();

  /// A change as ListChanges wrote it: its fields, and its line.
  struct Listed {
    sandboxctl::ListedChange change;
    std::string line;
  };

  /// Empties the list (another sandbox was selected).
  void Clear();
  /// Adds a piece of a first listing at the end.
  void Append(const std::vector<Listed>& changes);
  /// Puts a whole new listing in place of the one shown, keeping the selected change selected;
  /// true when the selected row was put in place anew (signal_selected was emitted for it).
  bool Replace(const std::vector<Listed>& changes);
  /// A change a running job made (ChangesSeen): a row for a path not listed yet, until the next
  /// listing tells all of it.
  void Seen(const std::string& path, const std::string& kind);
  /// Says how many changes are listed: `complete` once the listing has all of them, else while
  /// it is being read.
  void ShowCount(bool complete);

  std::optional<sandboxctl::ListedChange> Selected() const;
  /// The paths of every change listed (not only those the filter shows).
  std::vector<std::string> AllPaths() const;
  size_t size() const { return lines_->get_n_items(); }
  /// How many changes listed a commit takes now (review_text.h, TakenByCommit).
  size_t commit_count() const { return commit_count_; }

  sigc::signal<void()>& signal_selected() { return selected_; }

 private:
  void Splice(guint position, guint removed, std::span<const Listed> changes);
  void Select(const std::string& path);
  bool Passes(const char* line) const;

  Gtk::SearchEntry filter_entry_;
  Gtk::Label count_;
  Gtk::ScrolledWindow scroller_;
  Gtk::ListView view_;
  Glib::RefPtr<Gtk::StringList> lines_;
  Glib::RefPtr<Gtk::Filter> filter_;
  Glib::RefPtr<Gtk::FilterListModel> filtered_;
  Glib::RefPtr<Gtk::SingleSelection> selection_;
  std::string filter_text_;
  size_t commit_count_ = 0;
  /// The paths listed, made only once a running job's changes are seen (Seen), so that a big
  /// listing is not held twice.
  std::optional<std::unordered_set<std::string>> paths_;
  sigc::signal<void()> selected_;
};

}  // namespace sandboxd_review
