#pragma once
/// Suspend and resume of a sandbox, whole, as a face calls them: each takes the sandbox's
/// exclusive hold itself (a job or another operation that runs keeps the sandbox as it is, and
/// the refusal names it), and a suspend checks the decisions bound to bytes while the bytes are
/// there to check. The caller has authorized the verb.

#include <cstdint>

#include "operations/operation_parts.h"

namespace sandboxd {

class Sandbox;
class Suspension;

/// Archives the sandbox's layers and frees them (Suspension::Suspend); returns the bytes
/// archived.
uint64_t SuspendSandbox(const OperationParts& parts, Suspension& suspension, Sandbox& sandbox);

/// Restores the layers of a suspended sandbox and mounts it again (Suspension::Resume).
void ResumeSandbox(Suspension& suspension, Sandbox& sandbox);

}  // namespace sandboxd
