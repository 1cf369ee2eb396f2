#pragma once
/// The user's sandboxes, one row each: name or id, state, roots, running jobs, and a badge
/// while an agent's request for review waits. A person has tens of sandboxes, not thousands:
/// each row is a widget of its own, updated in place, so the selection never moves under them.

#include <gtkmm.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon_client.h"

namespace sandboxd_review {

/// A sandbox as its row shows it.
struct SandboxRow {
  SandboxSummary summary;
  std::string review_message;  ///< set while a review asked for waits (GetInfo's review_requested)
  bool review_requested = false;
  uint32_t running_jobs = 0;
};

class SandboxList : public Gtk::Box {
 public:
  SandboxList();

  /// The sandboxes now (ListSandboxes): rows of sandboxes gone are removed, new ones added.
  void SetSandboxes(const std::vector<SandboxSummary>& sandboxes);
  /// What GetInfo told of the sandbox at `path`: its running jobs and a waiting review request.
  void SetInfo(const std::string& path, uint32_t running_jobs, std::optional<std::string> review_message);

  /// The selected sandbox's row, if any.
  std::optional<SandboxRow> Selected() const;
  std::optional<SandboxRow> Find(const std::string& path) const;
  std::vector<std::string> Paths() const;

  sigc::signal<void()>& signal_selected() { return selected_; }

 private:
  struct Row {
    Gtk::ListBoxRow* widget = nullptr;
    Gtk::Label* title = nullptr;
    Gtk::Label* detail = nullptr;
    Gtk::Label* badge = nullptr;
    SandboxRow value;
  };
  void Show(Row& row);

  Gtk::Label heading_{"Sandboxes"};
  Gtk::Label empty_{"No sandboxes yet: make one with sandboxctl create or sandboxctl try."};
  Gtk::ScrolledWindow scroller_;
  Gtk::ListBox list_;
  std::map<std::string, Row> rows_;  ///< by object path
  sigc::signal<void()> selected_;
};

}  // namespace sandboxd_review
