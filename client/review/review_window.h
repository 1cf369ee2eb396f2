#pragma once
/// The app's one window: the user's sandboxes on the left, the selected sandbox's changes in
/// the middle, the selected change's diff on the right, and what acts on the whole sandbox
/// (Commit, Undo, Discard) at the bottom, with the daemon's answer to the last act. It holds
/// nothing the daemon does not say: every act is a call, and what is shown after it is read
/// again from the daemon.

#include <gtkmm.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "accessible.h"
#include "change_list_view.h"
#include "confirm_bar.h"
#include "daemon_client.h"
#include "diff_pane.h"
#include "job_list.h"
#include "sandbox_list.h"

namespace sandboxd_review {

class ReviewWindow : public Gtk::ApplicationWindow {
 public:
  explicit ReviewWindow(bool user_mode);

 private:
  // What the daemon said happened.
  void RefreshSandboxes();
  void RefreshInfo(const std::string& path);
  void OnChangeSetChanged(const std::string& path);
  void OnChangesSeen(const std::string& path, const std::vector<std::pair<std::string, std::string>>& seen, bool lost);
  void OnProgress(const std::string& path, const std::string& operation, const std::string& phase, uint64_t done, uint64_t total);

  // The selected sandbox and change.
  void OnSandboxSelected();
  void StartListing(bool first);
  void ScheduleListing();
  void RefreshJobs();
  void OnChangeSelected();
  /// The selected change's diff, read (again) from the daemon.
  void ReadDiff();

  // Acts.
  /// One act on the selected sandbox, one at a time: `call` makes it and hands the daemon's
  /// answer on; a refusal is said in the daemon's words, then `answered` has the outcome.
  void Act(const std::function<void(const std::string& sandbox, std::function<void(const Outcome&)> answer)>& call,
           std::function<void(const Outcome&)> answered);
  void Decide(const std::vector<sandboxd::api::Selector>& selectors, const std::string& verdict);
  /// Commit; `force`: over the conflicts the daemon named (after the person confirmed it).
  void Commit(bool force = false);
  void Undo();
  void Discard();
  void Acting(bool busy);
  void UpdateActions();

  /// The daemon's answer to the last act: its sentence for a refusal, or what was done.
  void Say(const std::string& text, bool refusal);
  void Notify(const SandboxRow& sandbox);

  std::unique_ptr<DaemonClient> client_;
  std::string sandbox_;  ///< object path of the selected sandbox; "" for none

  Gtk::Box root_{Gtk::Orientation::VERTICAL, 0};
  Gtk::Paned outer_{Gtk::Orientation::HORIZONTAL};
  Gtk::Paned inner_{Gtk::Orientation::HORIZONTAL};
  Gtk::Box left_{Gtk::Orientation::VERTICAL, 12};
  SandboxList sandboxes_;
  JobList jobs_;
  ChangeListView changes_;
  DiffPane diff_;
  Gtk::Box bottom_{Gtk::Orientation::HORIZONTAL, 6};
  Gtk::Label message_;
  Gtk::ProgressBar progress_;
  Gtk::Button undo_{"Undo"};
  Gtk::Button discard_{"Discard"};
  NamedButton commit_{"Commit"};
  ConfirmBar confirm_;

  std::unique_ptr<PendingRead> listing_;
  uint64_t listings_ = 0;  ///< listings started, the last one being listing_
  std::vector<ChangeListView::Listed> listed_;  ///< the listing being read
  bool first_listing_ = false;
  bool list_again_ = false;       ///< the change set changed while it was being read
  sigc::connection list_later_;   ///< a listing asked for, coalescing signals
  std::unique_ptr<PendingRead> diff_read_;
  sigc::connection jobs_poll_;
  bool acting_ = false;
  bool lost_ = false;  ///< the bus went away: nothing can be asked of the daemon any more
  std::set<std::string> notified_;  ///< sandboxes whose waiting review request was notified
};

}  // namespace sandboxd_review
