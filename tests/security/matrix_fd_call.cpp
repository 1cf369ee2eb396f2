// matrix-fd-call: a method call with a unix fd argument, which gdbus cannot make, for the
// authorization matrix (authorization_matrix_test.cpp). Usage:
//   matrix-fd-call OBJECT_PATH INTERFACE.METHOD ARG...
// on the system bus that DBUS_SYSTEM_BUS_ADDRESS names, to org.sandboxd.Sandbox1. Each ARG is
// one of the matrix table's spellings: "@as []" (an empty string array), "@a(suu) []" (no
// selectors), "@a{sv} {}" (no options) or "@FD@" (this process's stdout, as type h). Prints the reply's signature on success (exit 0); on an error
// prints it as gdbus does ("Error: GDBus.Error:NAME: MESSAGE") and exits 1; bad usage exits 2.

#include <systemd/sd-bus.h>

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: matrix-fd-call OBJECT_PATH INTERFACE.METHOD ARG...\n");
    return 2;
  }
  std::string member = argv[2];
  size_t dot = member.rfind('.');
  if (dot == std::string::npos) {
    std::fprintf(stderr, "matrix-fd-call: %s is not INTERFACE.METHOD\n", argv[2]);
    return 2;
  }
  std::string interface = member.substr(0, dot);
  std::string method = member.substr(dot + 1);
  sd_bus* bus = nullptr;
  int r = sd_bus_open_system(&bus);
  if (r < 0) {
    std::fprintf(stderr, "matrix-fd-call: cannot open the system bus: %s\n", std::strerror(-r));
    return 1;
  }
  sd_bus_message* call = nullptr;
  r = sd_bus_message_new_method_call(bus, &call, "org.sandboxd.Sandbox1", argv[1], interface.c_str(), method.c_str());
  for (int i = 3; r >= 0 && i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "@as []") {
      r = sd_bus_message_append_strv(call, nullptr);
    } else if (arg == "@a(suu) []") {
      r = sd_bus_message_open_container(call, 'a', "(suu)");
      if (r >= 0) r = sd_bus_message_close_container(call);
    } else if (arg == "@a{sv} {}") {
      r = sd_bus_message_open_container(call, 'a', "{sv}");
      if (r >= 0) r = sd_bus_message_close_container(call);
    } else if (arg == "@FD@") {
      r = sd_bus_message_append(call, "h", 1);
    } else {
      std::fprintf(stderr, "matrix-fd-call: cannot pass argument '%s' (only '@as []', '@a(suu) []', '@a{sv} {}' and '@FD@')\n", argv[i]);
      return 2;
    }
  }
  if (r < 0) {
    std::fprintf(stderr, "matrix-fd-call: cannot build the call: %s\n", std::strerror(-r));
    return 1;
  }
  sd_bus_error error = SD_BUS_ERROR_NULL;
  sd_bus_message* reply = nullptr;
  r = sd_bus_call(bus, call, 60 * 1000000ull, &error, &reply);
  if (r < 0) {
    std::fprintf(stderr, "Error: GDBus.Error:%s: %s\n", error.name ? error.name : "(none)", error.message ? error.message : std::strerror(-r));
    return 1;
  }
  std::fprintf(stderr, "(reply %s)\n", sd_bus_message_get_signature(reply, 1));
  sd_bus_message_unref(reply);
  sd_bus_message_unref(call);
  sd_bus_unref(bus);
  return 0;
}
