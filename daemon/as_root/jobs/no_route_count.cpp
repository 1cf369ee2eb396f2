#include "jobs/no_route_count.h"

#include <sched.h>

#include <charconv>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace sandboxd {
namespace {

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t at = 0;
  while (at < line.size()) {
    size_t start = line.find_first_not_of(" \t", at);
    if (start == std::string_view::npos) break;
    size_t end = line.find_first_of(" \t", start);
    if (end == std::string_view::npos) end = line.size();
    words.push_back(line.substr(start, end - start));
    at = end;
  }
  return words;
}

uint64_t Number(std::string_view text) {
  uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

std::string ReadAll(const char* path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

uint64_t NoRouteCountOf(std::string_view snmp, std::string_view snmp6) {
  uint64_t count = 0;
  // /proc/net/snmp: a line of names then a line of values for each protocol ("Ip: ...").
  std::vector<std::string_view> names;
  for (size_t at = 0; at < snmp.size();) {
    size_t end = snmp.find('\n', at);
    if (end == std::string_view::npos) end = snmp.size();
    std::string_view line = snmp.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with("Ip: ")) continue;
    auto words = Words(line.substr(4));
    if (names.empty()) {
      names = words;
      continue;
    }
    for (size_t i = 0; i < names.size() && i < words.size(); ++i)
      if (names[i] == "OutNoRoutes") count += Number(words[i]);
    break;
  }
  // /proc/net/snmp6: "NAME VALUE" a line.
  for (size_t at = 0; at < snmp6.size();) {
    size_t end = snmp6.find('\n', at);
    if (end == std::string_view::npos) end = snmp6.size();
    auto words = Words(snmp6.substr(at, end - at));
    at = end + 1;
    if (words.size() == 2 && words[0] == "Ip6OutNoRoutes") count += Number(words[1]);
  }
  return count;
}

uint64_t NoRouteCount(int netns) {
  uint64_t count = 0;
  // A thread of its own, which ends in the job's namespace (setns moves only the caller).
  std::thread([&] {
    if (setns(netns, CLONE_NEWNET) != 0) return;
    count = NoRouteCountOf(ReadAll("/proc/thread-self/net/snmp"), ReadAll("/proc/thread-self/net/snmp6"));
  }).join();
  return count;
}

}  // namespace sandboxd
