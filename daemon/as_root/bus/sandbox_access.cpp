#include "bus/sandbox_access.h"

#include "api.h"
#include "base/errors.h"
#include "bus/polkit.h"

namespace sandboxd {

Access AuthorizeAct(Authority& authority, const Caller& caller, const ActTarget& target, const std::string& verb,
                    bool allow_interactive) {
  if (caller.uid == target.owner) return Access::kOwner;
  if (caller.IsRoot()) return Access::kRoot;
  // Anyone else acts on another user's sandbox, reading included (its paths and contents are
  // the owner's business): only with polkit's manage action, asked with what is at stake so
  // that a rule or an admin's dialog can judge this sandbox and this verb.
  std::string roots;
  for (const auto& root : target.roots) roots += (roots.empty() ? "" : " ") + root;
  try {
    authority.Check(caller, api::kActionManage,
                    {{"sandbox", target.sandbox_id}, {"owner", std::to_string(target.owner)}, {"roots", roots}, {"verb", verb}},
                    allow_interactive, verb + " " + target.object + " of uid " + std::to_string(target.owner));
  } catch (const Error& e) {
    // The refusal names the object (polkit's message names the verb and the action).
    if (e.code() == Code::kAccessDenied)
      throw Error(Code::kAccessDenied, target.object + " belongs to another user: " + e.what());
    throw;
  }
  return Access::kManager;
}

}  // namespace sandboxd
