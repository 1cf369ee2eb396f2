// Where a verb's command begins (client/command_start.h): everything from its first word is the
// command's, its options included; sandboxctl's and the verb's options before it stay theirs.
#include "command_start.h"

#include <gtest/gtest.h>

namespace sandboxctl {
namespace {

class CommandStartTest : public ::testing::Test {
 protected:
  CommandStartTest() {
    app_.add_flag("--json", flag_);
    auto* run = app_.add_subcommand("run");
    run->add_option("--cwd", value_);
    run->add_option("--env", values_)->expected(1)->allow_extra_args(false);
    run->add_flag("--network", flag_);
    run->add_option("sandbox", value_);
    run->add_option("command", values_);
    auto* attempt = app_.add_subcommand("try");
    attempt->add_flag("-y,--yes", flag_);
    attempt->add_option("--root", values_);
    attempt->add_option("command", values_);
    app_.add_subcommand("list");
  }
  std::vector<std::string> Marked(std::vector<std::string> args) {
    args.insert(args.begin(), "sandboxctl");
    auto marked = MarkCommandStart(app_, {{"run", 1}, {"try", 0}}, args);
    marked.erase(marked.begin());
    return marked;
  }

  CLI::App app_;
  bool flag_ = false;
  std::string value_;
  std::vector<std::string> values_;
};

using Args = std::vector<std::string>;

TEST_F(CommandStartTest, TheCommandsOwnOptionsAreItsOwn) {
  EXPECT_EQ(Marked({"run", "calc", "make", "--version"}), (Args{"run", "calc", "--", "make", "--version"}));
  EXPECT_EQ(Marked({"--json", "run", "--cwd", "/x", "--env", "A=b", "--network", "calc", "ls", "-la"}),
            (Args{"--json", "run", "--cwd", "/x", "--env", "A=b", "--network", "calc", "--", "ls", "-la"}));
  EXPECT_EQ(Marked({"run", "--cwd=/x", "calc", "ls"}), (Args{"run", "--cwd=/x", "calc", "--", "ls"}));
  EXPECT_EQ(Marked({"try", "-y", "--root", "/p", "make", "-j8"}), (Args{"try", "-y", "--root", "/p", "--", "make", "-j8"}));
}

TEST_F(CommandStartTest, AWrittenDashDashAndOtherVerbsAreLeftAlone) {
  EXPECT_EQ(Marked({"run", "calc", "--", "echo", "--", "x"}), (Args{"run", "calc", "--", "echo", "--", "x"}));
  EXPECT_EQ(Marked({"try", "-y", "--", "make"}), (Args{"try", "-y", "--", "make"}));
  EXPECT_EQ(Marked({"list", "extra"}), (Args{"list", "extra"}));
  EXPECT_EQ(Marked({"run", "calc"}), (Args{"run", "calc"})) << "no command: the parser says what is missing";
  EXPECT_EQ(Marked({"--json"}), (Args{"--json"}));
}

}  // namespace
}  // namespace sandboxctl
