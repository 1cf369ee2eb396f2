#include "operations/suspend_operation.h"

#include "lifecycle/suspension.h"
#include "operations/decide_operation.h"
#include "sandbox/sandbox.h"

namespace sandboxd {

uint64_t SuspendSandbox(const OperationParts& parts, Suspension& suspension, Sandbox& sandbox) {
  ExclusiveOperation exclusive(sandbox.gate(), "suspend");
  // An archive keeps decisions by what it keeps of an entry, not its bytes: one bound to bytes
  // is checked now, while they are there (no job runs).
  CheckBoundDecisions(parts, sandbox);
  return suspension.Suspend(sandbox);
}

void ResumeSandbox(Suspension& suspension, Sandbox& sandbox) {
  ExclusiveOperation exclusive(sandbox.gate(), "resume");
  suspension.Resume(sandbox);
}

}  // namespace sandboxd
