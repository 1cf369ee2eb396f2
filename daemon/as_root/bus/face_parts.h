#pragma once
/// What each D-Bus face uses of the running daemon, by reference. The daemon
/// (service/service.h) owns every part and outlives the faces; a face is given the parts it
/// uses, never the daemon, so what a face can reach is written here. Work that outlives a face
/// (a job's end: JobWatchers; the trash's emptying) takes references to the daemon's parts,
/// never the face.

#include <memory>
#include <optional>
#include <string>

#include "operations/operation_parts.h"

namespace sandboxd {

class Authority;
class BusPeers;
class CallGate;
class CallerWatch;
class GarbageCollector;
class JobLauncher;
class Layout;
class ObjectTable;
class SandboxAnnouncer;
class SandboxRegistry;
class SandboxRemoval;
class Suspension;
struct Config;

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
  OperationParts operations;  ///< commit, undo, discard, the change list, the diff, decisions
  Suspension& suspension;
  const SandboxRemoval& removal;
  JobLauncher& jobs;  ///< assembles and starts jobs, and takes in what they changed
  const SandboxAnnouncer& announcer;  ///< the Manager's signals of state changes
};

/// org.sandboxd.Sandbox1.Manager (manager_dbus.h).
struct ManagerFaceParts {
  CallGate& calls;
  Authority& authority;
  SandboxRegistry& registry;
  ObjectTable& objects;  ///< publishes a new sandbox
  GarbageCollector& garbage;
  SandboxAnnouncer& announcer;  ///< sends through the Manager's object while it lives
  const Config& config;
  const Layout& layout;
};

}  // namespace sandboxd
