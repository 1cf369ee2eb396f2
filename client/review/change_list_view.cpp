#include "change_list_view.h"

#include "accessible.h"
#include "utf8.h"
#include "review_text.h"

namespace sandboxd_review {
namespace {

const sandboxctl::ListedChange* ChangeOf(const Glib::RefPtr<Glib::ObjectBase>& object) {
  auto item = std::dynamic_pointer_cast<ChangeItem>(object);
  return item ? &item->value : nullptr;
}

std::string RowClass(const sandboxctl::ListedChange& change) {
  if (change.conflict) return "conflict";
  return "review-" + change.review;
}

}  // namespace

ChangeListView::ChangeListView() : Gtk::Box(Gtk::Orientation::VERTICAL, 6) {
  store_ = Gio::ListStore<ChangeItem>::create();
  // gtkmm 4.8 has no CustomFilter (4.12 has): GTK's own, wrapped.
  filter_ = Glib::wrap(GTK_FILTER(gtk_custom_filter_new(
      [](gpointer item, gpointer self) -> gboolean {
        return static_cast<ChangeListView*>(self)->Passes(Glib::wrap_auto(static_cast<GObject*>(item), false));
      },
      this, nullptr)));
  filtered_ = Gtk::FilterListModel::create(store_, filter_);
  // Not incremental: the selection is looked for by path right after a listing is put in
  // place, and a filter of 100,000 paths takes milliseconds.
  selection_ = Gtk::SingleSelection::create(filtered_);
  selection_->set_autoselect(false);
  selection_->set_can_unselect(true);
  selection_->signal_selection_changed().connect([this](guint, guint) { selected_.emit(); });

  view_.set_model(selection_);
  view_.set_factory(LabelRowFactory(
      [](const Glib::RefPtr<Glib::ObjectBase>& object) {
        const auto* change = ChangeOf(object);
        return change ? ChangeRowText(*change) : std::string();
      },
      [](const Glib::RefPtr<Glib::ObjectBase>& object) {
        const auto* change = ChangeOf(object);
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
  const size_t n = store_->get_n_items();
  std::string text = complete ? std::to_string(n) + (n == 1 ? " change" : " changes") : "Reading the changes: " + std::to_string(n) + " so far";
  if (complete && commit_count_ > 0) text += ", " + std::to_string(commit_count_) + " to commit";
  count_.set_text(text);
  SetAccessibleName(count_, text);
}

bool ChangeListView::Passes(const Glib::ObjectBase* item) const {
  if (filter_text_.empty()) return true;
  const auto* change = dynamic_cast<const ChangeItem*>(item);
  return change != nullptr && sandboxd::api::ShowWireName(change->value.path).find(filter_text_) != std::string::npos;
}

void ChangeListView::Clear() {
  store_->remove_all();
  paths_.clear();
  commit_count_ = 0;
}

void ChangeListView::Append(const std::vector<sandboxctl::ListedChange>& changes) {
  std::vector<Glib::RefPtr<ChangeItem>> items;
  items.reserve(changes.size());
  for (const auto& change : changes) {
    paths_.insert(change.path);
    commit_count_ += TakenByCommit(change);
    items.push_back(ChangeItem::Create(change));
  }
  // One splice, one items-changed: the view adds the rows once.
  store_->splice(store_->get_n_items(), 0, items);
}

void ChangeListView::Replace(std::vector<sandboxctl::ListedChange> changes) {
  std::optional<std::string> selected;
  if (auto change = Selected()) selected = change->path;
  std::vector<Glib::RefPtr<ChangeItem>> items;
  items.reserve(changes.size());
  paths_.clear();
  commit_count_ = 0;
  for (auto& change : changes) {
    paths_.insert(change.path);
    commit_count_ += TakenByCommit(change);
    items.push_back(ChangeItem::Create(std::move(change)));
  }
  store_->splice(0, store_->get_n_items(), items);
  if (selected) Select(*selected);
}

void ChangeListView::Seen(const std::string& path, const std::string& kind) {
  if (!paths_.insert(path).second) return;
  sandboxctl::ListedChange change;
  change.path = path;
  change.kind = kind;
  store_->append(ChangeItem::Create(std::move(change)));
}

void ChangeListView::Select(const std::string& path) {
  for (guint i = 0; i < filtered_->get_n_items(); ++i) {
    auto item = std::dynamic_pointer_cast<ChangeItem>(filtered_->get_object(i));
    if (item && item->value.path == path) {
      selection_->set_selected(i);
      return;
    }
  }
  selection_->set_selected(GTK_INVALID_LIST_POSITION);
}

std::optional<sandboxctl::ListedChange> ChangeListView::Selected() const {
  auto item = std::dynamic_pointer_cast<ChangeItem>(selection_->get_selected_item());
  if (!item) return std::nullopt;
  return item->value;
}

std::vector<sandboxctl::ListedChange> ChangeListView::All() const {
  std::vector<sandboxctl::ListedChange> changes;
  changes.reserve(store_->get_n_items());
  for (guint i = 0; i < store_->get_n_items(); ++i) changes.push_back(store_->get_item(i)->value);
  return changes;
}

}  // namespace sandboxd_review
