#include "change_list_view.h"

#include <nlohmann/json.hpp>

#include <cstring>

#include "accessible.h"
#include "review_text.h"
#include "utf8.h"

namespace sandboxd_review {
namespace {

const char* LineOf(gpointer item) { return GTK_IS_STRING_OBJECT(item) ? gtk_string_object_get_string(GTK_STRING_OBJECT(item)) : nullptr; }

std::optional<sandboxctl::ListedChange> ChangeOfItem(const Glib::RefPtr<Glib::ObjectBase>& object) {
  auto* item = object ? dynamic_cast<Glib::Object*>(object.get()) : nullptr;
  const char* line = item ? LineOf(item->gobj()) : nullptr;
  if (line == nullptr) return std::nullopt;
  return sandboxctl::ParseListedChange(line);
}

std::string RowClass(const sandboxctl::ListedChange& change) {
  if (change.conflict) return "conflict";
  return "review-" + change.review;
}

}  // namespace

ChangeListView::ChangeListView() : Gtk::Box(Gtk::Orientation::VERTICAL, 6) {
  lines_ = Gtk::StringList::create({});
  // gtkmm 4.8 has no CustomFilter (4.12 has): GTK's own, wrapped.
  filter_ = Glib::wrap(GTK_FILTER(gtk_custom_filter_new(
      [](gpointer item, gpointer self) -> gboolean { return static_cast<ChangeListView*>(self)->Passes(LineOf(item)); }, this, nullptr)));
  filtered_ = Gtk::FilterListModel::create(lines_, filter_);
  // Not incremental: the selection is looked for by path right after a listing is put in
  // place.
  selection_ = Gtk::SingleSelection::create(filtered_);
  selection_->set_autoselect(false);
  selection_->set_can_unselect(true);
  selection_->signal_selection_changed().connect([this](guint, guint) { selected_.emit(); });

  view_.set_model(selection_);
  view_.set_factory(LabelRowFactory(
      [](const Glib::RefPtr<Glib::ObjectBase>& object) {
        auto change = ChangeOfItem(object);
        return change ? ChangeRowText(*change) : std::string();
      },
      [](const Glib::RefPtr<Glib::ObjectBase>& object) {
        auto change = ChangeOfItem(object);
        return change ? RowClass(*change) : std::string();
      }));
  SetAccessibleName(view_, "Changes");
  scroller_.set_child(view_);
  scroller_.set_vexpand(true);
  scroller_.set_policy(Gtk::PolicyType::NEVER, Gtk::PolicyType::AUTOMATIC);

  // (A GTK 4 search entry is no GtkEntry: its placeholder is a property of its own.)
  filter_entry_.set_property("placeholder-text", Glib::ustring("Filter changes by path"));
  SetAccessibleName(filter_entry_, "Filter changes");
  filter_entry_.signal_search_changed().connect([this] {
    filter_text_ = filter_entry_.get_text();
    gtk_filter_changed(filter_->gobj(), GTK_FILTER_CHANGE_DIFFERENT);
  });
  count_.set_xalign(0);
  count_.add_css_class("dim-label");
  append(filter_entry_);
  append(scroller_);
  append(count_);
  ShowCount(true);
}

void ChangeListView::ShowCount(bool complete) {
  const size_t n = size();
  std::string text = complete ? std::to_string(n) + (n == 1 ? " change" : " changes") : "Reading the changes: " + std::to_string(n) + " so far";
  if (complete && commit_count_ > 0) text += ", " + std::to_string(commit_count_) + " to commit";
  count_.set_text(text);
  SetAccessibleName(count_, text);
}

bool ChangeListView::Passes(const char* line) const {
  if (filter_text_.empty()) return true;
  if (line == nullptr) return false;
  auto change = sandboxctl::ParseListedChange(line);
  return change && sandboxd::api::ShowWireName(change->path).find(filter_text_) != std::string::npos;
}

void ChangeListView::Splice(guint position, guint removed, std::span<const Listed> changes) {
  std::vector<const char*> lines;
  lines.reserve(changes.size() + 1);
  for (const auto& listed : changes) {
    lines.push_back(listed.line.c_str());
    if (paths_) paths_->insert(listed.change.path);
  }
  lines.push_back(nullptr);
  // One splice, one items-changed: the view adds the rows once.
  gtk_string_list_splice(lines_->gobj(), position, removed, lines.data());
}

void ChangeListView::Clear() {
  commit_count_ = 0;
  paths_.reset();
  Splice(0, lines_->get_n_items(), {});
}

void ChangeListView::Append(const std::vector<Listed>& changes) {
  for (const auto& listed : changes) commit_count_ += TakenByCommit(listed.change);
  Splice(lines_->get_n_items(), 0, changes);
}

bool ChangeListView::Replace(const std::vector<Listed>& changes) {
  std::optional<std::string> selected;
  if (auto change = Selected()) selected = change->path;
  commit_count_ = 0;
  for (const auto& listed : changes) commit_count_ += TakenByCommit(listed.change);
  paths_.reset();
  // Only the rows whose line differs are put in place (after a decision, one): the others keep
  // their widgets, so that a row a person or a screen reader is on stays the same row.
  const size_t old_size = lines_->get_n_items();
  auto same = [&](size_t old_index, size_t new_index) {
    return std::strcmp(gtk_string_list_get_string(lines_->gobj(), static_cast<guint>(old_index)), changes[new_index].line.c_str()) == 0;
  };
  size_t head = 0;
  while (head < old_size && head < changes.size() && same(head, head)) ++head;
  size_t tail = 0;
  while (tail < old_size - head && tail < changes.size() - head && same(old_size - 1 - tail, changes.size() - 1 - tail)) ++tail;
  if (head == old_size && head == changes.size()) return false;
  Splice(static_cast<guint>(head), static_cast<guint>(old_size - head - tail),
         std::span<const Listed>(changes).subspan(head, changes.size() - head - tail));
  if (!selected || Selected()) return false;
  Select(*selected);
  return true;
}

void ChangeListView::Seen(const std::string& path, const std::string& kind) {
  if (!paths_) {
    paths_.emplace();
    for (guint i = 0; i < lines_->get_n_items(); ++i)
      if (auto change = sandboxctl::ParseListedChange(lines_->get_string(i).raw())) paths_->insert(change->path);
  }
  if (!paths_->insert(path).second) return;
  // Told as ListChanges would tell it; its decision is pending, as a change a job just made is.
  nlohmann::json line = {{"root", 0}, {"path", path}, {"kind", kind}, {"review", "pending"}};
  sandboxctl::ListedChange change;
  change.path = path;
  change.kind = kind;
  const std::vector<Listed> seen = {Listed{change, line.dump()}};
  Splice(lines_->get_n_items(), 0, seen);
}

void ChangeListView::Select(const std::string& path) {
  for (guint i = 0; i < filtered_->get_n_items(); ++i) {
    auto change = ChangeOfItem(filtered_->get_object(i));
    if (change && change->path == path) {
      selection_->set_selected(i);
      return;
    }
  }
  selection_->set_selected(GTK_INVALID_LIST_POSITION);
}

std::optional<sandboxctl::ListedChange> ChangeListView::Selected() const { return ChangeOfItem(selection_->get_selected_item()); }

std::vector<std::string> ChangeListView::AllPaths() const {
  std::vector<std::string> paths;
  paths.reserve(lines_->get_n_items());
  for (guint i = 0; i < lines_->get_n_items(); ++i)
    if (auto change = sandboxctl::ParseListedChange(lines_->get_string(i).raw())) paths.push_back(change->path);
  return paths;
}

}  // namespace sandboxd_review
