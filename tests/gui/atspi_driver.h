#pragma once
/// Drives a GTK app the way a screen reader does: the (root) test process joins a GuiSession's
/// accessibility bus and finds, reads and presses the app's widgets by role and name over the
/// AT-SPI D-Bus interfaces. It never touches the app's state any other way.
///
/// Why plain D-Bus calls (GDBus) rather than libatspi: libatspi 2.46 keeps its bus and its
/// table of applications in process-wide globals that atspi_exit() does not clear, so a process
/// cannot connect a second time, to another session's bus or the same one (checked: after
/// atspi_exit + atspi_init the desktop answers "The application no longer exists"). One test
/// program drives several sessions (alice's, bob's), so each driver here has its own
/// connection; and without libatspi's cache every read is the app's current state.

#include <atspi/atspi-constants.h>  // AtspiRole, AtspiStateType: the numbers AT-SPI sends
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

typedef struct _GDBusConnection GDBusConnection;

namespace sandboxd::it {

/// How long a wait for the app (its window, a row, a changed label) lasts by default.
inline constexpr std::chrono::milliseconds kA11yWait = std::chrono::seconds(20);

/// One object of the accessibility tree: the bus name of its application and its object path,
/// with a reference to the connection it is reached on. Empty (false) when a lookup found
/// nothing. Reading an object that has gone yields "", ATSPI_ROLE_INVALID, false or an error
/// text; it never throws.
class Accessible {
 public:
  Accessible() = default;
  Accessible(GDBusConnection* connection, std::string bus_name, std::string path);
  Accessible(const Accessible& other);
  Accessible(Accessible&& other) noexcept;
  Accessible& operator=(Accessible other) noexcept;
  ~Accessible();

  explicit operator bool() const { return connection_ != nullptr && !path_.empty(); }
  bool operator==(const Accessible& other) const { return bus_name_ == other.bus_name_ && path_ == other.path_; }
  GDBusConnection* connection() const { return connection_; }
  const std::string& bus_name() const { return bus_name_; }
  const std::string& path() const { return path_; }

 private:
  GDBusConnection* connection_ = nullptr;
  std::string bus_name_;
  std::string path_;
};

/// This process's connection to one session's accessibility bus (GuiSession::a11y_bus_address();
/// its policy lets root in). Several may be open at once; each Accessible keeps its own
/// connection alive.
class AtspiDriver {
 public:
  explicit AtspiDriver(const std::string& a11y_bus_address);
  ~AtspiDriver();
  AtspiDriver(const AtspiDriver&) = delete;
  AtspiDriver& operator=(const AtspiDriver&) = delete;

  /// "" when connected, else why not.
  const std::string& error() const { return error_; }
  /// The registry's root, whose children are the registered applications.
  Accessible Desktop() const;
  /// The application named `name` (its program name: GTK reports g_get_prgname(), the basename
  /// of argv[0]) run by process `pid` (any, when 0) that has at least one window: an app may
  /// register twice, once without windows. Looks once; empty if none (yet).
  Accessible FindApp(const std::string& name, pid_t pid = 0) const;
  /// FindApp, polled until it answers: GTK registers after its first widget is realized.
  Accessible WaitForApp(const std::string& name, pid_t pid = 0, std::chrono::milliseconds timeout = kA11yWait) const;

 private:
  GDBusConnection* connection_ = nullptr;
  std::string error_;
};

// Reading one object.
std::string Name(const Accessible& object);
AtspiRole Role(const Accessible& object);
/// The role's name as the app words it, for messages: GTK 4.8 sends its own role names
/// ("button", "window", "text box", "group", "list item"), not AT-SPI's ("push button",
/// "frame"...); match on Role(), which is AT-SPI's number.
std::string RoleName(const Accessible& object);
bool HasState(const Accessible& object, AtspiStateType state);
bool IsSensitive(const Accessible& object);
/// The whole text of a label or an entry (the Text interface); "" when it has none.
std::string Text(const Accessible& object);
Accessible Parent(const Accessible& object);
/// The children GTK presents (visible widgets only; of a list only the rows it realized).
std::vector<Accessible> Children(const Accessible& object);

// Finding objects under `root` (root included), depth first, at most `max_depth` levels down
// and a few thousand objects in all; objects that vanish during the walk are skipped.
inline constexpr int kA11yMaxDepth = 40;
/// The first object of role `role` named exactly `name`.
Accessible Find(const Accessible& root, AtspiRole role, const std::string& name, int max_depth = kA11yMaxDepth);
/// The first object of role `role` whose name contains `part`.
Accessible FindContaining(const Accessible& root, AtspiRole role, const std::string& part, int max_depth = kA11yMaxDepth);
/// Every object of role `role` whose name contains `part` ("": every one of the role).
std::vector<Accessible> FindAll(const Accessible& root, AtspiRole role, const std::string& part = "", int max_depth = kA11yMaxDepth);
/// The first object `matches` accepts.
Accessible FindIf(const Accessible& root, const std::function<bool(const Accessible&)>& matches, int max_depth = kA11yMaxDepth);

// Waiting: polled every 100 ms, because the app changes its tree from its own main loop.
/// The first non-empty result of `look`, or empty after `timeout`.
Accessible WaitFor(const std::function<Accessible()>& look, std::chrono::milliseconds timeout = kA11yWait);
/// Whether `holds` came true before `timeout`.
bool PollUntil(const std::function<bool()>& holds, std::chrono::milliseconds timeout = kA11yWait);

// Acting: each returns "" when done, else why not (for EXPECT_EQ(Click(b), "")).
/// Its "click" action (buttons and toggle buttons; GTK 4.8 gives check buttons none). Fails
/// for an insensitive object, as a user's click would do nothing.
std::string Click(const Accessible& object);
/// Selects a `list item` of a list (GtkListView) through the list's Selection interface, and
/// waits until the item reports itself selected.
std::string SelectRow(const Accessible& list_item);
/// Replaces the text of an editable object (entry, search entry) as typing would.
std::string SetText(const Accessible& object, const std::string& text);

/// The tree under `root`, one object a line: indented role, quoted name, and [insensitive] or
/// [selected] where so; for failure messages (at most a few hundred lines).
std::string DumpTree(const Accessible& root, int max_depth = 12);

}  // namespace sandboxd::it
