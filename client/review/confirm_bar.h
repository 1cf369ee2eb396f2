#pragma once
/// A question asked before an act that cannot be taken back as it was (Discard; Commit over
/// a conflict): a bar across the window with the question, the act's button and a button that
/// leaves things as they are. Hidden, its buttons are insensitive (a screen reader may still
/// see them in the tree).

#include <gtkmm.h>

#include <functional>
#include <string>

namespace sandboxd_review {

class ConfirmBar : public Gtk::Revealer {
 public:
  ConfirmBar();
  /// Shows `question`; `act` (labelled `act_label`) runs `on_act` and hides the bar,
  /// `keep_label` only hides it.
  void Ask(const std::string& question, const std::string& act_label, const std::string& keep_label, std::function<void()> on_act);
  void Hide();

 private:
  /// Shows the bar and lets its buttons be pressed, or hides it and takes them away.
  void Offer(bool shown);
  Gtk::Box box_{Gtk::Orientation::HORIZONTAL, 6};
  Gtk::Label question_;
  Gtk::Button act_;
  Gtk::Button keep_;
  std::function<void()> on_act_;
};

}  // namespace sandboxd_review
