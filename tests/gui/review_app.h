#pragma once
/// sandboxd-review as the GUI tests run it: in a private desktop of one test user (GuiSession)
/// with a notification server, driven over AT-SPI (atspi_driver.h), and the projects and
/// sandboxes the tests give it.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "atspi_driver.h"
#include "gui_session.h"
#include "harness.h"

namespace sandboxd::it {

inline constexpr const char* kAppName = "sandboxd-review";  // GTK reports the basename of argv[0]

/// Where the screenshots go (docs/desktop-app.md shows some of them).
inline std::string ShotPath(const std::string& name) {
  const std::string dir = kBuildDir + "/tests/gui/screenshots";
  std::filesystem::create_directories(dir);
  return dir + "/" + name + ".png";
}

/// The app as one user runs it in a desktop of their own.
class ReviewApp {
 public:
  /// The app of `user`, started with `env` added to its environment and `args` on its command line.
  explicit ReviewApp(const std::string& user, std::vector<std::string> env = {}, std::vector<std::string> args = {})
      : session_(user), env_(std::move(env)), args_(std::move(args)) {}

  /// What to do in the session once it is up, before the app starts ("" when done, else why
  /// not): a user-mode sandboxd on its session bus, and that daemon's sandboxes.
  void BeforeApp(std::function<std::string(GuiSession&)> step) { before_app_ = std::move(step); }

  /// Empty when started, else why not.
  std::string Start() {
    std::string why;
    if (!session_.Start(why)) return why;
    driver_ = std::make_unique<AtspiDriver>(session_.a11y_bus_address());
    if (!driver_->error().empty()) return driver_->error();
    // The desktop's notification server first, as a desktop has it before its apps.
    if (session_.StartApp({SANDBOXD_NOTIFICATION_SINK_BIN, NotificationsPath()}) < 0) return "no notification server: " + session_.AppLog();
    if (!WaitUntil([&] { return Contains(ReadWhole(NotificationsPath()), "ready\n"); }, kA11yWait))
      return "the notification server did not start: " + session_.AppLog();
    if (before_app_)
      if (std::string why = before_app_(session_); !why.empty()) return why;
    std::vector<std::string> argv = {SANDBOXD_REVIEW_BIN};
    argv.insert(argv.end(), args_.begin(), args_.end());
    pid_ = session_.StartApp(argv, env_);
    if (pid_ < 0) return "the app did not start: " + session_.AppLog();
    app_ = driver_->WaitForApp(kAppName, pid_);
    if (!app_) return "the app did not appear on the accessibility bus:\n" + session_.AppLog();
    if (!WaitFor([&] { return Find(app_, ATSPI_ROLE_FRAME, "Sandboxd Review"); })) return "no window:\n" + State();
    return "";
  }

  const Accessible& app() const { return app_; }
  pid_t pid() const { return pid_; }
  /// The notifications the app sent: "APP<TAB>SUMMARY<TAB>BODY" lines (notification_sink.cpp).
  std::string Notifications() const { return ReadWhole(NotificationsPath()); }

  /// The app's tree and output, for a failure message; and a screenshot of the moment.
  std::string State() const {
    const std::string shot = ShotPath(std::string("failure-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    session_.Screenshot(shot);
    return "\n---- accessibility tree (screenshot " + shot + ") ----\n" + DumpTree(app_, 30) + "---- app log ----\n" + session_.AppLog();
  }

  std::string Shot(const std::string& name) const { return session_.Screenshot(ShotPath(name)); }

  /// A list row whose name holds `part` (a sandbox row holds its name, a change row its path).
  Accessible WaitForRow(const std::string& part) const {
    return WaitFor([&] { return FindContaining(app_, ATSPI_ROLE_LIST_ITEM, part); });
  }
  Accessible Button(const std::string& name) const { return Find(app_, ATSPI_ROLE_PUSH_BUTTON, name); }
  /// A label whose text holds `part` (the daemon's answer to the last act, for one).
  Accessible WaitForLabel(const std::string& part) const {
    return WaitFor([&] { return FindContaining(app_, ATSPI_ROLE_LABEL, part); });
  }
  /// Selects the row whose name holds `part`; "" when done.
  std::string Select(const std::string& part) const {
    Accessible row = WaitForRow(part);
    if (!row) return "no row holds '" + part + "'";
    return SelectRow(row);
  }
  /// Clicks the button `name` inside the group whose name is `group` (a hunk: "Hunk 1 of P").
  std::string ClickIn(const std::string& group, const std::string& name) const {
    Accessible box = WaitFor([&] { return FindIf(app_, [&](const Accessible& a) { return Name(a) == group; }); });
    if (!box) return "no '" + group + "'";
    Accessible button = Find(box, ATSPI_ROLE_PUSH_BUTTON, name);
    if (!button) return "no button '" + name + "' in '" + group + "'";
    return Click(button);
  }
  /// Clicks `name` once it can be clicked: a button waits while an act is under way, and one
  /// just shown takes clicks from its first frame on.
  std::string ClickWhenSensitive(const std::string& name) const {
    std::string why = "no sensitive button '" + name + "'";
    PollUntil([&] {
      Accessible button = Button(name);
      if (!button || !IsSensitive(button)) return false;
      why = Click(button);
      return why.empty();
    });
    return why;
  }

 private:
  // In the session's runtime directory, which the user (the server) may write.
  std::string NotificationsPath() const { return session_.dir() + "/runtime/notifications.log"; }

  GuiSession session_;
  std::vector<std::string> env_;
  std::vector<std::string> args_;
  std::function<std::string(GuiSession&)> before_app_;
  std::unique_ptr<AtspiDriver> driver_;
  pid_t pid_ = -1;
  Accessible app_;
};

/// A project of `user`'s with long.txt (30 lines: a change at each end is two hunks).
inline std::string MakeLongProject(const std::string& user) {
  std::string project = World().MakeProject(user);
  std::string text;
  for (int i = 1; i <= 30; ++i) text += "line " + std::to_string(i) + "\n";
  WriteWhole(project + "/long.txt", text);
  struct stat owner {};
  stat(project.c_str(), &owner);
  chown((project + "/long.txt").c_str(), owner.st_uid, owner.st_gid);
  return project;
}

inline std::string CreateSandbox(const std::string& user, const std::string& name, const std::string& project) {
  return Trim(World().Sandboxctl(user, {"create", "--name", name, project}).out);
}

/// CreateSandbox, then a job in it that ran `script` (sh -c); the id, or "" with a test failure
/// saying which step failed.
inline std::string SandboxAfterJob(const std::string& user, const std::string& name, const std::string& project,
                                   const std::string& script) {
  const std::string id = CreateSandbox(user, name, project);
  if (id.empty()) {
    ADD_FAILURE() << "sandbox " << name << " over " << project << " could not be made";
    return "";
  }
  Result job = World().Sandboxctl(user, {"run", id, "--", "sh", "-c", script});
  if (job.status != 0) {
    ADD_FAILURE() << "the job in sandbox " << name << " exited " << job.status << ": " << job.err;
    return "";
  }
  return id;
}

}  // namespace sandboxd::it
