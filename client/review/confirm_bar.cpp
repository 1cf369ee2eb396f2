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
  box_.set_sensitive(true);
  set_reveal_child(true);
}

void ConfirmBar::Hide() {
  on_act_ = nullptr;
  box_.set_sensitive(false);
  set_reveal_child(false);
}

}  // namespace sandboxd_review
