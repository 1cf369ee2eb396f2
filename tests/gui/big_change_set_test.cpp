// A big change set in sandboxd-review (issue 45): its first rows show at once and the window
// keeps answering while the rest arrive. In the suite a few thousand changes check that it works;
// bench/review-app runs it at 10,000 and 100,000 (SANDBOXD_GUI_CHANGES) and prints the figures:
// when the first rows showed, when all had, how long the window took to answer meanwhile, and
// the app's memory, beside `sandboxctl changes` of the same set.

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <fstream>
#include <map>
#include <thread>

#include "review_app.h"

namespace sandboxd::it {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

/// A line of /proc/PID/status in KiB (VmRSS, VmHWM); -1 when it cannot be read.
long StatusKib(pid_t pid, const std::string& key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(key + ":", 0) == 0) return std::atol(line.c_str() + key.size() + 1);
  return -1;
}

/// The files that take most of a process's resident memory (/proc/PID/smaps), biggest first:
/// "libLLVM-15.so.1 30.2 MiB, ...".
std::string BiggestFiles(pid_t pid, size_t count) {
  std::ifstream smaps("/proc/" + std::to_string(pid) + "/smaps");
  std::map<std::string, long> kib;
  std::string mapping;
  for (std::string line; std::getline(smaps, line);) {
    if (line.empty()) continue;
    if (std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') < line.find(' ')) {
      const size_t slash = line.find('/');
      mapping = slash == std::string::npos ? "" : line.substr(line.rfind('/') + 1);
    } else if (line.rfind("Rss:", 0) == 0 && !mapping.empty()) {
      kib[mapping] += std::atol(line.c_str() + 4);
    }
  }
  std::vector<std::pair<long, std::string>> biggest;
  for (const auto& [name, size] : kib) biggest.emplace_back(size, name);
  std::sort(biggest.rbegin(), biggest.rend());
  std::string text;
  for (size_t i = 0; i < biggest.size() && i < count; ++i) {
    char figure[64];
    std::snprintf(figure, sizeof figure, " %.1f MiB", biggest[i].first / 1024.0);
    text += (i ? ", " : "") + biggest[i].second + figure;
  }
  return text;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

TEST(BigChangeSetTest, TheFirstRowsShowAtOnceAndTheWindowAnswersWhileTheRestArrive) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  const char* asked = std::getenv("SANDBOXD_GUI_CHANGES");
  const long files = asked ? std::atol(asked) : 3000;
  ASSERT_GT(files, 0);
  const std::string project = w.MakeProject(kAlice);
  const std::string id = CreateSandbox(kAlice, "gui-big", project);
  ASSERT_FALSE(id.empty());
  Result made = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "mkdir many && cd many && seq -f 'f%07g' 1 " + std::to_string(files) + " | xargs touch"},
                             {.timeout = std::chrono::seconds(900)});
  ASSERT_EQ(made.status, 0) << made.err;
  const long changes = files + 1;  // and the directory

  // The baseline: the same listing on the command line.
  const auto cli_start = Clock::now();
  Result listed = w.Sandboxctl(kAlice, {"changes", id}, {.timeout = std::chrono::seconds(300)});
  const double cli_ms = MsSince(cli_start);
  ASSERT_EQ(listed.status, 0);
  ASSERT_EQ(static_cast<long>(Lines(listed.out).size()), changes);

  // bench/review-app also measures the app without GL (GDK_DEBUG=gl-disable): on a desktop
  // without a GPU, GTK maps Mesa's software GL (libLLVM) into every window, used or not.
  std::vector<std::string> app_env;
  if (const char* extra = std::getenv("SANDBOXD_GUI_APP_ENV"); extra && *extra) app_env.push_back(extra);
  ReviewApp app(kAlice, app_env);
  ASSERT_EQ(app.Start(), "");
  Accessible row = app.WaitForRow("gui-big");
  ASSERT_TRUE(row) << app.State();
  Accessible commit = WaitFor([&] { return app.Button("Commit"); });
  Accessible list = Find(app.app(), ATSPI_ROLE_LIST, "Changes");
  Accessible count = FindContaining(app.app(), ATSPI_ROLE_LABEL, "0 changes");
  ASSERT_TRUE(commit && list && count) << app.State();
  const long idle_kib = StatusKib(app.pid(), "VmRSS");
  const long idle_anon_kib = StatusKib(app.pid(), "RssAnon");
  // The baseline: an empty GTK 4 window in the same desktop (tests/gui/gui_probe.cpp).
  long probe_kib = -1, probe_anon_kib = -1;
  {
    GuiSession probe_session(kBob);
    std::string why;
    ASSERT_TRUE(probe_session.Start(why)) << why;
    AtspiDriver probe_driver(probe_session.a11y_bus_address());
    const pid_t probe = probe_session.StartApp({SANDBOXD_GUI_PROBE_BIN}, app_env);
    ASSERT_TRUE(probe_driver.WaitForApp("gui-probe", probe)) << probe_session.AppLog();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    probe_kib = StatusKib(probe, "VmRSS");
    probe_anon_kib = StatusKib(probe, "RssAnon");
  }

  // From the click on the sandbox to its first change row, then to the count of all of them;
  // meanwhile the window is asked for a button's name over and over: each answer comes from its
  // main loop, between the pieces of the listing. (One call each, not a walk of the tree: the
  // asking must not be what keeps the window busy.)
  const auto selected = Clock::now();
  ASSERT_EQ(SelectRow(row), "") << app.State();
  while (Children(list).empty() && MsSince(selected) < 60'000) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double first_ms = MsSince(selected);
  ASSERT_FALSE(Children(list).empty()) << app.State();
  const std::string complete = std::to_string(changes) + " changes";
  std::vector<double> answers;
  double all_ms = -1;
  while (MsSince(selected) < 600'000) {
    const auto asked_at = Clock::now();
    const std::string name = Name(commit);
    answers.push_back(MsSince(asked_at));
    ASSERT_EQ(name, "Commit") << "the window did not answer" << app.State();
    if (Name(count) == complete) {
      all_ms = MsSince(selected);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(all_ms, 0) << "the count never reached " << complete << app.State();
  const long listed_kib = StatusKib(app.pid(), "VmRSS");
  const long listed_anon_kib = StatusKib(app.pid(), "RssAnon");
  const long peak_kib = StatusKib(app.pid(), "VmHWM");
  // The last row is there too: the filter finds it among all.
  Accessible filter = Find(app.app(), ATSPI_ROLE_ENTRY, "Filter changes");
  ASSERT_TRUE(filter) << app.State();
  char last[32];
  std::snprintf(last, sizeof last, "f%07ld", files);
  const auto filtered_at = Clock::now();
  EXPECT_EQ(SetText(filter, last), "");
  EXPECT_TRUE(app.WaitForRow(std::string("A many/") + last)) << app.State();
  const double filter_ms = MsSince(filtered_at);
  EXPECT_EQ(app.Shot("review-app-big"), "");

  std::printf(
      "\nsandboxd-review, %ld changes%s%s\n"
      "  first rows shown           %8.0f ms after the sandbox was selected\n"
      "  all rows listed            %8.0f ms   (sandboxctl changes: %.0f ms)\n"
      "  window answers meanwhile   median %.1f ms, slowest %.1f ms, %zu asked\n"
      "  filter to the last row     %8.0f ms\n"
      "  app memory (RSS)           %8.1f MiB idle, %.1f MiB listed, peak %.1f MiB\n"
      "    of which its own (anon)  %8.1f MiB idle, %.1f MiB listed (the rest: files mapped, shared with other apps)\n"
      "    biggest files mapped     %s\n"
      "  an empty GTK 4 window      %8.1f MiB RSS, %.1f MiB its own (gui-probe, the same desktop)\n",
      changes, app_env.empty() ? "" : ", ", app_env.empty() ? "" : app_env.front().c_str(), first_ms, all_ms, cli_ms, Median(answers), *std::max_element(answers.begin(), answers.end()), answers.size(), filter_ms,
      idle_kib / 1024.0, listed_kib / 1024.0, peak_kib / 1024.0, idle_anon_kib / 1024.0, listed_anon_kib / 1024.0, BiggestFiles(app.pid(), 4).c_str(),
      probe_kib / 1024.0, probe_anon_kib / 1024.0);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}, {.timeout = std::chrono::seconds(300)}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
