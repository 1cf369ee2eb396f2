#include "confirm_bar.h"

#include "accessible.h"

namespace sandboxd_review {

ConfirmBar::ConfirmBar() {
  question_.set_wrap(true);
  question_.set_hexpand(true);
  question_.set_xalign(0);
  act_.add_css_class("destructive-action");
  act_.signal_clicked().connect([this] {
    auto on_act = std::move(on_act_);
    Hide();
    if (on_act) on_act();
  });
  keep_.signal_clicked().connect([this] { Hide(); });
  box_.set_margin(6);
  box_.append(question_);
  box_.append(act_);
  box_.append(keep_);
  set_child(box_);
  // Shown at once, not slid in: its buttons take clicks from its first frame.
  set_transition_type(Gtk::RevealerTransitionType::NONE);
  Hide();
}

void ConfirmBar::Ask(const std::string& question, const std::string& act_label, const std::string& keep_label,
                     std::function<void()> on_act) {
  question_.set_text(question);
  SetAccessibleName(question_, question);
  act_.set_label(act_label);
  keep_.set_label(keep_label);
  on_act_ = std::move(on_act);
  Offer(true);
}

void ConfirmBar::Hide() {
  on_act_ = nullptr;
  Offer(false);
}

void ConfirmBar::Offer(bool shown) {
  // Each button itself, and the box out of the accessibility tree: GTK 4.8 tells a screen
  // reader (and the tests) that a button in an insensitive box is sensitive, and a click on it
  // there is dropped. A hidden bar's buttons must not be there to press.
  act_.set_sensitive(shown);
  keep_.set_sensitive(shown);
  box_.set_visible(shown);
  set_reveal_child(shown);
}

}  // namespace sandboxd_review
