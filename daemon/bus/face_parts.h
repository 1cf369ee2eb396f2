#pragma once
/// What each D-Bus face uses of the running daemon, by reference. The daemon
/// (service/service.h) owns every part and outlives the faces; a face is given the parts it
/// uses, never the daemon, so what a face can reach is written here. The structs are copied
/// into work that outlives a face (a job's end), which keeps only references to the daemon's
/// parts.

#include <memory>
#include <optional>
#include <string>

#include "base/user_slots.h"

namespace sandboxd {

class Authority;
class BusPeers;
class CallGate;
class CallerWatch;
class CommitJournal;
class CommitRunner;
class GarbageCollector;
class Layout;
class LimitControllers;
class ObjectTable;
class OutputBudget;
class Review;
class SandboxRegistry;
class SandboxRemoval;
class SightStore;
class Suspension;
struct Config;
struct DaemonOptions;

/// org.sandboxd.Sandbox1.Job (job_dbus.h).
struct JobFaceParts {
  CallGate& calls;
  Authority& authority;
  BusPeers& peers;  ///< who hears a job's signals
};

/// org.sandboxd.Sandbox1.Sandbox (sandbox_dbus.h).
struct SandboxFaceParts {
  CallGate& calls;
  Authority& authority;
  BusPeers& peers;
  CallerWatch& callers;  ///< ends a caller's jobs with its connection
  ObjectTable& objects;  ///< the jobs' objects
  SandboxRegistry& registry;
  Review& review;
  CommitRunner& commits;
  CommitJournal& journal;
  SightStore& sights;
  Suspension& suspension;
  const SandboxRemoval& removal;
  UserSlots& job_slots;  ///< jobs running per owner ([Limits] MaxRunningJobsPerUser=)
  std::shared_ptr<OutputBudget> output_budget;  ///< captured output per owner
  const std::optional<std::string>& job_cgroups;  ///< where jobs' cgroups go; none: pid namespaces only
  const LimitControllers& job_limits;
  const DaemonOptions& options;
  const Config& config;
  const Layout& layout;
  std::string hidden_file_stand_in;  ///< a root-owned mode-0000 file bound over hidden files (hidden_paths.h)
};

/// org.sandboxd.Sandbox1.Manager (manager_dbus.h).
struct ManagerFaceParts {
  CallGate& calls;
  Authority& authority;
  SandboxRegistry& registry;
  ObjectTable& objects;  ///< publishes a new sandbox
  GarbageCollector& garbage;
  const Config& config;
  const Layout& layout;
};

}  // namespace sandboxd
