// sandboxd-job-starter: a job's first process, started ahead of its job and parked in the job's
// cgroups until the daemon tells it what to become (base/parked_spawn.h says why). Runs as
// root until then, with nothing open but /dev/null and its end of the daemon's socket (fd 3);
// it becomes the job's bwrap, as the owner, exactly as a child spawned at the job's start would.

#include "base/parked_spawn.h"

int main() { return sandboxd::RunParked(3); }
