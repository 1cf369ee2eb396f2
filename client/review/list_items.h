#pragma once
/// The items the app's list views show: a sandbox, a change, a job. Each is a GObject (list
/// models hold GObjects) around a plain value; rows are recycled widgets bound to them.

#include <glibmm/object.h>

#include <string>

#include "daemon_client.h"
#include "listed_change.h"

namespace sandboxd_review {

template <typename Value>
class ListItem final : public Glib::Object {
 public:
  static Glib::RefPtr<ListItem> Create(Value value) { return Glib::make_refptr_for_instance(new ListItem(std::move(value))); }
  Value value;

 private:
  explicit ListItem(Value v) : value(std::move(v)) {}
};

/// A sandbox as its row shows it.
struct SandboxRow {
  SandboxSummary summary;
  std::string review_message;  ///< set while a review asked for waits (GetInfo's review_requested)
  bool review_requested = false;
  uint32_t running_jobs = 0;
};

using SandboxItem = ListItem<SandboxRow>;
using ChangeItem = ListItem<sandboxctl::ListedChange>;
using JobItem = ListItem<JobSummary>;

}  // namespace sandboxd_review
