#pragma once
/// What reading a sandbox's change set and comparing it with the live tree needs of the sandbox
/// (Sandbox, sandbox.h, is one): who it is, the doors to its two trees, its change set as a
/// stream, and the waits that make what is read whole. The readers (changes/, review/, the
/// sights, the reports of operations/) take this and not the Sandbox: they cannot mount,
/// unmount, gate, suspend or end it, and they build without its header.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/credentials.h"
#include "model/change.h"
#include "sandbox/changeset_scanner.h"
#include "unique_fd.h"

namespace sandboxd {

class SandboxReader {
 public:
  virtual ~SandboxReader() = default;

  virtual const std::string& id() const = 0;
  virtual uid_t owner() const = 0;
  virtual const std::vector<std::string>& roots() const = 0;
  /// When it was made (µs): the live tree agreed with it then.
  virtual int64_t created_usec() const = 0;
  /// "N/" for root N when the sandbox has more than one root, else "".
  virtual std::string PathPrefix(size_t root) const = 0;

  /// The live root, opened without following symlinks and refused when it is not the directory
  /// the sandbox was made over (Sandbox::OpenLiveRoot says how, and how an exclusive operation
  /// keeps one directory per root).
  virtual UniqueFd OpenLiveRoot(size_t root) const = 0;
  virtual UniqueFd OpenUpper(size_t root) const = 0;
  /// Whose eyes the live tree is read with: the owner's (DESIGN, "Security model").
  virtual UserCredentials LiveIdentity() const = 0;

  /// Root `root`'s change set without holding it: PrepareStream links up its names and returns
  /// the deletions of files and symlinks (the halves of renames); StreamChanges then hands out
  /// one change at a time, StreamChangesTimed with each change's upper ctime
  /// (changeset_scanner.h).
  virtual std::vector<Change> PrepareStream(size_t root) const = 0;
  virtual void StreamChanges(size_t root, const ChangeVisitor& visit) const = 0;
  virtual void StreamChangesTimed(size_t root, const TimedChangeVisitor& visit) const = 0;

  /// Throws Error(kInvalidState) unless the sandbox's layers can be read now (it is active, not
  /// suspended, destroyed or broken), naming `verb` ("read the changes of"...).
  virtual void CheckActive(const std::string& verb) const = 0;
  /// Return once no job's end is being taken in (WaitSettledThrough: once the sights of every
  /// change up to `key`, in stream order, are stored); Error(kBusy) naming `verb` after 10
  /// minutes.
  virtual void WaitSettled(const std::string& verb) const = 0;
  virtual void WaitSettledThrough(const std::pair<size_t, std::string>& key, const std::string& verb) const = 0;
  /// Jobs running now: one may rewrite a file while it is read.
  virtual unsigned running_jobs() const = 0;
};

}  // namespace sandboxd
