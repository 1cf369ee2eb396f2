#pragma once
/// Where a verb's command begins. `run SANDBOX CMD ARG...`, `shell SANDBOX [CMD ARG...]` and
/// `try [OPTION...] CMD ARG...` treat everything from the command's first word on as the
/// command's, as docker run, systemd-run and sudo do: `run calc make --version` runs make and
/// never prints sandboxctl's version. A "--" before the command is still allowed.

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

namespace sandboxctl {

/// `args` (argv, the program's name first) with "--" put before the first word of the command
/// of the verb used, when the caller wrote none. `commands` maps each verb that takes a command
/// to the number of its operands before it (run and shell: the sandbox). Which options take a
/// value is `app`'s to say; an option it does not know is left where it is, for the parser to
/// refuse.
std::vector<std::string> MarkCommandStart(const CLI::App& app, const std::map<std::string, int>& commands,
                                          std::vector<std::string> args);

}  // namespace sandboxctl
