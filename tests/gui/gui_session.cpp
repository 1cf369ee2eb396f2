#include "gui_session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness.h"
#include "user_process.h"

namespace sandboxd::it {

namespace {

constexpr auto kGuiStepTimeout = std::chrono::seconds(20);
constexpr int kFirstDisplay = 90;
constexpr int kDisplayTries = 30;

// No <servicedir>: nothing on this bus starts by activation, so every process of the session
// is one we started and will stop (the stock session.conf would start a second at-spi launcher
// or dconf-service behind our back, as children we hold no pid of). Only the user connects.
constexpr const char* kGuiSessionBusConfig = R"(<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=@SOCKET@</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
)";

/// A pipe whose ends close with it; `Keep()` hands the write end to a child.
struct GuiPipe {
  int read_end = -1, write_end = -1;
  GuiPipe() {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) == 0) read_end = ends[0], write_end = ends[1];
  }
  ~GuiPipe() {
    CloseWriteEnd();
    if (read_end >= 0) close(read_end);
  }
  GuiPipe(const GuiPipe&) = delete;
  GuiPipe& operator=(const GuiPipe&) = delete;
  void CloseWriteEnd() {
    if (write_end >= 0) close(write_end);
    write_end = -1;
  }
};

/// A variable given again in `extra` replaces the one in `env` (getenv would find the first).
void AddOrReplace(std::vector<std::string>& env, const std::vector<std::string>& extra) {
  for (const auto& entry : extra) {
    const std::string name = entry.substr(0, entry.find('=') + 1);
    std::erase_if(env, [&](const std::string& have) { return have.starts_with(name); });
    env.push_back(entry);
  }
}

std::string LastLines(const std::string& text, size_t most = 20) {
  size_t start = text.size();
  // The text's own last newline ends its last line; `most` newlines before it, the excerpt starts.
  if (start > 0 && text[start - 1] == '\n') --start;
  for (size_t lines = 0; start > 0; --start)
    if (text[start - 1] == '\n' && ++lines == most) break;
  return text.substr(start);
}

}  // namespace

GuiSession::GuiSession(std::string user) : user_(std::move(user)) {}

GuiSession::~GuiSession() {
  for (pid_t app : apps_) StopGroup(app);
  for (auto it = infrastructure_.rbegin(); it != infrastructure_.rend(); ++it) StopGroup(*it);
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

bool GuiSession::Start(std::string& why) {
  if (!dir_.empty()) {
    why = "GuiSession::Start called twice";
    return false;
  }
  std::optional<UserIds> ids = LookUpUser(user_, why);
  if (!ids) return false;
  ids_ = *ids;
  char templ[] = "/tmp/sandboxd-gui-XXXXXX";
  if (mkdtemp(templ) == nullptr) {
    why = std::string("cannot create a session directory: ") + std::strerror(errno);
    return false;
  }
  dir_ = templ;
  chmod(dir_.c_str(), 0755);
  // XDG_RUNTIME_DIR as a login would make it: the user's alone. The buses' sockets live here.
  runtime_dir_ = dir_ + "/runtime";
  if (mkdir(runtime_dir_.c_str(), 0700) != 0 || chown(runtime_dir_.c_str(), ids_.uid, ids_.gid) != 0) {
    why = "cannot create " + runtime_dir_ + ": " + std::strerror(errno);
    return false;
  }
  return StartDisplay(why) && StartSessionBus(why) && StartA11yBus(why) && StartRegistry(why);
}

std::vector<std::string> GuiSession::BaseEnvironment() const {
  std::vector<std::string> env = {"HOME=" + ids_.home, "USER=" + user_, "LOGNAME=" + user_, "PATH=/usr/bin:/bin:/usr/sbin:/sbin",
                                  "LANG=C.UTF-8", "XDG_RUNTIME_DIR=" + runtime_dir_};
  if (!display_.empty()) env.push_back("DISPLAY=" + display_);
  if (!session_bus_address_.empty()) env.push_back("DBUS_SESSION_BUS_ADDRESS=" + session_bus_address_);
  return env;
}

bool GuiSession::StartDisplay(std::string& why) {
  // Xvfb runs as the user, which may not create the sockets' directory; root makes it as
  // a booting system does (world-writable, sticky).
  if (mkdir("/tmp/.X11-unix", 01777) == 0) chmod("/tmp/.X11-unix", 01777);
  const std::string log = dir_ + "/xvfb.log";
  for (int display = kFirstDisplay; display < kFirstDisplay + kDisplayTries; ++display) {
    const std::string number = std::to_string(display);
    // Another server's (a parallel test's, or one left behind): Xvfb would refuse it anyway.
    if (access(("/tmp/.X" + number + "-lock").c_str(), F_OK) == 0 || access(("/tmp/.X11-unix/X" + number).c_str(), F_OK) == 0)
      continue;
    GuiPipe ready;
    // -displayfd: Xvfb writes the number there once it accepts clients; end of file if it
    // gave up (a race for the number with another server). -ac: no access control, so the
    // root test process may connect too (Screenshot); -nolisten tcp keeps it off the network.
    pid_t pid = SpawnAs(ids_,
                        {"Xvfb", ":" + number, "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-ac", "-noreset", "-displayfd", "3"},
                        BaseEnvironment(), log, ready.write_end, why);
    if (pid < 0) return false;
    ready.CloseWriteEnd();
    children_[pid] = {.what = "Xvfb", .log = log};
    infrastructure_.push_back(pid);
    if (std::optional<std::string> line = ReadLine(ready.read_end, kGuiStepTimeout); line && *line == number) {
      display_ = ":" + number;
      return true;
    }
    const bool taken = Contains(ReadWhole(log), "already active");
    StopGroup(pid);
    infrastructure_.pop_back();
    if (!taken) break;
  }
  why = "Xvfb did not start; its log:\n" + LastLines(ReadWhole(log));
  return false;
}

bool GuiSession::StartSessionBus(std::string& why) {
  const std::string config = dir_ + "/session-bus.conf";
  std::string text = kGuiSessionBusConfig;
  text.replace(text.find("@SOCKET@"), 8, runtime_dir_ + "/bus");
  WriteWhole(config, text);
  const std::string log = dir_ + "/session-bus.log";
  GuiPipe address;
  pid_t pid = SpawnAs(ids_, {"dbus-daemon", "--config-file=" + config, "--nofork", "--nopidfile", "--print-address=3"},
                      BaseEnvironment(), log, address.write_end, why);
  if (pid < 0) return false;
  address.CloseWriteEnd();
  children_[pid] = {.what = "the session dbus-daemon", .log = log};
  infrastructure_.push_back(pid);
  std::optional<std::string> line = ReadLine(address.read_end, kGuiStepTimeout);
  if (!line || line->empty()) {
    why = "the session dbus-daemon did not start" + ExitedText(pid) + "; its log:\n" + LastLines(ReadWhole(log));
    return false;
  }
  session_bus_address_ = *line;
  return true;
}

bool GuiSession::StartA11yBus(std::string& why) {
  const std::string log = dir_ + "/at-spi-bus-launcher.log";
  // Started before any app: GTK asks for the accessibility bus once, when its first widget
  // is realized, and without an answer stays unreachable for the rest of its life.
  pid_t pid = SpawnAs(ids_, {"/usr/libexec/at-spi-bus-launcher", "--launch-immediately"}, BaseEnvironment(), log, -1, why);
  if (pid < 0) return false;
  children_[pid] = {.what = "at-spi-bus-launcher", .log = log};
  infrastructure_.push_back(pid);
  auto answered = [&] {
    std::string out = GdbusCall(session_bus_address_, {"--dest", "org.a11y.Bus", "--object-path", "/org/a11y/bus", "--method",
                                                       "org.a11y.Bus.GetAddress"});
    // "('unix:path=...,guid=...',)"
    size_t first = out.find('\''), last = out.rfind('\'');
    if (first == std::string::npos || last <= first + 1) return false;
    a11y_bus_address_ = out.substr(first + 1, last - first - 1);
    return true;
  };
  return WaitReady(pid, "the accessibility bus (org.a11y.Bus.GetAddress)", answered, why);
}

bool GuiSession::StartRegistry(std::string& why) {
  const std::string log = dir_ + "/at-spi2-registryd.log";
  // Started by us rather than activated by the accessibility bus, so its pid is ours to stop.
  std::vector<std::string> env = BaseEnvironment();
  env.push_back("AT_SPI_BUS_ADDRESS=" + a11y_bus_address_);
  pid_t pid = SpawnAs(ids_, {"/usr/libexec/at-spi2-registryd"}, env, log, -1, why);
  if (pid < 0) return false;
  children_[pid] = {.what = "at-spi2-registryd", .log = log};
  infrastructure_.push_back(pid);
  auto owned = [&] {
    return Contains(GdbusCall(a11y_bus_address_, {"--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                                  "--method", "org.freedesktop.DBus.NameHasOwner", "org.a11y.atspi.Registry"}),
                    "true");
  };
  return WaitReady(pid, "org.a11y.atspi.Registry on the accessibility bus", owned, why);
}

std::string GuiSession::GdbusCall(const std::string& address, const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"gdbus", "call", "--address", address, "--timeout", "5"};
  argv.insert(argv.end(), args.begin(), args.end());
  Result result = World().RunAs(user_, argv, {.timeout = std::chrono::seconds(15), .extra_env = BaseEnvironment()});
  return result.status == 0 ? result.out : std::string();
}

bool GuiSession::WaitReady(pid_t pid, const char* what, const std::function<bool()>& ready, std::string& why) const {
  const auto deadline = std::chrono::steady_clock::now() + kGuiStepTimeout;
  for (;;) {
    if (ready()) return true;
    if (HasExited(pid) || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const Child& child = children_.at(pid);
  why = std::string(what) + " did not answer within 20 s" + ExitedText(pid) + "; the log of " + child.what + ":\n" +
        LastLines(ReadWhole(child.log));
  return false;
}

std::string GuiSession::ExitedText(pid_t pid) const {
  int status = 0;
  return HasExited(pid, &status) ? " (" + children_.at(pid).what + " ended: " + DescribeStatus(status) + ")" : std::string();
}

pid_t GuiSession::StartApp(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  if (display_.empty() || a11y_bus_address_.empty()) return -1;  // Start() did not succeed
  const std::string log = dir_ + "/app.log";
  std::vector<std::string> env = BaseEnvironment();
  // x11 and cairo: what Xvfb offers without GL. The system bus is the test world's, so the
  // app talks to the test's sandboxd and polkitd. GSettings in memory: the app neither reads
  // nor changes the user's settings (and needs no dconf-service, which this bus cannot start).
  AddOrReplace(env, {"DBUS_SYSTEM_BUS_ADDRESS=" + World().bus_address(), "GDK_BACKEND=x11", "GSK_RENDERER=cairo",
                     "GNOTIFICATION_BACKEND=freedesktop", "GSETTINGS_BACKEND=memory"});
  AddOrReplace(env, extra_env);
  std::string why;
  pid_t pid = SpawnAs(ids_, argv, env, log, -1, why);
  if (pid < 0) {
    std::ofstream(log, std::ios::app) << "GuiSession::StartApp: " << why << "\n";
    return -1;
  }
  children_[pid] = {.what = argv.front(), .log = log};
  apps_.push_back(pid);
  return pid;
}

void GuiSession::StopApp(pid_t pid) {
  auto found = std::find(apps_.begin(), apps_.end(), pid);
  if (found == apps_.end()) return;
  apps_.erase(found);
  StopGroup(pid);
}

bool GuiSession::AppRunning(pid_t pid) const {
  return std::find(apps_.begin(), apps_.end(), pid) != apps_.end() && !HasExited(pid);
}

std::string GuiSession::AppLog() const { return ReadWhole(dir_ + "/app.log"); }

std::string GuiSession::Screenshot(const std::string& png_path) const {
  if (display_.empty()) return "no display: the session has not started";
  Result shot = World().RunAs("root", {"import", "-display", display_, "-window", "root", "png:" + png_path},
                              {.timeout = std::chrono::seconds(30)});
  if (shot.status != 0) return "import failed (" + std::to_string(shot.status) + "): " + shot.err;
  std::string image = ReadWhole(png_path);
  if (image.size() < 8 || image.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return "import wrote no PNG to " + png_path;
  return {};
}

}  // namespace sandboxd::it
