#include "job_list.h"

#include "accessible.h"
#include "quote_path.h"

namespace sandboxd_review {

JobList::JobList() : Gtk::Box(Gtk::Orientation::VERTICAL, 4) {
  heading_.set_xalign(0);
  heading_.add_css_class("heading");
  list_.set_selection_mode(Gtk::SelectionMode::NONE);
  SetAccessibleName(list_, "Running jobs");
  append(heading_);
  append(list_);
  set_visible(false);
}

void JobList::SetJobs(const std::vector<JobSummary>& jobs) {
  std::vector<std::string> running;
  for (const auto& job : jobs)
    if (job.state == "running") running.push_back(job.id);
  // Looked at every two seconds: rows are made again only when the jobs differ, so that a
  // button is not taken away under the pointer.
  if (running == shown_) return;
  shown_ = running;
  while (Gtk::Widget* child = list_.get_first_child()) list_.remove(*child);
  for (const auto& job : jobs) {
    if (job.state != "running") continue;
    // The command line is the user's (or their agent's): control bytes shown, never obeyed.
    std::string command;
    for (const auto& arg : job.argv) command += (command.empty() ? "" : " ") + sandboxd::api::EscapeControlBytes(arg);
    auto* row = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::HORIZONTAL, 6);
    auto* label = Gtk::make_managed<Gtk::Label>(command);
    label->set_xalign(0);
    label->set_hexpand(true);
    label->set_ellipsize(Pango::EllipsizeMode::END);
    auto* cancel = Gtk::make_managed<Gtk::Button>("Cancel job");
    cancel->signal_clicked().connect([this, path = job.path] { cancel_.emit(path); });
    row->append(*label);
    row->append(*cancel);
    list_.append(*row);
    if (Gtk::Widget* list_row = row->get_parent()) SetAccessibleName(*list_row, "Job " + job.id + ": " + command);
  }
  set_visible(!shown_.empty());
}

}  // namespace sandboxd_review
