#include "jobs/bus_sockets.h"

#include <cstdlib>

namespace sandboxd {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Unescape(const std::string& value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '%' && i + 2 < value.size() && HexValue(value[i + 1]) >= 0 && HexValue(value[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(value[i + 1]) * 16 + HexValue(value[i + 2])));
      i += 2;
    } else {
      out.push_back(value[i]);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> UnixSocketPaths(const std::string& address) {
  std::vector<std::string> paths;
  size_t start = 0;
  while (start <= address.size()) {
    size_t end = address.find(';', start);
    if (end == std::string::npos) end = address.size();
    std::string entry = address.substr(start, end - start);
    if (entry.rfind("unix:", 0) == 0) {
      std::string keys = entry.substr(5);
      size_t at = 0;
      while (at <= keys.size()) {
        size_t comma = keys.find(',', at);
        if (comma == std::string::npos) comma = keys.size();
        std::string pair = keys.substr(at, comma - at);
        if (pair.rfind("path=", 0) == 0 && pair.size() > 5) paths.push_back(Unescape(pair.substr(5)));
        at = comma + 1;
      }
    }
    start = end + 1;
  }
  return paths;
}

std::vector<std::string> BusPathsHiddenFromJobs(bool user_mode) {
  std::vector<std::string> paths = {"/run/dbus"};
  const char* address = std::getenv(user_mode ? "DBUS_SESSION_BUS_ADDRESS" : "DBUS_SYSTEM_BUS_ADDRESS");
  if (address != nullptr)
    for (const auto& path : UnixSocketPaths(address))
      if (!path.empty() && path[0] == '/') paths.push_back(path);
  return paths;
}

}  // namespace sandboxd
