#include "review_window.h"

#include <sdbus-c++/sdbus-c++.h>

#include "api.h"
#include "quote_path.h"
#include "review_text.h"
#include "utf8.h"

namespace sandboxd_review {
namespace {

// How much of a diff the pane shows: past this, a label's layout takes seconds.
constexpr size_t kDiffShownBytes = 2 * 1024 * 1024;
// A first listing shows its rows in pieces of this many, as they arrive.
constexpr size_t kListingPiece = 500;

const char* kStyle = R"css(
.review-approved { color: #26a269; }
.review-rejected { opacity: 0.55; }
.review-partial { color: #c64600; }
.conflict { color: #c01c28; font-weight: bold; }
.review-asked { color: #1c71d8; font-weight: bold; }
.refusal { color: #c01c28; }
.card { border: 1px solid alpha(currentColor, 0.15); border-radius: 6px; padding: 6px; }
)css";

std::optional<std::string> StringOf(const std::map<std::string, sdbus::Variant>& info, const char* key) {
  auto it = info.find(key);
  if (it == info.end()) return std::nullopt;
  try {
    return it->second.get<std::string>();
  } catch (const sdbus::Error&) {
    return std::nullopt;
  }
}

uint32_t UintOf(const std::map<std::string, sdbus::Variant>& info, const char* key) {
  auto it = info.find(key);
  if (it == info.end()) return 0;
  try {
    return it->second.get<uint32_t>();
  } catch (const sdbus::Error&) {
    return 0;
  }
}

}  // namespace

ReviewWindow::ReviewWindow(bool user_mode) {
  set_title("Sandboxd Review");
  set_default_size(1200, 760);
  auto css = Gtk::CssProvider::create();
  css->load_from_data(kStyle);
  Gtk::StyleContext::add_provider_for_display(Gdk::Display::get_default(), css, GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);

  left_.set_margin(6);
  left_.set_size_request(300, -1);
  left_.append(sandboxes_);
  left_.append(jobs_);
  changes_.set_margin(6);
  changes_.set_size_request(360, -1);
  diff_.set_margin(6);
  inner_.set_start_child(changes_);
  inner_.set_end_child(diff_);
  inner_.set_resize_start_child(false);
  outer_.set_start_child(left_);
  outer_.set_end_child(inner_);
  outer_.set_resize_start_child(false);
  outer_.set_vexpand(true);


  message_.set_xalign(0);
  message_.set_hexpand(true);
  message_.set_wrap(true);
  message_.set_selectable(true);
  SetAccessibleName(message_, "No message");
  progress_.set_visible(false);
  progress_.set_valign(Gtk::Align::CENTER);
  SetAccessibleName(progress_, "Commit progress");
  commit_.add_css_class("suggested-action");
  discard_.add_css_class("destructive-action");
  bottom_.set_margin(6);
  bottom_.append(message_);
  bottom_.append(progress_);
  bottom_.append(undo_);
  bottom_.append(discard_);
  bottom_.append(commit_);

  root_.append(outer_);
  root_.append(confirm_);
  root_.append(bottom_);
  set_child(root_);

  sandboxes_.signal_selected().connect(sigc::mem_fun(*this, &ReviewWindow::OnSandboxSelected));
  changes_.signal_selected().connect(sigc::mem_fun(*this, &ReviewWindow::OnChangeSelected));
  diff_.signal_decide().connect(sigc::mem_fun(*this, &ReviewWindow::Decide));
  jobs_.signal_cancel().connect([this](const std::string& job) {
    client_->CancelJob(job, [this](const Outcome& outcome) {
      if (outcome) Say(outcome->message, true);
      RefreshJobs();
    });
  });
  commit_.signal_clicked().connect([this] { Commit(); });
  undo_.signal_clicked().connect(sigc::mem_fun(*this, &ReviewWindow::Undo));
  discard_.signal_clicked().connect([this] {
    if (auto sandbox = sandboxes_.Selected())
      confirm_.Ask("Discard every change of " + SandboxTitle(sandbox->summary.id, sandbox->summary.name) +
                       "? They are thrown away, and Undo cannot bring them back.",
                   "Discard all changes", "Keep them", [this] { Discard(); });
  });

  DaemonEvents events;
  events.sandboxes_changed = [this] { RefreshSandboxes(); };
  events.bus_lost = [this](const std::string& why) {
    Say("The connection to the bus was lost (" + sandboxd::api::EscapeControlBytes(why) + "): start the app again.", true);
    lost_ = true;
    root_.set_sensitive(false);
    UpdateActions();
    // Nothing of them can be known or cancelled any more: not shown as if it could.
    jobs_poll_.disconnect();
    jobs_.SetJobs({});
  };
  events.change_set_changed = [this](const std::string& path) { OnChangeSetChanged(path); };
  events.changes_seen = [this](const std::string& path, const auto& seen, bool lost) { OnChangesSeen(path, seen, lost); };
  events.review_requested = [this](const std::string& path) { RefreshInfo(path); };
  events.progress = [this](const std::string& path, const std::string& operation, const std::string& phase, uint64_t done, uint64_t total) {
    OnProgress(path, operation, phase, done, total);
  };
  try {
    client_ = std::make_unique<DaemonClient>(user_mode, std::move(events));
  } catch (const sdbus::Error& e) {
    Say(sandboxd::api::EscapeControlBytes(e.getMessage()), true);
    sandboxes_.set_sensitive(false);
  }
  UpdateActions();
  if (client_) RefreshSandboxes();
}

void ReviewWindow::Say(const std::string& text, bool refusal) {
  message_.set_text(text);
  // An empty label would be named by its type for a screen reader.
  SetAccessibleName(message_, text.empty() ? "No message" : text);
  if (refusal) message_.add_css_class("refusal");
  else message_.remove_css_class("refusal");
}

void ReviewWindow::RefreshSandboxes() {
  client_->ListSandboxes([this](std::vector<SandboxSummary> sandboxes, const Outcome& outcome) {
    if (outcome) {
      Say(outcome->message, true);
      return;
    }
    sandboxes_.SetSandboxes(sandboxes);
    for (const auto& sandbox : sandboxes) RefreshInfo(sandbox.path);
    if (!sandbox_.empty() && !sandboxes_.Find(sandbox_)) OnSandboxSelected();
    UpdateActions();
  });
}

void ReviewWindow::RefreshInfo(const std::string& path) {
  client_->GetInfo(path, [this, path](std::map<std::string, sdbus::Variant> info, const Outcome& outcome) {
    if (outcome) return;  // gone meanwhile: the next listing of sandboxes says so
    // The request is read from the daemon, not taken from the signal: anyone on the bus can
    // send a signal that looks like sandboxd's.
    std::optional<std::string> review = StringOf(info, "review_requested");
    sandboxes_.SetInfo(path, UintOf(info, "running_jobs"), review);
    if (review && !notified_.count(path)) {
      notified_.insert(path);
      if (auto sandbox = sandboxes_.Find(path)) Notify(*sandbox);
    } else if (!review && notified_.erase(path)) {
      if (auto app = get_application()) app->withdraw_notification("review-" + path);
    }
  });
}

void ReviewWindow::Notify(const SandboxRow& sandbox) {
  auto app = get_application();
  if (!app) return;
  auto notification = Gio::Notification::create("Review requested: " + SandboxTitle(sandbox.summary.id, sandbox.summary.name));
  notification->set_body(sandboxd::api::EscapeControlBytes(sandbox.review_message));
  app->send_notification("review-" + sandbox.summary.path, notification);
}

void ReviewWindow::OnSandboxSelected() {
  auto sandbox = sandboxes_.Selected();
  std::string path = sandbox ? sandbox->summary.path : "";
  if (path == sandbox_ && !path.empty()) return;
  sandbox_ = path;
  jobs_poll_.disconnect();
  ++listings_;
  listing_.reset();
  diff_read_.reset();
  list_later_.disconnect();
  changes_.Clear();
  changes_.ShowCount(path.empty());
  diff_.Clear();
  jobs_.SetJobs({});
  confirm_.Hide();
  Say("", false);
  UpdateActions();
  if (sandbox_.empty()) return;
  StartListing(true);
  RefreshJobs();
  // A job's start is announced by no signal (its end is, by ChangeSetChanged): the selected
  // sandbox's jobs are looked at again every two seconds.
  jobs_poll_.disconnect();
  jobs_poll_ = Glib::signal_timeout().connect_seconds(
      [this] {
        RefreshJobs();
        return true;
      },
      2);
}

void ReviewWindow::StartListing(bool first) {
  if (sandbox_.empty()) return;
  list_again_ = false;
  first_listing_ = first;
  listed_.clear();
  const std::string sandbox = sandbox_;
  // Which listing an answer is of: the sandbox selected may be another by then, or the same one
  // selected again, with a listing of its own under way.
  const uint64_t listing = ++listings_;
  listing_ = client_->ListChanges(
      sandbox,
      [this](sandboxctl::ListedChange change, std::string_view line) {
        listed_.push_back(ChangeListView::Listed{std::move(change), std::string(line)});
        // A first listing shows its rows as they come: the first within a moment even of
        // 100,000; a later one is put in place whole, so rows do not vanish and come back.
        if (first_listing_ && listed_.size() >= kListingPiece) {
          changes_.Append(listed_);
          changes_.ShowCount(false);
          listed_.clear();
        }
      },
      [this, listing](const Outcome& outcome) {
        if (listing != listings_) return;
        if (outcome) {
          Say(outcome->message, true);
        } else if (first_listing_) {
          changes_.Append(listed_);
        } else if (!changes_.Replace(listed_)) {
          // The change shown may differ where its line does not (a job rewrote it, size kept):
          // its diff is read again, and shown anew where it differs.
          ReadDiff();
        }
        listed_.clear();
        changes_.ShowCount(true);
        // The reader is let go from the main loop, not from inside its own callback.
        Glib::signal_idle().connect_once([this, listing] {
          if (listing != listings_) return;
          listing_.reset();
          if (list_again_) StartListing(false);
        });
        UpdateActions();
      });
}

void ReviewWindow::ScheduleListing() {
  if (listing_) {
    list_again_ = true;
    return;
  }
  if (list_later_.connected()) return;
  // Signals come in bursts (a decision, then the change set it changed): one listing for all.
  list_later_ = Glib::signal_timeout().connect(
      [this] {
        StartListing(false);
        return false;
      },
      150);
}

void ReviewWindow::OnChangeSetChanged(const std::string& path) {
  RefreshInfo(path);
  if (path != sandbox_) return;
  ScheduleListing();
  RefreshJobs();
}

void ReviewWindow::OnChangesSeen(const std::string& path, const std::vector<std::pair<std::string, std::string>>& seen, bool lost) {
  if (path != sandbox_) return;
  for (const auto& [name, kind] : seen)
    if (kind != "unchanged") changes_.Seen(name, kind);
  if (!listing_) changes_.ShowCount(true);
  if (lost) ScheduleListing();
  UpdateActions();
}

void ReviewWindow::OnProgress(const std::string& path, const std::string& operation, const std::string& phase, uint64_t done,
                              uint64_t total) {
  if (path != sandbox_ || (operation != "commit" && operation != "undo")) return;
  const bool over = phase == "done" || phase == "failed";
  progress_.set_visible(!over);
  if (over) return;
  // Planning and staging count entries without a total: the bar moves without saying how far.
  if (total > 0) progress_.set_fraction(static_cast<double>(done) / static_cast<double>(total));
  else progress_.pulse();
  progress_.set_show_text(true);
  progress_.set_text(operation + ": " + phase + " " + std::to_string(done) + (total ? " of " + std::to_string(total) : ""));
}

void ReviewWindow::RefreshJobs() {
  if (sandbox_.empty()) return;
  const std::string sandbox = sandbox_;
  client_->ListJobs(sandbox, [this, sandbox](std::vector<JobSummary> jobs, const Outcome& outcome) {
    if (sandbox != sandbox_ || outcome) return;
    jobs_.SetJobs(jobs);
  });
}

void ReviewWindow::OnChangeSelected() { ReadDiff(); }

void ReviewWindow::ReadDiff() {
  diff_read_.reset();
  auto change = changes_.Selected();
  if (!change) {
    diff_.Clear();
    return;
  }
  if (change->unreadable) {
    diff_.ShowUnavailable(*change, "Its owner cannot read this file, so its content cannot be shown: only approving it by name commits it.");
    return;
  }
  // The same change again (listed anew after a decision): what is shown stays until the diff
  // read again says what differs.
  if (diff_.ShownPath() != change->path) diff_.ShowLoading(*change);
  // A directory's diff holds the changes beneath it, which are rows of their own.
  std::vector<std::string> paths;
  if (change->type == "directory") paths = changes_.AllPaths();
  const std::string sandbox = sandbox_;
  diff_read_ = client_->Diff(sandbox, sandboxd::api::Selector{change->path, std::nullopt, 0}, kDiffShownBytes,
                             [this, sandbox, change = *change, paths](std::string text, bool cut, const Outcome& outcome) {
                               if (sandbox != sandbox_) return;
                               if (outcome) diff_.ShowUnavailable(change, outcome->message);
                               else diff_.ShowDiff(change, text, cut, paths);
                             });
}

void ReviewWindow::Act(const std::function<void(const std::string& sandbox, std::function<void(const Outcome&)> answer)>& call,
                       std::function<void(const Outcome&)> answered) {
  if (sandbox_.empty() || acting_) return;
  Acting(true);
  const std::string sandbox = sandbox_;
  call(sandbox, [this, sandbox, answered = std::move(answered)](const Outcome& outcome) {
    Acting(false);
    progress_.set_visible(false);
    if (sandbox != sandbox_) return;
    if (outcome) Say(outcome->message, true);
    answered(outcome);
    // What the act changed is read again from the daemon (ChangeSetChanged says so too).
    ScheduleListing();
  });
}

void ReviewWindow::Decide(const std::vector<sandboxd::api::Selector>& selectors, const std::string& verdict) {
  const std::string note = diff_.Note();
  // Said as messages name it, PATH, PATH:N or PATH:N.M, the path as git prints names.
  sandboxd::api::Selector shown = selectors.front();
  shown.path = sandboxd::api::ShowWireName(shown.path);
  Act([&](const std::string& sandbox, auto answer) { client_->Decide(sandbox, selectors, verdict, note, std::move(answer)); },
      [this, said = std::string(verdict == "approved" ? "Approved " : "Rejected ") + ToString(shown) + "."](const Outcome& outcome) {
        if (outcome) return;
        diff_.ClearNote();
        Say(said, false);
      });
}

void ReviewWindow::Commit(bool force) {
  auto committed = std::make_shared<uint32_t>(0);
  if (!sandbox_.empty() && !acting_) Say("Committing…", false);
  Act(
      [&](const std::string& sandbox, auto answer) {
        client_->Commit(sandbox, force, [committed, answer = std::move(answer)](uint32_t count, const Outcome& outcome) {
          *committed = count;
          answer(outcome);
        });
      },
      [this, committed](const Outcome& outcome) {
        if (!outcome) {
          Say("Committed " + std::to_string(*committed) + (*committed == 1 ? " change." : " changes."), false);
        } else if (outcome->name == std::string(sandboxd::api::kErrorPrefix) + "Conflict") {
          // The daemon named the live files that changed where the sandbox did too: the person
          // may take the sandbox's over them, knowingly (sandboxctl commit --force).
          confirm_.Ask("Commit anyway, writing the sandbox's changes over the live files the refusal below names? Undo can take it back.",
                       "Commit anyway", "Leave the live files", [this] { Commit(true); });
        }
      });
}

void ReviewWindow::Undo() {
  Act([&](const std::string& sandbox, auto answer) { client_->Undo(sandbox, std::move(answer)); },
      [this](const Outcome& outcome) {
        if (!outcome) Say("The last commit was undone: its changes are back in the sandbox.", false);
      });
}

void ReviewWindow::Discard() {
  Act([&](const std::string& sandbox, auto answer) { client_->Discard(sandbox, std::move(answer)); },
      [this](const Outcome& outcome) {
        if (!outcome) Say("Every change was discarded.", false);
      });
}

void ReviewWindow::Acting(bool busy) {
  acting_ = busy;
  UpdateActions();
}

void ReviewWindow::UpdateActions() {
  const bool selected = !sandbox_.empty();
  const size_t count = selected ? changes_.commit_count() : 0;
  commit_.Show(count ? "Commit (" + std::to_string(count) + ")" : "Commit");
  // Each button told itself, not through root_ (DiffPane::SetActive says why).
  const bool free = !acting_ && !lost_;
  commit_.set_sensitive(selected && free && count > 0);
  undo_.set_sensitive(selected && free);
  discard_.set_sensitive(selected && free && changes_.size() > 0);
  diff_.SetActive(!acting_ && !lost_);
}

}  // namespace sandboxd_review
