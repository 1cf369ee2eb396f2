#pragma once
/// Myself: the credentials of the test process itself, for code that reads a tree with an
/// owner's eyes (changeset_scanner.h): a test reads as the user it runs as (nobody, or itself),
/// so taking that identity changes nothing.

#include <unistd.h>

#include "base/credentials.h"

namespace sandboxd::testing {

inline UserCredentials Myself() {
  UserCredentials me;
  me.uid = geteuid();
  me.gid = getegid();
  return me;
}

}  // namespace sandboxd::testing
