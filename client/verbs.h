#pragma once
/// The implementation of each sandboxctl verb. Each returns the process exit status; D-Bus
/// errors propagate as sdbus::Error and are printed by main.

#include <string>
#include <vector>

#include "context.h"

namespace sandboxctl {

struct CreateArgs {
  std::string name;
  std::vector<std::string> dirs;
};
struct RunArgs {
  std::string sandbox;
  std::string cwd;
  std::vector<std::string> env;
  std::vector<std::string> command;
};

int VerbCreate(Context& ctx, const CreateArgs& args);
int VerbList(Context& ctx);
int VerbShow(Context& ctx, const std::string& sandbox);
int VerbRun(Context& ctx, const RunArgs& args);
int VerbChanges(Context& ctx, const std::string& sandbox);
int VerbDiff(Context& ctx, const std::string& sandbox, const std::vector<std::string>& selectors);
int VerbCommit(Context& ctx, const std::string& sandbox, bool all);
int VerbDiscard(Context& ctx, const std::string& sandbox);
int VerbDestroy(Context& ctx, const std::string& sandbox);

}  // namespace sandboxctl
