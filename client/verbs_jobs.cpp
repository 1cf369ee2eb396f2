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

std::string LocalTime(uint64_t usec) {
  time_t seconds = static_cast<time_t>(usec / 1000000);
  tm local{};
  localtime_r(&seconds, &local);
  char text[32];
  strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

/// "running", or how it ended: "exited 0", "cancelled 137".
std::string JobState(const ListedJob& job) {
  return job.get<4>() == "running" ? "running" : job.get<6>() + " " + std::to_string(job.get<5>());
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
  if (ctx.json) {
    for (const auto& [name, job] : rows)
      out.push_back({{"id", job.get<0>()}, {"sandbox", name}, {"argv", job.get<2>()}, {"started_usec", job.get<3>()},
                     {"state", job.get<4>()}, {"exit_status", job.get<5>()}, {"reason", job.get<6>()}});
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
            << "  COMMAND\n";
  for (const auto& [name, job] : rows)
    std::cout << PadRight(job.get<0>(), 16) << "  " << PadRight(name, name_width) << "  " << PadRight(JobState(job), 14) << "  "
              << LocalTime(job.get<3>()) << "  " << CommandLine(job.get<2>()) << "\n";
  return 0;
}

int VerbLogs(Context& ctx, const std::string& job_id, bool follow) try {
  JobProxy job(ctx.Bus(), JobPathOf(job_id));
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
    if (!running) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
} catch (const sdbus::Error& e) {
  ThrowAboutJob(e, job_id);
}

int VerbCancel(Context& ctx, const std::string& job_id) try {
  JobProxy(ctx.Bus(), JobPathOf(job_id)).Cancel();
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
