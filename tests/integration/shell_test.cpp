// `sandboxctl shell`: a login shell in the sandbox on a terminal of its own, as a person uses
// it: commands run inside, the window size follows the outer terminal, the shell has job
// control, and its exit status is sandboxctl's. Nothing of it is left afterwards.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "conversation.h"
#include "harness.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

using ShellTest = AliceSandboxTest;

TEST_F(ShellTest, AShellOnItsOwnTerminalWithJobControlAndWindowSize) {
  Conversation shell(kAlice, project_, {"--no-ask-password", "shell", id_}, "", 24, 80);
  // The markers are computed inside, so that the echo of what we type cannot match them.
  ASSERT_TRUE(shell.Answer("$ ", "echo in-$((6*7)) $(stty size) $(id -un)\n")) << shell.screen();
  EXPECT_TRUE(shell.WaitFor("in-42 24 80 sbxtest-alice")) << shell.screen();
  shell.Resize(40, 100);  // the outer window grows: sandboxctl passes it on
  ASSERT_TRUE(shell.Answer("$ ", "echo size-$(stty size | tr ' ' x)\n"));
  EXPECT_TRUE(shell.WaitFor("size-40x100")) << shell.screen();
  // Job control: the shell owns its terminal, so it can put a job in the background and list it.
  ASSERT_TRUE(shell.Answer("$ ", "sleep 551 &\n"));
  ASSERT_TRUE(shell.Answer("$ ", "jobs; echo made-$((1+1)) > made.txt\n"));
  EXPECT_TRUE(shell.WaitFor("sleep 551")) << shell.screen();
  ASSERT_TRUE(shell.Answer("$ ", "exit 5\n"));
  EXPECT_EQ(shell.Finish(), 5) << shell.screen();
  EXPECT_TRUE(WaitUntil([] { return World().RunAs("root", {"pgrep", "-u", kAlice, "-f", "sleep 551"}).status != 0; }))
      << "the shell's background job outlived it";
  EXPECT_EQ(Changes(), "A made.txt\n");
}

// No one takes the sandbox's shell for the host's: the prompt names the sandbox, and so does
// SANDBOXD_SANDBOX. A command after the sandbox needs no "--", its options are its own.
TEST_F(ShellTest, ThePromptNamesTheSandbox) {
  Result shown = Ctl({"show", id_, "--json"});
  std::string name = nlohmann::json::parse(shown.out, nullptr, false).value("name", "");
  ASSERT_FALSE(name.empty()) << shown.out;
  Conversation shell(kAlice, project_, {"--no-ask-password", "shell", id_, "sh", "-i"}, "", 24, 80);
  ASSERT_TRUE(shell.Answer("(" + name + ") $ ", "echo in:$SANDBOXD_SANDBOX:$((1+1))\n")) << shell.screen();
  EXPECT_TRUE(shell.WaitFor("in:" + name + ":2")) << shell.screen();
  ASSERT_TRUE(shell.Answer("$ ", "exit 3\n"));
  EXPECT_EQ(shell.Finish(), 3) << shell.screen();
}

TEST_F(ShellTest, WithoutATerminalItSaysSo) {
  Result r = Ctl({"shell", id_});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("shell needs a terminal"), std::string::npos) << r.err;
}

TEST_F(ShellTest, TheTtyOptionWithoutATerminalIsRefused) {
  Result r = World().Gdbus(kAlice, "/org/sandboxd/Sandbox1/sandbox/" + id_, "org.sandboxd.Sandbox1.Sandbox.Run",
                           {"['true']", "''", "{}", "{}", "{'tty': <true>}", "0"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("needs a terminal as its stdin"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sandboxd::it
