#include "accessible.h"

namespace sandboxd_review {

void SetAccessibleName(Gtk::Widget& widget, const std::string& name) {
  Glib::Value<Glib::ustring> value;
  value.init(Glib::Value<Glib::ustring>::value_type());
  value.set(name);
  widget.update_property(Gtk::Accessible::Property::LABEL, value);
}

NamedButton::NamedButton(const std::string& name) : label_(name) {
  set_child(label_);
  SetAccessibleName(*this, name);
}

void NamedButton::Show(const std::string& shown) { label_.set_text(shown); }

Glib::RefPtr<Gtk::SignalListItemFactory> LabelRowFactory(std::function<std::string(const Glib::RefPtr<Glib::ObjectBase>&)> text,
                                                          std::function<std::string(const Glib::RefPtr<Glib::ObjectBase>&)> css_class) {
  auto factory = Gtk::SignalListItemFactory::create();
  factory->signal_setup().connect([](const Glib::RefPtr<Gtk::ListItem>& row) {
    auto* label = Gtk::make_managed<Gtk::Label>();
    label->set_xalign(0);
    label->set_ellipsize(Pango::EllipsizeMode::END);
    row->set_child(*label);
  });
  factory->signal_bind().connect([text, css_class](const Glib::RefPtr<Gtk::ListItem>& row) {
    auto* label = dynamic_cast<Gtk::Label*>(row->get_child());
    if (label == nullptr) return;
    const std::string shown = text(row->get_item());
    label->set_text(shown);
    label->set_tooltip_text(shown);
    // Rows are recycled: the class and name are set again for each item bound.
    for (const char* name : {"review-pending", "review-approved", "review-rejected", "review-partial", "conflict", "review-asked"})
      label->remove_css_class(name);
    if (css_class) {
      const std::string cls = css_class(row->get_item());
      if (!cls.empty()) label->add_css_class(cls);
    }
    // The row widget (the label's parent) is what AT-SPI shows as the list item.
    if (Gtk::Widget* row_widget = label->get_parent()) SetAccessibleName(*row_widget, shown);
  });
  return factory;
}

}  // namespace sandboxd_review
