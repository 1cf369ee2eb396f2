// sandboxd-net-forwarder: the forwarder of one job allowed some hosts (net_forwarder/forwarder.h).
// Started by sandboxd as the job's owner, in the host's network namespace, with sockets the
// daemon made in the job's:
//
//   sandboxd-net-forwarder --dns-fd FD --report-fd FD --refusing-fd FD --listen FD:PORT [--listen FD:PORT]...
//
// Its standard input is the daemon's pipe: first the job's host rules on one line (as
// FormatHostRules writes them, so that other users cannot read them in ps), then nothing until
// the job has ended, when the daemon closes it and the forwarder exits. Refusals go to the
// report fd, a JSON line each (network/refusal.h).

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include "net_forwarder/forwarder.h"

namespace {

constexpr size_t kMaxRulesLine = 64 * 1024;

bool ParseFd(std::string_view text, int* fd) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *fd);
  return error == std::errc() && end == text.data() + text.size() && *fd > 2;
}

/// The first line of standard input, read a byte at a time so nothing after it is taken.
bool ReadRulesLine(std::string* line) {
  char byte;
  while (line->size() <= kMaxRulesLine) {
    ssize_t got = read(0, &byte, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    if (byte == '\n') return true;
    line->push_back(byte);
  }
  return false;
}

int Usage() {
  std::fputs("usage: sandboxd-net-forwarder --dns-fd FD --report-fd FD --refusing-fd FD --listen FD:PORT... (started by sandboxd)\n", stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sandboxd::network;
  ForwarderSetup setup;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (i + 1 >= argc) return Usage();
    std::string_view value = argv[++i];
    if (arg == "--dns-fd") {
      if (!ParseFd(value, &setup.dns_fd)) return Usage();
    } else if (arg == "--report-fd") {
      if (!ParseFd(value, &setup.report_fd)) return Usage();
    } else if (arg == "--refusing-fd") {
      if (!ParseFd(value, &setup.refusing_fd)) return Usage();
    } else if (arg == "--listen") {
      size_t colon = value.find(':');
      int fd = -1, port = 0;
      if (colon == std::string_view::npos || !ParseFd(value.substr(0, colon), &fd)) return Usage();
      std::string_view digits = value.substr(colon + 1);
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
      if (error != std::errc() || end != digits.data() + digits.size() || port < 1 || port > 65535) return Usage();
      setup.listeners.emplace_back(fd, static_cast<uint16_t>(port));
    } else {
      return Usage();
    }
  }
  if (setup.dns_fd < 0 || setup.report_fd < 0 || setup.refusing_fd < 0) return Usage();
  // A write to a connection the job closed must fail, not end the forwarder.
  signal(SIGPIPE, SIG_IGN);
  for (const auto& [fd, port] : setup.listeners) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  fcntl(setup.refusing_fd, F_SETFL, fcntl(setup.refusing_fd, F_GETFL) | O_NONBLOCK);
  fcntl(setup.report_fd, F_SETFL, fcntl(setup.report_fd, F_GETFL) | O_NONBLOCK);
  setup.life_fd = 0;
  try {
    std::string line;
    if (!ReadRulesLine(&line)) {
      std::fputs("sandboxd-net-forwarder: no host rules on standard input\n", stderr);
      return 1;
    }
    setup.rules = ParseHostRules(line);
    return RunForwarder(setup);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "sandboxd-net-forwarder: %s\n", error.what());
    return 1;
  }
}
