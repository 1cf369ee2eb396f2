#pragma once
/// The running jobs of the selected sandbox, each with its command line and a button that
/// cancels it.

#include <gtkmm.h>

#include <string>
#include <vector>

#include "daemon_client.h"

namespace sandboxd_review {

class JobList : public Gtk::Box {
 public:
  JobList();
  void SetJobs(const std::vector<JobSummary>& jobs);

  /// Cancel asked for the job at this object path.
  sigc::signal<void(std::string)>& signal_cancel() { return cancel_; }

 private:
  Gtk::Label heading_{"Running jobs"};
  Gtk::ListBox list_;
  std::vector<std::string> shown_;  ///< ids of the jobs shown, in order
  sigc::signal<void(std::string)> cancel_;
};

}  // namespace sandboxd_review
