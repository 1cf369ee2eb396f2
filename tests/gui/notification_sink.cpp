// A desktop's notification server, as far as the tests need one: it owns
// org.freedesktop.Notifications on the session bus it is started on and appends each
// notification it is asked to show to the file named by its argument, one line each:
// "APP_NAME<TAB>SUMMARY<TAB>BODY". sandboxd-review's notifications reach it through GLib's
// freedesktop backend (GNOTIFICATION_BACKEND=freedesktop, set by GuiSession).

#include <gio/gio.h>

#include <cstdio>
#include <string>

namespace {

constexpr const char* kIntrospection = R"(<node>
  <interface name="org.freedesktop.Notifications">
    <method name="Notify">
      <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
      <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
      <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/><arg type="u" direction="out"/>
    </method>
    <method name="CloseNotification"><arg type="u" direction="in"/></method>
    <method name="GetCapabilities"><arg type="as" direction="out"/></method>
    <method name="GetServerInformation">
      <arg type="s" direction="out"/><arg type="s" direction="out"/><arg type="s" direction="out"/><arg type="s" direction="out"/>
    </method>
  </interface>
</node>)";

std::string log_path;
guint32 next_id = 1;

void Append(const std::string& line) {
  if (FILE* log = std::fopen(log_path.c_str(), "a")) {
    std::fputs(line.c_str(), log);
    std::fclose(log);
  }
}

void OnCall(GDBusConnection*, const char*, const char*, const char*, const char* method, GVariant* parameters,
            GDBusMethodInvocation* invocation, gpointer) {
  const std::string name = method;
  if (name == "Notify") {
    const char *app = nullptr, *icon = nullptr, *summary = nullptr, *body = nullptr;
    guint32 replaces = 0;
    g_variant_get(parameters, "(&su&s&s&s@as@a{sv}i)", &app, &replaces, &icon, &summary, &body, nullptr, nullptr, nullptr);
    Append(std::string(app) + "\t" + summary + "\t" + body + "\n");
    g_dbus_method_invocation_return_value(invocation, g_variant_new("(u)", replaces ? replaces : next_id++));
  } else if (name == "GetCapabilities") {
    const char* capabilities[] = {"body", nullptr};
    g_dbus_method_invocation_return_value(invocation, g_variant_new("(^as)", capabilities));
  } else if (name == "GetServerInformation") {
    g_dbus_method_invocation_return_value(invocation, g_variant_new("(ssss)", "notification-sink", "sandboxd tests", "1", "1.2"));
  } else {
    g_dbus_method_invocation_return_value(invocation, nullptr);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: notification-sink LOG\n");
    return 2;
  }
  log_path = argv[1];
  GError* error = nullptr;
  GDBusConnection* bus = g_bus_get_sync(G_BUS_TYPE_SESSION, nullptr, &error);
  GDBusNodeInfo* node = bus ? g_dbus_node_info_new_for_xml(kIntrospection, &error) : nullptr;
  if (!node) {
    std::fprintf(stderr, "notification-sink: %s\n", error->message);
    return 1;
  }
  static const GDBusInterfaceVTable vtable = {OnCall, nullptr, nullptr, {}};
  g_dbus_connection_register_object(bus, "/org/freedesktop/Notifications", node->interfaces[0], &vtable, nullptr, nullptr, &error);
  // "ready" once the name is ours: the test waits for it before it starts the app.
  g_bus_own_name_on_connection(
      bus, "org.freedesktop.Notifications", G_BUS_NAME_OWNER_FLAGS_NONE, [](GDBusConnection*, const char*, gpointer) { Append("ready\n"); },
      nullptr, nullptr, nullptr);
  g_main_loop_run(g_main_loop_new(nullptr, false));
}
