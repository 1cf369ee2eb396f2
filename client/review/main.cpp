// sandboxd-review: the desktop app where a person reviews what a sandbox changed, decides it
// file by file, hunk by hunk or part by part, and commits, undoes or discards (DESIGN,
// "Desktop review app"). It runs as the user and speaks only D-Bus, to the system's sandboxd
// (or with --user to the user's own, on the session bus).

#include <gtkmm.h>

#include <cstring>
#include <iostream>
#include <string>

#include "config.h"
#include "review_window.h"

namespace {

constexpr const char* kUsage =
    "Usage: sandboxd-review [--user]\n"
    "Review, approve and commit what sandboxes changed.\n"
    "  --user     the user's own sandboxd on the session bus (sandboxd --user)\n"
    "  --version  print the version\n";

}  // namespace

int main(int argc, char** argv) {
  bool user_mode = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--user") == 0) {
      user_mode = true;
    } else if (std::strcmp(argv[i], "--version") == 0) {
      std::cout << "sandboxd-review " << SANDBOXD_VERSION << "\n";
      return 0;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::cout << kUsage;
      return 0;
    } else {
      // An argument is never passed over in silence.
      std::cerr << "sandboxd-review: unknown argument '" << argv[i] << "'\n" << kUsage;
      return 2;
    }
  }
  auto app = Gtk::Application::create("org.sandboxd.Review");
  // Our arguments are read above; GTK's own (--display...) come from the environment.
  char* program[] = {argv[0], nullptr};
  return app->make_window_and_run<sandboxd_review::ReviewWindow>(1, program, user_mode);
}
