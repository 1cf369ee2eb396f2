// The sanitizers' runtime options, compiled into every program of a sanitized build (meson
// -Db_sanitize=address,undefined, as tests/sanitize builds) and into no other. Compiled in
// rather than read from ASAN_OPTIONS because the helpers sandboxd starts get a cleaned
// environment (helper_client.cpp) and jobs the user's: an option set in the test's environment
// would never reach them. An environment variable still overrides these, option by option.

// Called by the runtimes before anything else runs: no instrumentation, no allocation.
#define SANDBOXD_SANITIZER_HOOK extern "C" __attribute__((no_sanitize("address", "undefined"), used, visibility("default")))

SANDBOXD_SANITIZER_HOOK const char* __asan_default_options() {
  // halt_on_error: the first report ends the program with status 1, so that a helper's report
  // becomes its failure, which sandboxd passes on with the helper's stderr (the report) in the
  // error: a helper's stderr is read only when it fails. detect_leaks (the default, said so):
  // tried and working both in the daemon (root, and not dumpable once it has spawned a child)
  // and in helpers that dropped privileges to the user, since LeakSanitizer's tracer has the
  // credentials of what it traces (for the daemon, root with CAP_SYS_PTRACE: without it
  // LeakSanitizer ends the daemon with a fatal error, which fails loudly too); a leak ends the
  // program with status 23 at its exit.
  return "halt_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1";
}

SANDBOXD_SANITIZER_HOOK const char* __ubsan_default_options() {
  // Undefined behaviour is reported and then continued from by default; halting makes it a
  // failure that shows, for the same reason as above.
  return "halt_on_error=1:print_stacktrace=1";
}

