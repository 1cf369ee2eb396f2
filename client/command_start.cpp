#include "command_start.h"

namespace sandboxctl {
namespace {

bool IsOption(const std::string& arg) { return arg.size() > 1 && arg[0] == '-'; }

/// Whether `arg` (an option of `verb` or of its parent) is followed by its value as the next
/// argument: it takes one and was not written as --name=value.
bool TakesNextArgument(const CLI::App& verb, const std::string& arg) {
  if (arg.find('=') != std::string::npos) return false;
  const CLI::Option* option = verb.get_option_no_throw(arg);
  return option != nullptr && option->get_items_expected_max() > 0;
}

}  // namespace

std::vector<std::string> MarkCommandStart(const CLI::App& app, const std::map<std::string, int>& commands,
                                          std::vector<std::string> args) {
  size_t at = 1;
  while (at < args.size() && IsOption(args[at])) ++at;  // sandboxctl's own options are flags
  if (at >= args.size()) return args;
  auto verb_name = commands.find(args[at]);
  if (verb_name == commands.end()) return args;
  auto named = app.get_subcommands([&](const CLI::App* verb) { return verb->get_name() == verb_name->first; });
  if (named.empty()) return args;
  const CLI::App* verb = named.front();
  int operands = 0;
  for (++at; at < args.size(); ++at) {
    const std::string& arg = args[at];
    if (arg == "--") return args;
    if (IsOption(arg)) {
      if (TakesNextArgument(*verb, arg)) ++at;
      continue;
    }
    if (operands++ < verb_name->second) continue;
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(at), "--");
    return args;
  }
  return args;
}

}  // namespace sandboxctl
