#pragma once
/// The changes of the selected sandbox: a filter entry and a list that stays smooth at a
/// hundred thousand rows (only the rows in view are widgets; the listing arrives in pieces).

#include <gtkmm.h>

#include <optional>
#include <unordered_set>
#include <string>
#include <vector>

#include "list_items.h"

namespace sandboxd_review {

class ChangeListView : public Gtk::Box {
 public:
  ChangeListView();

  /// Empties the list (another sandbox was selected).
  void Clear();
  /// Adds a piece of a first listing at the end.
  void Append(const std::vector<sandboxctl::ListedChange>& changes);
  /// Puts a whole new listing in place of the one shown, keeping the selected change selected.
  void Replace(std::vector<sandboxctl::ListedChange> changes);
  /// Says how many changes are listed: `complete` once the listing has all of them, else while
  /// it is being read.
  void ShowCount(bool complete);
  /// A change a running job made (ChangesSeen): a row for a path not listed yet, until the next
  /// listing tells all of it.
  void Seen(const std::string& path, const std::string& kind);

  std::optional<sandboxctl::ListedChange> Selected() const;
  /// Every change listed (not only those the filter shows).
  std::vector<sandboxctl::ListedChange> All() const;
  size_t size() const { return store_->get_n_items(); }
  /// How many changes listed a commit takes now (review_text.h, TakenByCommit).
  size_t commit_count() const { return commit_count_; }

  sigc::signal<void()>& signal_selected() { return selected_; }

 private:
  void Select(const std::string& path);
  bool Passes(const Glib::ObjectBase* item) const;

  Gtk::SearchEntry filter_entry_;
  Gtk::Label count_;
  Gtk::ScrolledWindow scroller_;
  Gtk::ListView view_;
  Glib::RefPtr<Gio::ListStore<ChangeItem>> store_;
  Glib::RefPtr<Gtk::Filter> filter_;
  Glib::RefPtr<Gtk::FilterListModel> filtered_;
  Glib::RefPtr<Gtk::SingleSelection> selection_;
  std::string filter_text_;
  size_t commit_count_ = 0;
  std::unordered_set<std::string> paths_;  ///< of every change listed, for Seen
  sigc::signal<void()> selected_;
};

}  // namespace sandboxd_review
