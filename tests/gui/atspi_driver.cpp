#include "atspi_driver.h"

#include <gio/gio.h>

#include <memory>
#include <thread>
#include <utility>

namespace sandboxd::it {

namespace {

constexpr const char* kA11yRegistryName = "org.a11y.atspi.Registry";
constexpr const char* kA11yRootPath = "/org/a11y/atspi/accessible/root";
constexpr const char* kA11yNullPath = "/org/a11y/atspi/null";
constexpr const char* kA11yAccessibleIface = "org.a11y.atspi.Accessible";
// A read answers at once; an action replies only after the app's handler returned.
constexpr int kA11yReadTimeoutMs = 5000;
constexpr int kA11yActionTimeoutMs = 20000;
constexpr int kA11yMostVisited = 4000;
constexpr int kA11yMostDumped = 400;
constexpr auto kA11yPollInterval = std::chrono::milliseconds(100);

struct A11yVariantUnref {
  void operator()(GVariant* value) const { g_variant_unref(value); }
};
using A11yVariant = std::unique_ptr<GVariant, A11yVariantUnref>;

/// Calls `method` of `iface` on `object`; its reply, or null with `why` (when given).
/// `parameters` (floating) is consumed.
A11yVariant CallOn(const Accessible& object, const char* iface, const char* method, GVariant* parameters, const char* reply_type,
                   std::string* why = nullptr, int timeout_ms = kA11yReadTimeoutMs) {
  if (!object) {
    if (parameters != nullptr) g_variant_unref(g_variant_ref_sink(parameters));
    if (why != nullptr) *why = "no such object";
    return nullptr;
  }
  GError* error = nullptr;
  // NO_AUTO_START: an app that has gone is an error at once, never an activation attempt.
  GVariant* reply = g_dbus_connection_call_sync(object.connection(), object.bus_name().c_str(), object.path().c_str(), iface, method,
                                                parameters, G_VARIANT_TYPE(reply_type), G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms,
                                                nullptr, &error);
  if (reply == nullptr) {
    if (why != nullptr) *why = std::string(iface) + "." + method + ": " + (error != nullptr ? error->message : "no reply");
    g_clear_error(&error);
  }
  return A11yVariant(reply);
}

/// A property's value (unboxed from its variant), or null.
A11yVariant PropertyOf(const Accessible& object, const char* iface, const char* name, std::string* why = nullptr) {
  A11yVariant reply =
      CallOn(object, "org.freedesktop.DBus.Properties", "Get", g_variant_new("(ss)", iface, name), "(v)", why);
  if (!reply) return nullptr;
  GVariant* boxed = nullptr;
  g_variant_get(reply.get(), "(v)", &boxed);
  return A11yVariant(boxed);
}

/// The object an AT-SPI reference `(so)` names, reached on `connection`; empty for the null one.
Accessible FromReference(GDBusConnection* connection, GVariant* reference) {
  const char* bus_name = nullptr;
  const char* path = nullptr;
  g_variant_get(reference, "(&s&o)", &bus_name, &path);
  if (bus_name[0] == '\0' || std::string(path) == kA11yNullPath) return {};
  return Accessible(connection, bus_name, path);
}

std::string Quoted(const std::string& text) { return "'" + text + "'"; }

std::string Describe(const Accessible& object) { return RoleName(object) + " " + Quoted(Name(object)); }

/// Visits `root` and what lies below it, depth first; `visit` returns false to stop the walk.
/// Returns false when stopped.
bool Walk(const Accessible& root, int depth, int max_depth, int& budget,
          const std::function<bool(const Accessible&, int)>& visit) {
  if (--budget < 0) return false;
  if (!visit(root, depth)) return false;
  if (depth >= max_depth) return true;
  for (const Accessible& child : Children(root))
    if (!Walk(child, depth + 1, max_depth, budget, visit)) return false;
  return true;
}

void WalkFrom(const Accessible& root, int max_depth, const std::function<bool(const Accessible&, int)>& visit) {
  int budget = kA11yMostVisited;
  if (root) Walk(root, 0, max_depth, budget, visit);
}

}  // namespace

Accessible::Accessible(GDBusConnection* connection, std::string bus_name, std::string path)
    : connection_(connection != nullptr ? G_DBUS_CONNECTION(g_object_ref(connection)) : nullptr),
      bus_name_(std::move(bus_name)),
      path_(std::move(path)) {}

Accessible::Accessible(const Accessible& other) : Accessible(other.connection_, other.bus_name_, other.path_) {}

Accessible::Accessible(Accessible&& other) noexcept
    : connection_(std::exchange(other.connection_, nullptr)), bus_name_(std::move(other.bus_name_)), path_(std::move(other.path_)) {}

Accessible& Accessible::operator=(Accessible other) noexcept {
  std::swap(connection_, other.connection_);
  std::swap(bus_name_, other.bus_name_);
  std::swap(path_, other.path_);
  return *this;
}

Accessible::~Accessible() {
  if (connection_ != nullptr) g_object_unref(connection_);
}

AtspiDriver::AtspiDriver(const std::string& a11y_bus_address) {
  GError* error = nullptr;
  // MESSAGE_BUS_CONNECTION: say Hello, so the bus knows us and routes the apps' replies.
  connection_ = g_dbus_connection_new_for_address_sync(
      a11y_bus_address.c_str(),
      static_cast<GDBusConnectionFlags>(G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION),
      nullptr, nullptr, &error);
  if (connection_ == nullptr) {
    error_ = "cannot connect to the accessibility bus " + a11y_bus_address + ": " + (error != nullptr ? error->message : "?");
    g_clear_error(&error);
    return;
  }
  // The test ends the connection itself; GDBus's default would exit() this process when the
  // session's bus goes away first.
  g_dbus_connection_set_exit_on_close(connection_, FALSE);
}

AtspiDriver::~AtspiDriver() {
  if (connection_ == nullptr) return;
  g_dbus_connection_close_sync(connection_, nullptr, nullptr);
  g_object_unref(connection_);
}

Accessible AtspiDriver::Desktop() const {
  if (connection_ == nullptr) return {};
  return Accessible(connection_, kA11yRegistryName, kA11yRootPath);
}

Accessible AtspiDriver::FindApp(const std::string& name, pid_t pid) const {
  for (const Accessible& app : Children(Desktop())) {
    if (Name(app) != name) continue;
    A11yVariant count = PropertyOf(app, kA11yAccessibleIface, "ChildCount");
    if (!count || g_variant_get_int32(count.get()) <= 0) continue;
    if (pid > 0) {
      GError* error = nullptr;
      GVariant* owner = g_dbus_connection_call_sync(connection_, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                    "GetConnectionUnixProcessID", g_variant_new("(s)", app.bus_name().c_str()),
                                                    G_VARIANT_TYPE("(u)"), G_DBUS_CALL_FLAGS_NONE, kA11yReadTimeoutMs, nullptr, &error);
      g_clear_error(&error);
      if (owner == nullptr) continue;
      guint32 owner_pid = 0;
      g_variant_get(owner, "(u)", &owner_pid);
      g_variant_unref(owner);
      if (static_cast<pid_t>(owner_pid) != pid) continue;
    }
    return app;
  }
  return {};
}

Accessible AtspiDriver::WaitForApp(const std::string& name, pid_t pid, std::chrono::milliseconds timeout) const {
  return WaitFor([&] { return FindApp(name, pid); }, timeout);
}

std::string Name(const Accessible& object) {
  A11yVariant name = PropertyOf(object, kA11yAccessibleIface, "Name");
  return name && g_variant_is_of_type(name.get(), G_VARIANT_TYPE_STRING) ? g_variant_get_string(name.get(), nullptr) : "";
}

AtspiRole Role(const Accessible& object) {
  A11yVariant reply = CallOn(object, kA11yAccessibleIface, "GetRole", nullptr, "(u)");
  if (!reply) return ATSPI_ROLE_INVALID;
  guint32 role = 0;
  g_variant_get(reply.get(), "(u)", &role);
  return static_cast<AtspiRole>(role);
}

std::string RoleName(const Accessible& object) {
  A11yVariant reply = CallOn(object, kA11yAccessibleIface, "GetRoleName", nullptr, "(s)");
  if (!reply) return "(gone)";
  const char* name = nullptr;
  g_variant_get(reply.get(), "(&s)", &name);
  return name;
}

bool HasState(const Accessible& object, AtspiStateType state) {
  A11yVariant reply = CallOn(object, kA11yAccessibleIface, "GetState", nullptr, "(au)");
  if (!reply) return false;
  // A bit set, 32 states to a word.
  GVariant* words = g_variant_get_child_value(reply.get(), 0);
  gsize count = 0;
  const guint32* bits = static_cast<const guint32*>(g_variant_get_fixed_array(words, &count, sizeof(guint32)));
  const auto word = static_cast<gsize>(state) / 32;
  const bool set = word < count && (bits[word] & (1u << (static_cast<unsigned>(state) % 32))) != 0;
  g_variant_unref(words);
  return set;
}

bool IsSensitive(const Accessible& object) { return HasState(object, ATSPI_STATE_SENSITIVE); }

std::string Text(const Accessible& object) {
  A11yVariant count = PropertyOf(object, "org.a11y.atspi.Text", "CharacterCount");
  if (!count || !g_variant_is_of_type(count.get(), G_VARIANT_TYPE_INT32)) return "";
  // GTK 4.8 clamps the end offset to [0, length]: -1 ("to the end" elsewhere) would read "".
  A11yVariant reply =
      CallOn(object, "org.a11y.atspi.Text", "GetText", g_variant_new("(ii)", 0, g_variant_get_int32(count.get())), "(s)");
  if (!reply) return "";
  const char* text = nullptr;
  g_variant_get(reply.get(), "(&s)", &text);
  return text;
}

Accessible Parent(const Accessible& object) {
  A11yVariant parent = PropertyOf(object, kA11yAccessibleIface, "Parent");
  if (!parent || !g_variant_is_of_type(parent.get(), G_VARIANT_TYPE("(so)"))) return {};
  return FromReference(object.connection(), parent.get());
}

std::vector<Accessible> Children(const Accessible& object) {
  std::vector<Accessible> children;
  A11yVariant reply = CallOn(object, kA11yAccessibleIface, "GetChildren", nullptr, "(a(so))");
  if (!reply) return children;
  GVariant* list = g_variant_get_child_value(reply.get(), 0);
  const gsize count = g_variant_n_children(list);
  for (gsize i = 0; i < count; ++i) {
    GVariant* reference = g_variant_get_child_value(list, i);
    if (Accessible child = FromReference(object.connection(), reference)) children.push_back(std::move(child));
    g_variant_unref(reference);
  }
  g_variant_unref(list);
  return children;
}

Accessible FindIf(const Accessible& root, const std::function<bool(const Accessible&)>& matches, int max_depth) {
  Accessible found;
  WalkFrom(root, max_depth, [&](const Accessible& object, int) {
    if (!matches(object)) return true;
    found = object;
    return false;
  });
  return found;
}

Accessible Find(const Accessible& root, AtspiRole role, const std::string& name, int max_depth) {
  // The role first: one cheap call rules out most objects before their name is asked for.
  return FindIf(root, [&](const Accessible& object) { return Role(object) == role && Name(object) == name; }, max_depth);
}

Accessible FindContaining(const Accessible& root, AtspiRole role, const std::string& part, int max_depth) {
  return FindIf(
      root, [&](const Accessible& object) { return Role(object) == role && Name(object).find(part) != std::string::npos; }, max_depth);
}

std::vector<Accessible> FindAll(const Accessible& root, AtspiRole role, const std::string& part, int max_depth) {
  std::vector<Accessible> found;
  WalkFrom(root, max_depth, [&](const Accessible& object, int) {
    if (Role(object) == role && (part.empty() || Name(object).find(part) != std::string::npos)) found.push_back(object);
    return true;
  });
  return found;
}

Accessible WaitFor(const std::function<Accessible()>& look, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (Accessible found = look()) return found;
    if (std::chrono::steady_clock::now() >= deadline) return {};
    std::this_thread::sleep_for(kA11yPollInterval);
  }
}

bool PollUntil(const std::function<bool()>& holds, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (holds()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kA11yPollInterval);
  }
}

std::string Click(const Accessible& object) {
  if (!object) return "no object to click";
  if (!IsSensitive(object)) return Describe(object) + " is insensitive";
  std::string why;
  A11yVariant count = PropertyOf(object, "org.a11y.atspi.Action", "NActions", &why);
  if (!count) return Describe(object) + " has no actions: " + why;
  std::string names;
  for (int i = 0; i < g_variant_get_int32(count.get()); ++i) {
    A11yVariant name = CallOn(object, "org.a11y.atspi.Action", "GetName", g_variant_new("(i)", i), "(s)");
    const char* text = nullptr;
    if (name) g_variant_get(name.get(), "(&s)", &text);
    if (text == nullptr || std::string(text) != "click") {
      names += std::string(names.empty() ? "" : ", ") + (text != nullptr ? text : "?");
      continue;
    }
    A11yVariant done = CallOn(object, "org.a11y.atspi.Action", "DoAction", g_variant_new("(i)", i), "(b)", &why, kA11yActionTimeoutMs);
    if (!done) return "clicking " + Describe(object) + " failed: " + why;
    gboolean accepted = FALSE;
    g_variant_get(done.get(), "(b)", &accepted);
    // GTK refuses it for a widget insensitive or hidden by now.
    return accepted ? std::string() : Describe(object) + " refused the click";
  }
  return Describe(object) + " has no click action (it has: " + names + ")";
}

std::string SelectRow(const Accessible& list_item) {
  if (!list_item) return "no row to select";
  Accessible list = Parent(list_item);
  std::string why;
  A11yVariant index = CallOn(list_item, kA11yAccessibleIface, "GetIndexInParent", nullptr, "(i)", &why);
  if (!list || !index) return "cannot place " + Describe(list_item) + " in its list: " + why;
  gint32 position = 0;
  g_variant_get(index.get(), "(i)", &position);
  A11yVariant done = CallOn(list, "org.a11y.atspi.Selection", "SelectChild", g_variant_new("(i)", position), "(b)", &why,
                            kA11yActionTimeoutMs);
  if (!done) return "selecting " + Describe(list_item) + " failed: " + why;
  gboolean accepted = FALSE;
  g_variant_get(done.get(), "(b)", &accepted);
  if (!accepted) return Describe(list) + " refused to select " + Describe(list_item) + " (a list without a selection model?)";
  // GTK 4.8 counts SelectChild's index over all the list's row widgets, GetIndexInParent over
  // the presented ones: where they differ another row got selected, which this tells.
  if (PollUntil([&] { return HasState(list_item, ATSPI_STATE_SELECTED); }, std::chrono::seconds(5))) return {};
  A11yVariant selected = CallOn(list, "org.a11y.atspi.Selection", "GetSelectedChild", g_variant_new("(i)", 0), "((so))");
  std::string instead = "nothing";
  if (selected) {
    GVariant* reference = g_variant_get_child_value(selected.get(), 0);
    instead = Describe(FromReference(list.connection(), reference));
    g_variant_unref(reference);
  }
  return Describe(list_item) + " did not become selected; selected is " + instead;
}

std::string SetText(const Accessible& object, const std::string& text) {
  std::string why;
  A11yVariant done = CallOn(object, "org.a11y.atspi.EditableText", "SetTextContents", g_variant_new("(s)", text.c_str()), "(b)", &why,
                            kA11yActionTimeoutMs);
  if (!done) return "cannot set the text of " + Describe(object) + ": " + why;
  gboolean accepted = FALSE;
  g_variant_get(done.get(), "(b)", &accepted);
  return accepted ? std::string() : Describe(object) + " is not editable";
}

std::string DumpTree(const Accessible& root, int max_depth) {
  std::string dump;
  int lines = 0;
  WalkFrom(root, max_depth, [&](const Accessible& object, int depth) {
    if (++lines > kA11yMostDumped) {
      dump += "(more not shown)\n";
      return false;
    }
    dump += std::string(static_cast<size_t>(depth) * 2, ' ') + Describe(object);
    if (!IsSensitive(object)) dump += " [insensitive]";
    if (HasState(object, ATSPI_STATE_SELECTED)) dump += " [selected]";
    dump += "\n";
    return true;
  });
  return dump.empty() ? "(no tree: the object is gone)\n" : dump;
}

}  // namespace sandboxd::it
