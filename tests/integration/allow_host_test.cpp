// The network allowlist (issue 43), against a small internet of real servers (small_internet.h)
// and the real daemon, as unprivileged users: a job allowed some hosts reaches them by name and
// nothing else, whatever the program does (curl with and without proxy settings, python sockets
// by name and by address, its own DNS query, IPv6, UDP); the attacks of the issue (DNS
// rebinding onto the host, a TLS server name other than the host's, a CONNECT through the
// forwarder) get nowhere; refusals reach the owner; polkit and the administrator's list decide
// who may allow what; a sandbox's hosts survive a restart.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "harness.h"
#include "small_internet.h"

namespace sandboxd::it {
namespace {

/// What each probe of a job printed ("web=0"), by its tag.
std::string Probe(const std::string& output, const std::string& tag) {
  size_t at = output.find("\n" + tag + "=");
  if (at == std::string::npos) at = output.rfind(tag + "=", 0) == 0 ? 0 : std::string::npos;
  else ++at;
  if (at == std::string::npos) return "(not printed)";
  size_t start = at + tag.size() + 1, end = output.find('\n', start);
  return output.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// A DNS query as a program that resolves names itself sends one, to any address's port 53;
// prints the rcode and the first answer's address.
const char kOwnDnsQuery[] = R"PY(
import socket, struct, sys
def ask(name, server):
    query = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    query += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack(">HH", 1, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.sendto(query, (server, 53))
    answer = s.recv(512)
    address = ".".join(str(b) for b in answer[-4:]) if answer[7] else "none"
    return "%d/%s" % (answer[3] & 15, address)
print("dnsother=" + ask(sys.argv[1], sys.argv[3]))
print("dnsweb=" + ask(sys.argv[2], sys.argv[3]))
)PY";

const char kSocketProbes[] = R"PY(
import socket, ssl, sys
web, other_address = sys.argv[1], sys.argv[2]
def get(host, port, send):
    try:
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(send)
        data = s.recv(4096)
        return "ok:" + data.decode("latin-1").split("\r\n\r\n", 1)[-1].strip() if data else "closed"
    except OSError as error:
        return "error:%s" % error.__class__.__name__
print("pyname=" + get(web, 80, b"GET / HTTP/1.0\r\nHost: web\r\n\r\n"))
print("pyaddress=" + get(other_address, 80, b"GET / HTTP/1.0\r\n\r\n"))
print("pyport=" + get(other_address, 22, b"SSH-2.0-probe\r\n"))
# A server of the job's own on its loopback (a test suite's) still answers the job.
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen()
client = socket.create_connection(server.getsockname(), timeout=10)
server.accept()[0].sendall(b"own")
print("ownserver=" + client.recv(3).decode())
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("10.231.77.2", 9999))
    print("udp=sent")
except OSError as error:
    print("udp=error")
# As getent ahostsv4 and Node's dns.lookup with family 4 ask: IPv4 only if the host has an
# IPv4 address (AI_ADDRCONFIG), which 127.0.0.1 alone is not to glibc.
try:
    print("addrconfig=" + socket.getaddrinfo(web, 80, socket.AF_INET, socket.SOCK_STREAM, 0, socket.AI_ADDRCONFIG)[0][4][0])
except socket.gaierror as error:
    print("addrconfig=error:%s" % error)
try:
    print("v6lookup=%d" % len(socket.getaddrinfo(web, 80, socket.AF_INET6)))
except socket.gaierror:
    print("v6lookup=none")
)PY";

class AllowHostTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    internet_ = new SmallInternet();
    if (!internet_->Start(World().dir(), &why_)) {
      delete internet_;
      internet_ = nullptr;
    }
  }
  static void TearDownTestSuite() {
    delete internet_;
    internet_ = nullptr;
  }
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    ASSERT_NE(internet_, nullptr) << "the small internet could not be built: " << why_;
    internet_->ClearLog();
  }
  static SmallInternet& Internet() { return *internet_; }
  /// A script (python's, under `name`) where jobs can read it.
  static std::string Script(const std::string& name, const std::string& text) {
    std::string path = World().job_visible_dir() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  static nlohmann::json LastJob(const std::string& user, const std::string& id) {
    auto jobs = nlohmann::json::parse(World().Sandboxctl(user, {"--json", "jobs", id}).out, nullptr, false);
    return jobs.is_array() && !jobs.empty() ? jobs.back() : nlohmann::json();
  }

  static SmallInternet* internet_;
  static std::string why_;
};

SmallInternet* AllowHostTest::internet_ = nullptr;
std::string AllowHostTest::why_;

TEST_F(AllowHostTest, AJobReachesItsHostsByNameAndNothingElse) {
  Harness& w = World();
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", w.MakeProject(kAlice)}).out);
  const std::string curl = "curl -sS -m 10 ";
  const std::string script =
      curl + "http://" + kWebHost + "/; echo \"web=$?\"; " +
      curl + "--noproxy '*' http://" + kWebHost + "/; echo \"noproxy=$?\"; " +
      "https_proxy=http://10.231.77.3:80 " + curl + "--cacert " + Internet().certificate() + " https://" + kWebHost + "/; echo \"proxyvar=$?\"; " +
      curl + "--cacert " + Internet().certificate() + " https://" + kWebHost + "/; echo \"https=$?\"; " +
      curl + "http://" + kOtherHost + "/; echo \"other=$?\"; " +
      curl + "http://" + kWebAddress + "/; echo \"address=$?\"; " +
      curl + "http://" + kWebHost + ":8080/; echo \"port=$?\"; " +
      curl + "-g 'http://[fd77::2]/'; echo \"ipv6=$?\"; " +
      "python3 " + Script("own_dns.py", kOwnDnsQuery) + " " + kOtherHost + " " + kWebHost + " " + kOtherAddress + "; " +
      "python3 " + Script("socket_probes.py", kSocketProbes) + " " + kWebHost + " " + kOtherAddress;
  Result job = w.Sandboxctl(kAlice, {"run", "--allow-host", kWebHost, id, "--", "sh", "-c", script});
  const std::string out = "\n" + job.out;
  SCOPED_TRACE("job output:\n" + job.out + "\njob stderr:\n" + job.err + "\nservers saw:\n" + Internet().Log());
  EXPECT_EQ(Probe(out, "web"), "0");
  EXPECT_EQ(Probe(out, "noproxy"), "0");
  EXPECT_EQ(Probe(out, "https"), "0");
  EXPECT_NE(Probe(out, "proxyvar"), "0") << "a proxy setting of the job's reached another host";
  EXPECT_EQ(Probe(out, "other"), "6") << "another name resolved (curl 6: could not resolve)";
  EXPECT_NE(Probe(out, "address"), "0") << "an address typed in reached its server";
  EXPECT_NE(Probe(out, "port"), "0") << "another port of the allowed host was reached";
  EXPECT_NE(Probe(out, "ipv6"), "0") << "IPv6 went around the forwarder";
  EXPECT_EQ(Probe(out, "dnsother"), "3/none") << "a query of its own to another server was not answered NXDOMAIN by the job's name server";
  EXPECT_EQ(Probe(out, "dnsweb").rfind("0/198.18.", 0), 0u) << Probe(out, "dnsweb");
  EXPECT_EQ(Probe(out, "pyname"), "ok:web");
  EXPECT_EQ(Probe(out, "addrconfig").rfind("198.18.", 0), 0u) << "a lookup for the families the job has: " << Probe(out, "addrconfig");
  EXPECT_EQ(Probe(out, "pyaddress").rfind("ok", 0), std::string::npos) << Probe(out, "pyaddress");
  EXPECT_EQ(Probe(out, "pyport").rfind("ok", 0), std::string::npos) << Probe(out, "pyport");
  EXPECT_EQ(Probe(out, "ownserver"), "own") << "a server of the job's own on its loopback";
  EXPECT_EQ(Probe(out, "v6lookup"), "none");
  EXPECT_TRUE(Contains(job.out, "web\nweb=0")) << "the allowed host's own answer";
  EXPECT_TRUE(Contains(job.out, "secure\nhttps=0"));

  const std::string seen = Internet().Log();
  EXPECT_TRUE(Contains(seen, "request 10.231.77.2:80 GET / HTTP/1.1"));
  EXPECT_FALSE(Contains(seen, "10.231.77.3")) << "the other host was reached";
  EXPECT_FALSE(Contains(seen, ":8080")) << "another port was reached";
  EXPECT_FALSE(Contains(seen, "udp")) << "a datagram left the job";
  EXPECT_FALSE(Contains(seen, "fd77::2")) << "IPv6 left the job";

  // The owner hears of it: one line after the job's own output, and the job's status.
  EXPECT_TRUE(Contains(job.err, "sandboxd: refused ")) << job.err;
  EXPECT_TRUE(Contains(job.err, std::string(kOtherHost) + " (lookup): not allowed")) << job.err;
  auto last = LastJob(kAlice, id);
  ASSERT_TRUE(last.is_object());
  std::string refused = last["refused"].dump();
  EXPECT_TRUE(Contains(refused, R"({"host":"other.sbxtest.example","port":0,"reason":"not allowed"})")) << refused;
  EXPECT_TRUE(Contains(refused, R"({"host":"10.231.77.2","port":80,"reason":"is an address: a job reaches hosts by name"})")) << refused;
  EXPECT_TRUE(Contains(refused, R"({"host":"10.231.77.3","port":80,)")) << refused;
  // Ports no rule names are refused by name too, not only by the kernel's silence.
  EXPECT_TRUE(Contains(refused, R"({"host":"web.sbxtest.example","port":8080,"reason":"not allowed on this port"})")) << refused;
  EXPECT_TRUE(Contains(refused, R"({"host":"10.231.77.3","port":22,"reason":"is an address: a job reaches hosts by name"})")) << refused;
  EXPECT_GE(last["refused_count"].get<int>(), 3);
  EXPECT_TRUE(Contains(w.DaemonLog(), "refused other.sbxtest.example (lookup): not allowed"));
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST_F(AllowHostTest, RebindingAnotherServerNameAndConnectGetNowhere) {
  Harness& w = World();
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", w.MakeProject(kAlice)}).out);
  const std::string hosts = std::string(kLoopbackHost) + ":18080," + kHostAddressHost + ":18081," + kWebHost;
  const char probes[] = R"PY(
import socket, ssl, sys
web, other = sys.argv[1], sys.argv[2]
# A TLS server name other than the name connected to (the same address may serve it).
try:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    s = context.wrap_socket(socket.create_connection((web, 443), timeout=10), server_hostname=other)
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    print("sni=reached:" + s.recv(4096).decode("latin-1").split("\r\n\r\n", 1)[-1].strip())
except (OSError, ssl.SSLError) as error:
    print("sni=refused")
# A CONNECT to another host, sent to the allowed one through the forwarder.
s = socket.create_connection((web, 80), timeout=10)
s.sendall(("CONNECT %s:80 HTTP/1.1\r\nHost: %s:80\r\n\r\n" % (other, other)).encode())
s.recv(4096)
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
print("connect=" + s.recv(4096).decode("latin-1").replace("\r\n", " ").strip()[:40])
)PY";
  const std::string script = "curl -sS -m 10 http://" + std::string(kLoopbackHost) + ":18080/; echo \"loop=$?\"; " +
                             "curl -sS -m 10 http://" + kHostAddressHost + ":18081/; echo \"hostaddress=$?\"; " +
                             "python3 " + Script("attack_probes.py", probes) + " " + kWebHost + " " + kOtherHost;
  Result job = w.Sandboxctl(kAlice, {"run", "--allow-host", hosts, id, "--", "sh", "-c", script});
  const std::string out = "\n" + job.out;
  SCOPED_TRACE("job output:\n" + job.out + "\njob stderr:\n" + job.err + "\nservers saw:\n" + Internet().Log());
  EXPECT_NE(Probe(out, "loop"), "0") << "a name resolving to the host's loopback reached it";
  EXPECT_NE(Probe(out, "hostaddress"), "0") << "a name resolving to the host's own address reached it";
  EXPECT_EQ(Probe(out, "sni"), "refused");
  const std::string seen = Internet().Log();
  EXPECT_FALSE(Contains(seen, "127.0.0.1:18080")) << "rebinding reached the host's loopback";
  EXPECT_FALSE(Contains(seen, "10.231.77.1:18081")) << "rebinding reached the host's own address";
  EXPECT_FALSE(Contains(seen, "request 10.231.77.2:443")) << "a request with another server name reached the server";
  EXPECT_FALSE(Contains(seen, "10.231.77.3")) << "CONNECT reached another host";
  EXPECT_TRUE(Contains(seen, "request 10.231.77.2:80 CONNECT other.sbxtest.example:80")) << "the CONNECT went to the allowed host, as bytes";
  std::string refused = LastJob(kAlice, id)["refused"].dump();
  EXPECT_TRUE(Contains(refused, "resolves to a loopback address")) << refused;
  EXPECT_TRUE(Contains(refused, "resolves to an address of this host")) << refused;
  EXPECT_TRUE(Contains(refused, "asked it for TLS server name other.sbxtest.example")) << refused;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST_F(AllowHostTest, PolkitOrTheAdministratorsListDecidesWhoMayAllowWhat) {
  Harness& w = World();
  // bob may not have the network (test.rules): not even one host of it, unless the
  // administrator lists it.
  std::string id = Trim(w.Sandboxctl(kBob, {"create", w.MakeProject(kBob)}).out);
  const std::vector<std::string> fetch = {"--", "curl", "-sS", "-m", "10", std::string("http://") + kWebHost + "/"};
  auto run = [&](const std::string& hosts) {
    std::vector<std::string> args = {"run", "--allow-host", hosts, id};
    args.insert(args.end(), fetch.begin(), fetch.end());
    return w.Sandboxctl(kBob, args);
  };
  Result refused = run(kWebHost);
  EXPECT_EQ(refused.status, 1) << refused.out << refused.err;
  EXPECT_TRUE(Contains(refused.err, "org.sandboxd.sandbox1.network")) << refused.err;
  EXPECT_FALSE(Contains(Internet().Log(), "request")) << "a job ran before polkit said yes";

  std::ofstream(w.ConfigPath()) << "[Network]\nAllowedHosts=" << kWebHost << "\n";
  w.KillDaemon();
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  Result listed = run(kWebHost);
  Result other = run(kOtherHost);
  Result create_listed = w.Sandboxctl(kBob, {"create", "--allow-host", kWebHost, w.MakeProject(kBob)});
  std::remove(w.ConfigPath().c_str());
  w.KillDaemon();
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  EXPECT_EQ(listed.status, 0) << listed.err;
  EXPECT_EQ(listed.out, "web\n");
  EXPECT_EQ(other.status, 1) << "a host the administrator did not list was allowed without polkit: " << other.out;
  EXPECT_TRUE(Contains(other.err, "org.sandboxd.sandbox1.network")) << other.err;
  EXPECT_EQ(create_listed.status, 0) << create_listed.err;
  EXPECT_EQ(w.Sandboxctl(kBob, {"destroy", id}).status, 0);
  if (create_listed.status == 0) EXPECT_EQ(w.Sandboxctl(kBob, {"destroy", Trim(create_listed.out)}).status, 0);
}

TEST_F(AllowHostTest, ASandboxsHostsAreEveryJobsAndSurviveARestart) {
  Harness& w = World();
  Result made = w.Sandboxctl(kAlice, {"create", "--allow-host", std::string(kWebHost) + ",*.cdn.sbxtest.example:8443", w.MakeProject(kAlice)});
  ASSERT_EQ(made.status, 0) << made.err;
  std::string id = Trim(made.out);
  auto fetch = [&] { return w.Sandboxctl(kAlice, {"run", id, "--", "curl", "-sS", "-m", "10", std::string("http://") + kWebHost + "/"}); };
  EXPECT_EQ(fetch().out, "web\n");
  Result show = w.Sandboxctl(kAlice, {"show", id});
  EXPECT_TRUE(Contains(show.out, "Network: these hosts only")) << show.out;
  EXPECT_TRUE(Contains(show.out, "Allowed host: web.sbxtest.example\nAllowed host: *.cdn.sbxtest.example:8443")) << show.out;
  w.KillDaemon();
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  EXPECT_EQ(fetch().out, "web\n") << "after a restart";
  auto info = nlohmann::json::parse(w.Sandboxctl(kAlice, {"--json", "show", id}).out, nullptr, false);
  EXPECT_EQ(info["allow_hosts"], nlohmann::json::array({"web.sbxtest.example", "*.cdn.sbxtest.example:8443"}));
  // And a suspend to an archive and a resume from it.
  Result suspended = w.Sandboxctl(kAlice, {"suspend", id});
  ASSERT_EQ(suspended.status, 0) << suspended.err;
  Result resumed = w.Sandboxctl(kAlice, {"resume", id});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(fetch().out, "web\n") << "after a suspend and resume";
  info = nlohmann::json::parse(w.Sandboxctl(kAlice, {"--json", "show", id}).out, nullptr, false);
  EXPECT_EQ(info["allow_hosts"], nlohmann::json::array({"web.sbxtest.example", "*.cdn.sbxtest.example:8443"}));
  // A job's own hosts narrow the sandbox's: another one of them is refused.
  Result narrowed = w.Sandboxctl(kAlice, {"run", "--allow-host", kOtherHost, id, "--", "curl", "-sS", "-m", "10", std::string("http://") + kWebHost + "/"});
  EXPECT_NE(narrowed.status, 0) << narrowed.out;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// Each job has its own namespace and forwarder: a job running beside one allowed a host, in the
// same sandbox, reaches neither that host (by name, or by the address the other job was given
// for it) nor the other job's forwarder.
TEST_F(AllowHostTest, AJobDoesNotReachTheHostsOfAnotherJobBesideIt) {
  Harness& w = World();
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", w.MakeProject(kAlice)}).out);
  Result first = w.Sandboxctl(kAlice, {"run", "-d", "--allow-host", kWebHost, id, "--", "sh", "-c",
                                       "getent ahostsv4 " + std::string(kWebHost) + " | head -n 1 | cut -d ' ' -f 1; sleep 120"});
  ASSERT_EQ(first.status, 0) << first.err;
  const std::string first_job = Trim(first.out);
  std::string address;
  ASSERT_TRUE(WaitUntil([&] {
    address = Trim(w.Sandboxctl(kAlice, {"logs", first_job}).out);
    return !address.empty();
  })) << "the first job was not given an address for " << kWebHost;
  ASSERT_EQ(address.rfind("198.18.", 0), 0u) << address;
  const std::string script = "curl -sS -m 10 http://" + std::string(kWebHost) + "/; echo \"name=$?\"; " +
                             "curl -sS -m 10 http://" + address + "/; echo \"given=$?\"";
  Result second = w.Sandboxctl(kAlice, {"run", "--allow-host", kOtherHost, id, "--", "sh", "-c", script});
  SCOPED_TRACE("second job's output:\n" + second.out + "\nstderr:\n" + second.err + "\nservers saw:\n" + Internet().Log());
  const std::string out = "\n" + second.out;
  EXPECT_EQ(Probe(out, "name"), "6") << "the other job's host resolved";
  EXPECT_NE(Probe(out, "given"), "0") << "the address the other job was given reached its host";
  EXPECT_FALSE(Contains(Internet().Log(), "request 10.231.77.2")) << "the other job's host was reached";
  std::string refused = LastJob(kAlice, id)["refused"].dump();
  EXPECT_TRUE(Contains(refused, R"({"host":")" + address + R"(","port":80,"reason":"is an address: a job reaches hosts by name"})")) << refused;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"cancel", first_job}).status, 0);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// A job whose network cannot be set up never runs, and its caller hears why (not only the
// journal). Here the forwarder is missing beside the helpers.
TEST_F(AllowHostTest, AJobWhoseNetworkCannotBeSetUpDoesNotRunAndSaysWhy) {
  Harness& w = World();
  const std::filesystem::path built = std::filesystem::path(SANDBOXD_HELPER_BIN).parent_path();
  const std::filesystem::path helpers = w.dir() + "/helpers-without-forwarder";
  std::filesystem::remove_all(helpers);
  std::filesystem::create_directories(helpers);
  for (const auto& entry : std::filesystem::directory_iterator(built))
    if (entry.is_regular_file() && entry.path().filename().string().rfind("sandboxd-", 0) == 0 &&
        entry.path().filename() != "sandboxd-net-forwarder")
      std::filesystem::create_symlink(entry.path(), helpers / entry.path().filename());
  w.KillDaemon();
  ASSERT_TRUE(w.StartDaemon({}, {"SANDBOXD_HELPER=" + (helpers / std::filesystem::path(SANDBOXD_HELPER_BIN).filename()).string()})) << w.DaemonLog();
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", w.MakeProject(kAlice)}).out);
  Result job = w.Sandboxctl(kAlice, {"run", "--allow-host", kWebHost, id, "--", "sh", "-c", "echo ran; touch ran"});
  Result changes = w.Sandboxctl(kAlice, {"changes", id});
  std::string listed = LastJob(kAlice, id).value("failure", "");
  w.KillDaemon();
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  EXPECT_NE(job.status, 0);
  EXPECT_EQ(job.out, "") << "the command ran without its network";
  EXPECT_TRUE(Contains(job.err, "could not be set up: its network could not be set up: cannot start ")) << job.err;
  EXPECT_TRUE(Contains(job.err, "sandboxd-net-forwarder")) << job.err;
  EXPECT_FALSE(Contains(changes.out, "ran")) << changes.out;
  EXPECT_TRUE(Contains(listed, "its network could not be set up")) << "jobs --json: " << listed;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST_F(AllowHostTest, BadHostsAndTheWholeNetworkBesideThemAreRefused) {
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  Result address = w.Sandboxctl(kAlice, {"create", "--allow-host", "10.0.0.1", project});
  EXPECT_EQ(address.status, 1);
  EXPECT_TRUE(Contains(address.err, "allowed host 10.0.0.1 is an address")) << address.err;
  Result both = w.Sandboxctl(kAlice, {"create", "--network", "--allow-host", kWebHost, project});
  EXPECT_EQ(both.status, 2) << both.err;
  EXPECT_TRUE(Contains(both.err, "exclude each other")) << both.err;
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", project}).out);
  Result wildcard = w.Sandboxctl(kAlice, {"run", "--allow-host", "*.org", id, "--", "true"});
  EXPECT_EQ(wildcard.status, 1);
  EXPECT_TRUE(Contains(wildcard.err, "covers a whole top-level domain")) << wildcard.err;
  // On the bus too, with the D-Bus error's name: both options at once.
  Result bus = w.Gdbus(kAlice, "/org/sandboxd/Sandbox1/sandbox/" + id, "org.sandboxd.Sandbox1.Sandbox.Run",
                       {"['true']", "''", "@a{ss} {}", "@a{sh} {}", "{'network': <true>, 'allow_hosts': <['" + std::string(kWebHost) + "']>}", "uint64 0"});
  EXPECT_NE(bus.status, 0);
  EXPECT_TRUE(Contains(bus.err, "InvalidArgument")) << bus.err;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST_F(AllowHostTest, AnOfflineJobThatFailsALookupHearsWhatGivesItTheNetwork) {
  Harness& w = World();
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", w.MakeProject(kAlice)}).out);
  // A name the host's resolver must ask a name server for, and one /etc/hosts has.
  Result lookup = w.Sandboxctl(kAlice, {"run", id, "--", "curl", "-sS", "-m", "10", "http://nothing.sbxtest.invalid/"});
  EXPECT_NE(lookup.status, 0);
  EXPECT_TRUE(Contains(lookup.err, "to reach the network (a name lookup or a connection): the job has none; run --allow-host")) << lookup.err;
  Result connect = w.Sandboxctl(kAlice, {"run", id, "--", "curl", "-sS", "-m", "10", std::string("http://") + kWebHost + "/"});
  EXPECT_NE(connect.status, 0);
  EXPECT_TRUE(Contains(connect.err, "the job has none")) << connect.err;
  EXPECT_GE(LastJob(kAlice, id).value("no_route_count", 0), 1) << "jobs --json says it too";
  // A job that failed without reaching for the network hears nothing of it.
  Result offline = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "exit 3"});
  EXPECT_EQ(offline.status, 3);
  EXPECT_FALSE(Contains(offline.err, "network")) << offline.err;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
