#pragma once
/// Accessible names are part of the app's contract (DESIGN, "Desktop review app"): screen
/// readers read them and the tests find widgets by them.

#include <gtkmm.h>

#include <functional>
#include <string>

namespace sandboxd_review {

/// Sets `widget`'s accessible name (its LABEL property) to `name`.
void SetAccessibleName(Gtk::Widget& widget, const std::string& name);

/// A button whose accessible name is exactly `name` whatever it shows: `shown` (a label child
/// of its own, which set_label would not leave the name alone for), e.g. "Commit (3)".
class NamedButton : public Gtk::Button {
 public:
  explicit NamedButton(const std::string& name);
  void Show(const std::string& shown);

 private:
  Gtk::Label label_;
};

/// A list row factory: each row a label showing `text` of its item, the row's accessible name
/// being the same text (a row of a GTK 4.8 list has no name of its own).
Glib::RefPtr<Gtk::SignalListItemFactory> LabelRowFactory(std::function<std::string(const Glib::RefPtr<Glib::ObjectBase>&)> text,
                                                          std::function<std::string(const Glib::RefPtr<Glib::ObjectBase>&)> css_class = {});

}  // namespace sandboxd_review
