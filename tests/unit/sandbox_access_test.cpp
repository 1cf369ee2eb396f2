// Who may act on a sandbox (sandbox_access.h): the owner and root without asking, anyone else
// only with polkit's manage action, asked with the sandbox, its owner, roots and the verb.

#include "bus/sandbox_access.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "bus/polkit.h"

namespace sandboxd {
namespace {

/// Records each question and answers as told.
class FakeAuthority final : public Authority {
 public:
  void Check(const Caller& caller, const std::string& action, const std::map<std::string, std::string>& details,
             bool allow_interactive, const std::string& what) override {
    ++asked;
    last_caller = caller;
    last_action = action;
    last_details = details;
    last_interactive = allow_interactive;
    last_what = what;
    if (answer != Code::kFailed) throw Error(answer, "not authorized to " + what);
  }
  Code answer = Code::kFailed;  ///< kFailed: authorized
  int asked = 0;
  Caller last_caller;
  std::string last_action;
  std::map<std::string, std::string> last_details;
  bool last_interactive = false;
  std::string last_what;
};

ActTarget Target() { return {"3fa2", 1001, {"/home/bob/p", "/home/bob/q"}, "sandbox 3fa2"}; }

Caller CallerWithUid(uid_t uid) {
  Caller caller;
  caller.sender = ":1.7";
  caller.uid = uid;
  return caller;
}

TEST(SandboxAccessTest, TheOwnerAndRootAreNotAsked) {
  FakeAuthority authority;
  authority.answer = Code::kAccessDenied;
  EXPECT_EQ(AuthorizeAct(authority, CallerWithUid(1001), Target(), "commit", true), Access::kOwner);
  EXPECT_EQ(AuthorizeAct(authority, CallerWithUid(0), Target(), "commit", true), Access::kRoot);
  EXPECT_EQ(authority.asked, 0);
}

TEST(SandboxAccessTest, AnotherUserIsAskedAboutManageWithWhatIsAtStake) {
  FakeAuthority authority;
  EXPECT_EQ(AuthorizeAct(authority, CallerWithUid(1002), Target(), "diff", false), Access::kManager);
  EXPECT_EQ(authority.asked, 1);
  EXPECT_EQ(authority.last_action, "org.sandboxd.sandbox1.manage");
  EXPECT_EQ(authority.last_caller.sender, ":1.7");
  EXPECT_EQ(authority.last_details.at("sandbox"), "3fa2");
  EXPECT_EQ(authority.last_details.at("owner"), "1001");
  EXPECT_EQ(authority.last_details.at("roots"), "/home/bob/p /home/bob/q");
  EXPECT_EQ(authority.last_details.at("verb"), "diff");
  EXPECT_FALSE(authority.last_interactive);
  AuthorizeAct(authority, CallerWithUid(1002), Target(), "commit", true);
  EXPECT_TRUE(authority.last_interactive) << "interactive exactly when the method's flags allow it";
}

TEST(SandboxAccessTest, ARefusalNamesTheObjectAndKeepsItsKind) {
  FakeAuthority authority;
  authority.answer = Code::kAccessDenied;
  try {
    AuthorizeAct(authority, CallerWithUid(1002), Target(), "destroy", false);
    FAIL() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kAccessDenied);
    EXPECT_NE(std::string(e.what()).find("sandbox 3fa2 belongs to another user"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("destroy"), std::string::npos) << e.what();
  }
  authority.answer = Code::kInteractiveAuthorizationRequired;
  try {
    AuthorizeAct(authority, CallerWithUid(1002), Target(), "destroy", false);
    FAIL() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInteractiveAuthorizationRequired);
  }
}

}  // namespace
}  // namespace sandboxd
