// The authorization matrix (issue 16): every method and property of the interface XML, called
// by every kind of caller (the owner, another user, a user polkit allows to manage others'
// sandboxes, a process inside one of the owner's jobs, root), answers as
// tests/security/authorization_matrix.txt says. The members are read from dbus/*.xml, so a
// member added without a row (or a row left for a member that went) fails the test: nobody adds
// a method without deciding who may call it.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attack_tools.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCarol = "sbxtest-carol";
constexpr const char* kManagerPath = "/org/sandboxd/Sandbox1";
const std::vector<std::string> kCallers = {"owner", "other", "manager", "job", "root"};
const std::set<std::string> kAnswers = {"ok", "AccessDenied", "InteractiveAuthorizationRequired", "NotFound", "InvalidState",
                                        "InvalidArgument", "InvalidPath", "Busy", "Conflict", "QuotaExceeded", "Overlap"};

/// A member of an interface: "org.sandboxd.Sandbox1.Sandbox.Commit".
struct Member {
  std::string interface;
  std::string name;
  bool property = false;
  std::string Full() const { return interface + "." + name; }
};

/// Every method and property of dbus/*.xml (signals are not called).
std::map<std::string, Member> MembersOfTheXml() {
  std::map<std::string, Member> members;
  std::regex tag(R"re(<(interface|method|property)\s+name="([^"]+)")re");
  for (const auto& entry : fs::directory_iterator(std::string(SANDBOXD_SOURCE_DIR) + "/dbus")) {
    if (entry.path().extension() != ".xml") continue;
    std::string text = ReadWhole(entry.path());
    std::string interface;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), tag); it != std::sregex_iterator(); ++it) {
      std::string kind = (*it)[1], name = (*it)[2];
      if (kind == "interface") {
        interface = name;
        continue;
      }
      Member member{interface, name, kind == "property"};
      members[member.Full()] = member;
    }
  }
  return members;
}

/// One row of the table.
struct Row {
  int line = 0;
  std::string member;
  std::vector<std::string> args;
  std::map<std::string, std::string> expected;  ///< caller → answer
};

std::string Strip(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator)) parts.push_back(Strip(part));
  if (!text.empty() && text.back() == separator) parts.push_back("");
  return parts;
}

/// The table, or a failure naming the line that is wrong.
std::vector<Row> ReadTable(std::string& error) {
  std::string path = std::string(SANDBOXD_SOURCE_DIR) + "/tests/security/authorization_matrix.txt";
  std::ifstream in(path);
  if (!in) {
    error = "cannot read " + path;
    return {};
  }
  std::vector<Row> rows;
  std::vector<std::string> columns;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string text = Strip(line);
    if (text.empty() || text[0] == '#') continue;
    auto cells = Split(text, '|');
    std::string where = path + ":" + std::to_string(number) + ": ";
    if (columns.empty()) {
      columns = cells;
      std::vector<std::string> wanted = {"member", "arguments"};
      wanted.insert(wanted.end(), kCallers.begin(), kCallers.end());
      std::vector<std::string> sorted_columns(columns.begin(), columns.end()), sorted_wanted = wanted;
      std::sort(sorted_columns.begin(), sorted_columns.end());
      std::sort(sorted_wanted.begin(), sorted_wanted.end());
      if (columns.size() < 2 || columns[0] != "member" || columns[1] != "arguments" || sorted_columns != sorted_wanted) {
        error = where + "the header must name the columns member | arguments | owner | other | manager | job | root";
        return {};
      }
      continue;
    }
    if (cells.size() != columns.size()) {
      error = where + "a row has " + std::to_string(columns.size()) + " columns, this one " + std::to_string(cells.size());
      return {};
    }
    Row row;
    row.line = number;
    row.member = cells[0];
    if (cells[1] != "-")
      for (const auto& arg : Split(cells[1], ';')) row.args.push_back(arg);
    for (size_t i = 2; i < cells.size(); ++i) {
      if (!kAnswers.count(cells[i])) {
        error = where + "'" + cells[i] + "' is no answer (ok, or an error name's last component such as AccessDenied)";
        return {};
      }
      row.expected[columns[i]] = cells[i];
    }
    rows.push_back(row);
  }
  if (columns.empty()) error = path + ": no header line";
  return rows;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return text;
}

/// "ok", or the last component of the D-Bus error's name as gdbus (or matrix-fd-call) prints
/// it, or a description of whatever else happened.
std::string AnswerOf(const Result& r) {
  if (r.status == 0) return "ok";
  static const std::regex name(R"(GDBus\.Error:([A-Za-z0-9_.]+):)");
  std::smatch match;
  if (std::regex_search(r.err, match, name)) {
    std::string full = match[1];
    return full.substr(full.rfind('.') + 1);
  }
  return "(exit " + std::to_string(r.status) + ": " + r.err + r.out + ")";
}

std::string FirstObjectPath(const std::string& text) {
  static const std::regex path(R"('(/org/sandboxd/Sandbox1/[a-z]+/[0-9a-z]+)')");
  std::smatch match;
  return std::regex_search(text, match, path) ? std::string(match[1]) : "";
}

TEST(AuthorizationMatrixTest, TheTableHasOneRowPerMemberOfTheInterfaceXml) {
  auto members = MembersOfTheXml();
  ASSERT_GE(members.size(), 20u) << "dbus/*.xml read from " << SANDBOXD_SOURCE_DIR;
  std::string error;
  auto rows = ReadTable(error);
  ASSERT_TRUE(error.empty()) << error;
  std::set<std::string> seen;
  for (const auto& row : rows) {
    EXPECT_TRUE(seen.insert(row.member).second) << "line " << row.line << ": a second row for " << row.member;
    EXPECT_TRUE(members.count(row.member)) << "line " << row.line << ": a row for " << row.member
                                           << ", which no interface in dbus/*.xml has (renamed or removed?)";
  }
  for (const auto& [name, member] : members)
    EXPECT_TRUE(seen.count(name)) << (member.property ? "property " : "method ") << name
                                  << " has no row in tests/security/authorization_matrix.txt: decide who may call it";
}

/// Makes the third test user (the harness makes alice and bob) as the harness does.
bool EnsureCarol() {
  if (getpwnam(kCarol) != nullptr) return true;
  return std::system((std::string("useradd -m -s /bin/sh ") + kCarol + " >/dev/null 2>&1").c_str()) == 0 && getpwnam(kCarol) != nullptr;
}

class AuthorizationMatrixWorldTest : public ::testing::Test {
 protected:
  /// Bob's sandbox over a fresh project with one change, made by a finished job whose output
  /// was captured: the object of a Sandbox or Job cell.
  struct Fixture {
    std::string id;
    std::string project;
    std::string sandbox_path;
    std::string job_path;
  };

  Fixture MakeFixture() {
    Fixture f;
    f.project = World().MakeProject(kBob);
    Result created = World().Sandboxctl(kBob, {"create", f.project});
    EXPECT_EQ(created.status, 0) << created.err;
    f.id = Trim(created.out);
    f.sandbox_path = std::string(kManagerPath) + "/sandbox/" + f.id;
    Result run = World().Gdbus(kBob, f.sandbox_path, "org.sandboxd.Sandbox1.Sandbox.Run",
                               {"['sh', '-c', 'echo new > new.txt; echo done']", "''", "@a{ss} {}", "@a{sh} {}", "@a{sv} {}", "uint64 0"});
    EXPECT_EQ(run.status, 0) << run.err;
    f.job_path = FirstObjectPath(run.out);
    Result wait = World().Gdbus(kBob, f.job_path, "org.sandboxd.Sandbox1.Job.Wait");
    EXPECT_EQ(wait.status, 0) << wait.err;
    return f;
  }

  void Forget(const std::string& sandbox_path) {
    // Root may destroy any sandbox; one a cell destroyed already answers NotFound or is gone.
    World().Gdbus("root", sandbox_path, "org.sandboxd.Sandbox1.Sandbox.Destroy");
  }

  /// The argv of the call `row` makes on `path`, with the placeholders filled in.
  std::vector<std::string> CallArgv(const Member& member, const Row& row, const std::string& path,
                                    const std::map<std::string, std::string>& values) {
    std::vector<std::string> args;
    bool fd = false;
    for (const auto& arg : row.args) {
      std::string filled = arg;
      for (const auto& [key, value] : values) filled = Replace(filled, key, value);
      if (filled.find("@FD@") != std::string::npos) fd = true;
      args.push_back(filled);
    }
    if (fd) {
      std::vector<std::string> argv = {MATRIX_FD_CALL_BIN, path, member.Full()};
      argv.insert(argv.end(), args.begin(), args.end());
      return argv;
    }
    std::vector<std::string> argv = {"gdbus", "call", "--system", "--dest", "org.sandboxd.Sandbox1", "--object-path", path, "--method"};
    if (member.property) {
      argv.insert(argv.end(), {"org.freedesktop.DBus.Properties.Get", member.interface, member.name});
    } else {
      argv.push_back(member.Full());
      argv.insert(argv.end(), args.begin(), args.end());
    }
    return argv;
  }

  /// `argv` as `caller`; the job caller runs it inside a job of `fixture` (bob's), reaching the
  /// bus through the socket a job can reach (World().JobReachableBusAddress()).
  Result CallAs(const std::string& caller, const std::vector<std::string>& argv, const std::string& job_sandbox) {
    if (caller == "job") {
      // Through sh -c: sandboxctl's option parser (CLI11) takes an argument written [..] as a
      // list and drops its brackets, even after "--", so gdbus's "['x']" would arrive as "'x'".
      std::string script = "exec";
      for (const auto& arg : argv) script += " '" + Replace(arg, "'", "'\\''") + "'";
      return World().Sandboxctl(kBob, {"run", "--allow-socket", World().JobReachableBusSocket(), "--env",
                                       "DBUS_SYSTEM_BUS_ADDRESS=" + World().JobReachableBusAddress(), job_sandbox,
                                       "--", "sh", "-c", script});
    }
    return World().RunAs(UserOf(caller), argv);
  }

  static std::string UserOf(const std::string& caller) {
    if (caller == "owner" || caller == "job") return kBob;
    if (caller == "other") return kCarol;
    if (caller == "manager") return kAlice;
    return "root";
  }
};

TEST_F(AuthorizationMatrixWorldTest, EveryCallerGetsTheAnswerOfTheMatrix) {
  SANDBOXD_REQUIRE_WORLD();
  ASSERT_TRUE(EnsureCarol()) << "cannot create the test user " << kCarol;
  auto members = MembersOfTheXml();
  std::string error;
  auto rows = ReadTable(error);
  ASSERT_TRUE(error.empty()) << error;
  auto started = std::chrono::steady_clock::now();

  // Bob's sandbox that Manager cells look up, and whose job is the job caller of Manager cells.
  Fixture bystander = MakeFixture();
  ASSERT_FALSE(bystander.id.empty());
  std::vector<std::string> created;  // by CreateSandbox cells, destroyed at the end
  int cells = 0;
  for (const auto& row : rows) {
    if (!members.count(row.member)) continue;  // the other test names it
    const Member& member = members[row.member];
    for (const auto& caller : kCallers) {
      const std::string& expected = row.expected.at(caller);
      bool on_manager = member.interface == "org.sandboxd.Sandbox1.Manager";
      // A fresh sandbox per Sandbox or Job cell: no cell sees what another did (a destroy, a
      // commit, a suspend).
      Fixture fixture = on_manager ? bystander : MakeFixture();
      if (!on_manager && fixture.job_path.empty()) {
        ADD_FAILURE() << row.member << " as " << caller << ": no fixture";
        continue;
      }
      std::string path = on_manager                                      ? kManagerPath
                         : member.interface == "org.sandboxd.Sandbox1.Job" ? fixture.job_path
                                                                           : fixture.sandbox_path;
      bool wants_project = std::any_of(row.args.begin(), row.args.end(), [](const std::string& a) { return a.find("@PROJECT@") != std::string::npos; });
      std::string project = wants_project ? World().MakeProject(UserOf(caller)) : "";
      auto argv = CallArgv(member, row, path, {{"@PROJECT@", project}, {"@SANDBOX_ID@", bystander.id}});
      Result r = CallAs(caller, argv, fixture.id);
      ++cells;
      std::string answer = AnswerOf(r);
      EXPECT_EQ(answer, expected) << row.member << " (line " << row.line << ") as " << caller << " (" << UserOf(caller)
                                  << "): " << r.err;
      if (member.property) {
        // GetAll reads the same getters: the same answer.
        std::vector<std::string> all = {"gdbus", "call", "--system", "--dest", "org.sandboxd.Sandbox1", "--object-path", path,
                                        "--method", "org.freedesktop.DBus.Properties.GetAll", member.interface};
        Result r_all = CallAs(caller, all, fixture.id);
        EXPECT_EQ(AnswerOf(r_all), expected) << row.member << " (GetAll) as " << caller << ": " << r_all.err;
      }
      if (row.member == "org.sandboxd.Sandbox1.Manager.CreateSandbox" && answer == "ok") created.push_back(FirstObjectPath(r.out));
      if (row.member == "org.sandboxd.Sandbox1.Sandbox.Commit" && caller == "manager" && answer == "ok") {
        // A manager's commit writes as the owner, never as the manager (nor as root).
        struct stat st;
        ASSERT_EQ(lstat((fixture.project + "/new.txt").c_str(), &st), 0) << "the manager's commit did not land";
        EXPECT_EQ(st.st_uid, UidOf(kBob)) << "a manager's commit must write with the owner's credentials";
      }
      if (answer != "ok" && !on_manager && expected != "ok") {
        // A refusal changed nothing: the change is still there, pending.
        Result changes = World().Sandboxctl(kBob, {"changes", fixture.id});
        EXPECT_EQ(changes.out, "A new.txt\n") << row.member << " as " << caller << " was refused but changed the sandbox";
      }
      if (!on_manager) Forget(fixture.sandbox_path);
    }
  }
  for (const auto& path : created)
    if (!path.empty()) Forget(path);
  Forget(bystander.sandbox_path);

  // Every act of a manager on another user's sandbox is in the log, naming who and which.
  std::string log = World().DaemonLog();
  std::string alice = std::to_string(UidOf(kAlice));
  EXPECT_NE(log.find("get-info by uid " + alice), std::string::npos) << "no log line for the manager's GetInfo";
  EXPECT_NE(log.find("commit by uid " + alice), std::string::npos) << "no log line for the manager's Commit";
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started).count();
  std::cout << "[ matrix   ] " << cells << " cells in " << seconds << " s\n";
}

}  // namespace
}  // namespace sandboxd::it
