#include "sandbox_list.h"

#include "accessible.h"
#include "quote_path.h"
#include "review_text.h"

namespace sandboxd_review {

SandboxList::SandboxList() : Gtk::Box(Gtk::Orientation::VERTICAL, 6) {
  heading_.set_xalign(0);
  heading_.add_css_class("heading");
  empty_.set_wrap(true);
  empty_.add_css_class("dim-label");
  list_.set_selection_mode(Gtk::SelectionMode::SINGLE);
  list_.signal_selected_rows_changed().connect([this] { selected_.emit(); });
  SetAccessibleName(list_, "Sandboxes");
  scroller_.set_child(list_);
  scroller_.set_vexpand(true);
  scroller_.set_policy(Gtk::PolicyType::NEVER, Gtk::PolicyType::AUTOMATIC);
  append(heading_);
  append(empty_);
  append(scroller_);
}

void SandboxList::SetSandboxes(const std::vector<SandboxSummary>& sandboxes) {
  std::map<std::string, const SandboxSummary*> now;
  for (const auto& sandbox : sandboxes) now[sandbox.path] = &sandbox;
  for (auto it = rows_.begin(); it != rows_.end();) {
    if (now.count(it->first)) {
      ++it;
      continue;
    }
    list_.remove(*it->second.widget);
    it = rows_.erase(it);
  }
  for (const auto& sandbox : sandboxes) {
    auto [it, added] = rows_.try_emplace(sandbox.path);
    Row& row = it->second;
    row.value.summary = sandbox;
    if (added) {
      row.widget = Gtk::make_managed<Gtk::ListBoxRow>();
      auto* box = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::VERTICAL, 2);
      box->set_margin(6);
      row.title = Gtk::make_managed<Gtk::Label>();
      row.detail = Gtk::make_managed<Gtk::Label>();
      row.badge = Gtk::make_managed<Gtk::Label>();
      for (Gtk::Label* label : {row.title, row.detail, row.badge}) {
        label->set_xalign(0);
        label->set_ellipsize(Pango::EllipsizeMode::END);
        box->append(*label);
      }
      row.title->add_css_class("heading");
      row.detail->add_css_class("dim-label");
      row.badge->add_css_class("review-asked");
      row.widget->set_child(*box);
      list_.append(*row.widget);
    }
    Show(row);
  }
  empty_.set_visible(rows_.empty());
}

void SandboxList::SetInfo(const std::string& path, uint32_t running_jobs, std::optional<std::string> review_message) {
  auto it = rows_.find(path);
  if (it == rows_.end()) return;
  it->second.value.running_jobs = running_jobs;
  it->second.value.review_requested = review_message.has_value();
  it->second.value.review_message = review_message.value_or("");
  Show(it->second);
}

void SandboxList::Show(Row& row) {
  const SandboxRow& value = row.value;
  const std::string title = SandboxTitle(value.summary.id, value.summary.name);
  std::string detail = value.summary.state;
  if (value.running_jobs > 0) detail += ", " + std::to_string(value.running_jobs) + (value.running_jobs == 1 ? " job running" : " jobs running");
  for (const auto& root : value.summary.roots) detail += "  " + sandboxd::api::QuotePath(root);
  // The message is the agent's words: control bytes shown, never obeyed.
  const std::string badge = value.review_requested ? "Review requested: " + sandboxd::api::EscapeControlBytes(value.review_message) : "";
  row.title->set_text(title);
  row.detail->set_text(detail);
  row.badge->set_text(badge);
  row.badge->set_visible(value.review_requested);
  SetAccessibleName(*row.widget, title + ", " + detail + (badge.empty() ? "" : ", " + badge));
}

std::optional<SandboxRow> SandboxList::Selected() const {
  const Gtk::ListBoxRow* selected = list_.get_selected_row();
  for (const auto& [path, row] : rows_)
    if (row.widget == selected) return row.value;
  return std::nullopt;
}

std::optional<SandboxRow> SandboxList::Find(const std::string& path) const {
  auto it = rows_.find(path);
  if (it == rows_.end()) return std::nullopt;
  return it->second.value;
}

std::vector<std::string> SandboxList::Paths() const {
  std::vector<std::string> paths;
  for (const auto& [path, row] : rows_) paths.push_back(path);
  return paths;
}

}  // namespace sandboxd_review
