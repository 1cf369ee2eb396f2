#include "small_internet.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "harness.h"

namespace sandboxd::it {
namespace {

constexpr const char* kNamespace = "sbxtest-inet";
constexpr const char* kHostsMarker = "# sbxtest small internet";

/// /etc/hosts without the lines a SmallInternet added (a crashed run's too).
void RemoveHostsLines() {
  std::ifstream in("/etc/hosts");
  std::string kept, line;
  while (std::getline(in, line))
    if (line.find(kHostsMarker) == std::string::npos) kept += line + "\n";
  in.close();
  // In place (the file may be a bind mount, as in a container): never replaced by a rename.
  std::ofstream out("/etc/hosts", std::ios::trunc);
  out << kept;
}

}  // namespace

bool SmallInternet::Start(const std::string& dir, std::string* why) {
  dir_ = dir + "/internet";
  System("rm -rf '" + dir_ + "' && mkdir -p '" + dir_ + "' && chmod 755 '" + dir_ + "'");
  // A run that crashed may have left its namespace and names behind.
  System(std::string("ip netns del ") + kNamespace + " 2>/dev/null");
  RemoveHostsLines();
  const std::string certificate = dir_ + "/web.pem", key = dir_ + "/web.key";
  if (System("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=" + std::string(kWebHost) + " -addext subjectAltName=DNS:" + kWebHost +
            " -keyout '" + key + "' -out '" + certificate + "' >'" + dir_ + "/openssl.log' 2>&1") != 0) {
    *why = "openssl could not make the test certificate: " + ReadWhole(dir_ + "/openssl.log");
    return false;
  }
  // Where jobs can read it (their /tmp is their own).
  certificate_ = World().job_visible_dir() + "/small-internet.pem";
  System("cp '" + certificate + "' '" + certificate_ + "' && chmod 644 '" + certificate_ + "'");
  const std::string ns = kNamespace;
  const std::string setup = "set -e; ip netns add " + ns + "; ip link add sbxti0 type veth peer name sbxti1; ip link set sbxti1 netns " + ns +
                            "; ip addr add 10.231.77.1/24 dev sbxti0; ip addr add fd77::1/64 dev sbxti0 nodad; ip link set sbxti0 up;"
                            " ip -n " + ns + " addr add 10.231.77.2/24 dev sbxti1; ip -n " + ns + " addr add 10.231.77.3/24 dev sbxti1;"
                            " ip -n " + ns + " addr add fd77::2/64 dev sbxti1 nodad; ip -n " + ns + " link set sbxti1 up; ip -n " + ns + " link set lo up";
  namespace_added_ = true;
  if (System("(" + setup + ") >'" + dir_ + "/ip.log' 2>&1") != 0) {
    *why = "the test's network namespace could not be made: " + ReadWhole(dir_ + "/ip.log");
    return false;
  }
  const std::string script = std::string(SANDBOXD_SOURCE_DIR) + "/tests/integration/data/small_internet.py";
  internet_ = SpawnRoot({"ip", "netns", "exec", ns, "python3", script, dir_ + "/servers.log", certificate, key}, {}, dir_ + "/internet.out");
  host_listeners_ = SpawnRoot({"python3", script, "--host", dir_ + "/host.log", "127.0.0.1:18080", "10.231.77.1:18081"}, {}, dir_ + "/host.out");
  bool ready = WaitUntil([&] {
    return ReadWhole(dir_ + "/servers.log").find("ready") != std::string::npos && ReadWhole(dir_ + "/host.log").find("ready") != std::string::npos;
  }, std::chrono::seconds(20));
  if (!ready) {
    *why = "the test's servers did not start: " + ReadWhole(dir_ + "/internet.out") + ReadWhole(dir_ + "/host.out");
    return false;
  }
  std::ofstream hosts("/etc/hosts", std::ios::app);
  hosts << kWebAddress << " " << kWebHost << " " << kHostsMarker << "\n"
        << kOtherAddress << " " << kOtherHost << " " << kHostsMarker << "\n"
        << "127.0.0.1 " << kLoopbackHost << " " << kHostsMarker << "\n"
        << "10.231.77.1 " << kHostAddressHost << " " << kHostsMarker << "\n";
  hosts_added_ = true;
  ClearLog();
  return true;
}

SmallInternet::~SmallInternet() {
  StopProcess(internet_);
  StopProcess(host_listeners_);
  if (hosts_added_) RemoveHostsLines();
  if (namespace_added_) System(std::string("ip netns del ") + kNamespace + " 2>/dev/null; ip link del sbxti0 2>/dev/null");
}

std::string SmallInternet::Log() const { return ReadWhole(dir_ + "/servers.log") + ReadWhole(dir_ + "/host.log"); }

void SmallInternet::ClearLog() const {
  std::ofstream(dir_ + "/servers.log", std::ios::trunc);
  std::ofstream(dir_ + "/host.log", std::ios::trunc);
}

}  // namespace sandboxd::it
