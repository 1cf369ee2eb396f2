// `sandboxctl jobs [SANDBOX]`, `logs JOB [-f]` and `cancel JOB`: a sandbox's jobs as systemctl
// and docker show theirs. And the rule destroy and discard keep: a sandbox whose jobs still run
// is refused with the jobs named, unless --cancel-jobs ends them first.

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "object_paths.h"
#include "local_time.h"
#include "proxies.h"
#include "quote_path.h"
#include "text_lines.h"
#include "verbs.h"

namespace sandboxctl {
namespace {

using ListedJob = sdbus::Struct<std::string, sdbus::ObjectPath, std::vector<std::string>, uint64_t, std::string, int32_t, std::string>;

std::vector<ListedJob> JobsOf(Context& ctx, const std::string& sandbox_path) {
  return SandboxProxy(ctx.Bus(), sandbox_path).ListJobs();
}

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& word : argv) line += (line.empty() ? "" : " ") + word;
  return sandboxd::api::EscapeControlBytes(line);
}

/// "running", or how it ended: "exited 0", "cancelled 137".
std::string JobState(const ListedJob& job) {
  return job.get<4>() == "running" ? "running" : job.get<6>() + " " + std::to_string(job.get<5>());
}

/// A job's times and what sandboxd kept of its output (Job.GetStatus).
struct JobTimes {
  uint64_t started_usec = 0, ended_usec = 0;
  std::string captured;
  bool output_truncated = false;
  nlohmann::json refused = nlohmann::json::array();  ///< [{host, port, reason}]
  uint32_t refused_count = 0;
  uint64_t no_route_count = 0;
  std::string failure;  ///< what sandboxd could not set up for a job that never ran
};

JobTimes TimesOf(Context& ctx, const ListedJob& job) {
  auto status = JobProxy(ctx.Bus(), job.get<1>()).GetStatus();
  JobTimes times;
  times.started_usec = job.get<3>();
  if (status.count("ended_usec")) times.ended_usec = status["ended_usec"].get<uint64_t>();
  if (status.count("captured")) times.captured = status["captured"].get<std::string>();
  if (status.count("output_truncated")) times.output_truncated = status["output_truncated"].get<bool>();
  if (status.count("refused"))
    for (const auto& entry : status["refused"].get<std::vector<sdbus::Struct<std::string, uint16_t, std::string>>>())
      times.refused.push_back({{"host", entry.get<0>()}, {"port", entry.get<1>()}, {"reason", entry.get<2>()}});
  if (status.count("refused_count")) times.refused_count = status["refused_count"].get<uint32_t>();
  if (status.count("no_route_count")) times.no_route_count = status["no_route_count"].get<uint64_t>();
  if (status.count("failure")) times.failure = status["failure"].get<std::string>();
  return times;
}

/// "0.4s", "12s", "3m04s", "2h05m".
std::string Duration(uint64_t usec) {
  const uint64_t seconds = usec / 1000000;
  char text[32];
  if (seconds < 10)
    snprintf(text, sizeof text, "%.1fs", static_cast<double>(usec) / 1e6);
  else if (seconds < 60)
    snprintf(text, sizeof text, "%llus", static_cast<unsigned long long>(seconds));
  else if (seconds < 3600)
    snprintf(text, sizeof text, "%llum%02llus", static_cast<unsigned long long>(seconds / 60), static_cast<unsigned long long>(seconds % 60));
  else
    snprintf(text, sizeof text, "%lluh%02llum", static_cast<unsigned long long>(seconds / 3600),
             static_cast<unsigned long long>(seconds / 60 % 60));
  return text;
}

uint64_t NowUsec() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace

std::string JobPathOf(const std::string& id) {
  if (id.empty() || id.size() > 64 || id.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw UsageError{"'" + id + "' is not a job id (sandboxctl jobs lists them)"};
  return sandboxd::api::JobPath(id);
}

void ThrowAboutJob(const sdbus::Error& error, const std::string& id) {
  // The bus says only "unknown object" of a path with no job behind it.
  if (error.getName() == "org.freedesktop.DBus.Error.UnknownObject")
    throw std::runtime_error("no job " + id + " is known (sandboxctl jobs lists the running ones and the latest finished)");
  throw error;
}

int VerbJobs(Context& ctx, const std::string& id_or_name) {
  std::vector<std::pair<std::string, std::string>> sandboxes;  // name, object
  if (!id_or_name.empty()) {
    sandboxes.emplace_back(id_or_name, ctx.ResolveSandbox(id_or_name));
  } else {
    for (const auto& entry : ManagerProxy(ctx.Bus()).ListSandboxes()) sandboxes.emplace_back(entry.get<1>(), entry.get<5>());
  }
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::pair<std::string, ListedJob>> rows;
  for (const auto& [name, path] : sandboxes)
    for (auto& job : JobsOf(ctx, path)) rows.emplace_back(name, std::move(job));
  std::vector<JobTimes> times;
  for (const auto& row : rows) times.push_back(TimesOf(ctx, row.second));
  if (ctx.json) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& [name, job] = rows[i];
      out.push_back({{"id", job.get<0>()}, {"sandbox", name}, {"argv", job.get<2>()}, {"started_usec", job.get<3>()},
                     {"ended_usec", times[i].ended_usec}, {"state", job.get<4>()}, {"exit_status", job.get<5>()},
                     {"reason", job.get<6>()}, {"captured", times[i].captured}, {"output_truncated", times[i].output_truncated},
                     {"refused", times[i].refused}, {"refused_count", times[i].refused_count},
                     {"no_route_count", times[i].no_route_count}, {"failure", times[i].failure}});
    }
    std::cout << ctx.Json(out) << "\n";
    return 0;
  }
  if (rows.empty()) {
    std::cerr << "No jobs.\n";
    return 0;
  }
  size_t name_width = 7;
  for (const auto& row : rows) name_width = std::max(name_width, row.first.size());
  std::cout << PadRight("JOB", 16) << "  " << PadRight("SANDBOX", name_width) << "  " << PadRight("STATE", 14) << "  " << PadRight("STARTED", 19)
            << "  " << PadRight("ENDED", 19) << "  " << PadRight("DURATION", 8) << "  COMMAND\n";
  const uint64_t now = NowUsec();
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [name, job] = rows[i];
    const JobTimes& t = times[i];
    const bool ended = t.ended_usec != 0;
    const uint64_t until = ended ? t.ended_usec : std::max(now, t.started_usec);
    std::cout << PadRight(job.get<0>(), 16) << "  " << PadRight(name, name_width) << "  " << PadRight(JobState(job), 14) << "  "
              << LocalTime(job.get<3>()) << "  " << PadRight(ended ? LocalTime(t.ended_usec) : "-", 19) << "  "
              << PadRight(Duration(until - std::min(until, t.started_usec)), 8) << "  " << CommandLine(job.get<2>()) << "\n";
  }
  return 0;
}

int VerbLogs(Context& ctx, const std::string& job_id, bool follow) try {
  JobProxy job(ctx.Bus(), JobPathOf(job_id));
  auto status = job.GetStatus();
  // A job run with its caller's own streams (sandboxctl run) has no output here to print.
  if (status.count("captured") && status["captured"].get<std::string>().empty())
    throw std::runtime_error("job " + job_id + " wrote to the streams of whoever started it (sandboxctl run passes its own): sandboxd kept none of its output");
  uint64_t offset = 0;
  for (;;) {
    // Read before looking at the state: output that came before the end is then all read
    // by the time the end is seen.
    bool running = follow && job.GetStatus()["state"].get<std::string>() == "running";
    for (;;) {
      std::vector<uint8_t> data = job.ReadOutput(offset, 1 << 20);
      if (data.empty()) break;
      std::cout.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
      offset += data.size();
    }
    std::cout.flush();
    if (!running) {
      if (job.GetStatus()["output_truncated"].get<bool>())
        std::cerr << "sandboxctl: sandboxd kept only the first " << status["output_cap"].get<uint64_t>() << " bytes of job " << job_id
                  << "'s output; the rest was dropped\n";
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
} catch (const sdbus::Error& e) {
  ThrowAboutJob(e, job_id);
}

int VerbCancel(Context& ctx, const std::string& job_id) try {
  JobProxy job(ctx.Bus(), JobPathOf(job_id));
  auto status = job.GetStatus();
  if (status["state"].get<std::string>() != "running") {
    std::cerr << "Job " << job_id << " had already ended (" << status["reason"].get<std::string>() << ", status "
              << status["exit_status"].get<int32_t>() << "): nothing was cancelled.\n";
    return 0;
  }
  job.Cancel();
  return 0;
} catch (const sdbus::Error& e) {
  ThrowAboutJob(e, job_id);
}

void EndRunningJobs(Context& ctx, const std::string& sandbox_path, const std::string& id_or_name, const std::string& verb,
                    bool cancel_jobs) {
  std::vector<ListedJob> running;
  for (auto& job : JobsOf(ctx, sandbox_path))
    if (job.get<4>() == "running") running.push_back(std::move(job));
  if (running.empty()) return;
  if (!cancel_jobs) {
    std::string named;
    for (const auto& job : running) named += (named.empty() ? "" : ", ") + job.get<0>() + " (" + CommandLine(job.get<2>()) + ")";
    // A refusal (status 1), not bad usage: the command was right, the sandbox is busy.
    throw std::runtime_error("sandbox " + id_or_name + " has " + std::to_string(running.size()) + " running job(s): " + named +
                             "; cancel them (sandboxctl cancel JOB), or " + verb + " with --cancel-jobs");
  }
  for (const auto& job : running) {
    JobProxy proxy(ctx.Bus(), job.get<1>());
    proxy.Cancel();
    proxy.raw().callMethod("Wait").onInterface(sandboxd::api::kJobInterface).withTimeout(std::chrono::minutes(1));
  }
}

}  // namespace sandboxctl
