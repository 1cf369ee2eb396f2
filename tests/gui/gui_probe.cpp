// A tiny GTK 4 app for the GUI test infrastructure's own smoke test (smoke_test.cpp): a button,
// an entry and a list view, each of which shows what was done to it in a label, so that the test
// can tell through AT-SPI alone that its click, its typing and its selection arrived.

#include <gtkmm.h>

namespace {

/// Sets the accessible name of `widget` (the LABEL property): what a screen reader reads.
void SetAccessibleLabel(Gtk::Widget& widget, const Glib::ustring& text) {
  Glib::Value<Glib::ustring> value;
  value.init(Glib::Value<Glib::ustring>::value_type());
  value.set(text);
  widget.update_property(Gtk::Accessible::Property::LABEL, value);
}

class ProbeWindow : public Gtk::Window {
 public:
  ProbeWindow() {
    set_title("Probe");
    set_default_size(480, 360);
    box_.set_margin(12);
    box_.append(button_);
    disabled_.set_sensitive(false);
    box_.append(disabled_);
    box_.append(pressed_);
    // An entry's name would be its GType's ("gtkmm__GtkEntry") without one.
    SetAccessibleLabel(entry_, "Type here");
    box_.append(entry_);
    box_.append(typed_);
    button_.signal_clicked().connect([this] { pressed_.set_text("pressed"); });
    entry_.signal_changed().connect([this] { typed_.set_text("typed: " + entry_.get_text()); });

    // No row selected at first, so that the test's selection is the only one.
    selection_->set_autoselect(false);
    selection_->set_can_unselect(true);
    selection_->set_selected(GTK_INVALID_LIST_POSITION);
    selection_->property_selected().signal_changed().connect([this] {
      auto row = std::dynamic_pointer_cast<Gtk::StringObject>(selection_->get_selected_item());
      selected_.set_text(row ? "selected: " + row->get_string() : "selected: none");
    });
    auto factory = Gtk::SignalListItemFactory::create();
    factory->signal_setup().connect([](const Glib::RefPtr<Gtk::ListItem>& item) { item->set_child(*Gtk::make_managed<Gtk::Label>()); });
    factory->signal_bind().connect([](const Glib::RefPtr<Gtk::ListItem>& item) {
      auto row = std::dynamic_pointer_cast<Gtk::StringObject>(item->get_item());
      auto* label = dynamic_cast<Gtk::Label*>(item->get_child());
      if (!row || label == nullptr) return;
      label->set_text(row->get_string());
      // GTK 4.8 names a row's `list item` nothing by default; its widget is the parent of our
      // child. Set on every bind: row widgets are recycled for other items.
      if (Gtk::Widget* row_widget = label->get_parent()) SetAccessibleLabel(*row_widget, row->get_string());
    });
    list_.set_model(selection_);
    list_.set_factory(factory);
    list_.set_vexpand(true);
    box_.append(selected_);
    box_.append(list_);
    set_child(box_);
  }

 private:
  Gtk::Box box_{Gtk::Orientation::VERTICAL, 6};
  Gtk::Button button_{"Press me"};
  Gtk::Button disabled_{"Not now"};
  Gtk::Label pressed_{"not pressed"};
  Gtk::Entry entry_;
  Gtk::Label typed_{"typed: "};
  Gtk::Label selected_{"selected: none"};
  Glib::RefPtr<Gtk::SingleSelection> selection_ =
      Gtk::SingleSelection::create(Gtk::StringList::create({"row one", "row two", "row three"}));
  Gtk::ListView list_;
};

}  // namespace

int main(int argc, char* argv[]) {
  // NON_UNIQUE: each probe is an app of its own, whatever else runs on the session bus.
  auto app = Gtk::Application::create("org.sandboxd.GuiProbe", Gio::Application::Flags::NON_UNIQUE);
  return app->make_window_and_run<ProbeWindow>(argc, argv);
}
