// The bash completion of sandboxctl (shell-completion/sandboxctl), sourced in a bash run as
// alice against the built sandboxctl and the test world's daemon: verbs, options, sandbox ids
// and names (hers only), directories, the user's own command after `--`, and silence when no
// daemon answers. Each check runs twice: in a bare bash and with bash-completion loaded, since
// the script must work without it and take its helpers when they are there.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "harness.h"

namespace sandboxd::it {
namespace {

constexpr const char* kBashCompletion = "/usr/share/bash-completion/bash_completion";

using Words = std::set<std::string>;

/// `text` in single quotes for bash.
std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// The words bash hands a completion function for `line` (the cursor at its end): split at
/// blanks, and around each '=' as COMP_WORDBREAKS has it (`--cwd=/x` is `--cwd` `=` `/x`); a
/// line ending in a blank ends in an empty word.
std::vector<std::string> CompWords(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string token; in >> token;) {
    for (size_t eq; (eq = token.find('=')) != std::string::npos; token.erase(0, eq + 1)) {
      if (eq > 0) words.push_back(token.substr(0, eq));
      words.push_back("=");
    }
    if (!token.empty()) words.push_back(token);
  }
  if (line.empty() || line.back() == ' ') words.push_back("");
  return words;
}

struct Completion {
  Words words;
  Result result;
};

/// Completes `line` as alice: sources the script (after bash-completion when `with_bash_completion`),
/// sets COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT as bash would, calls the function that
/// `complete -p sandboxctl` names, and reads COMPREPLY back one word a line.
Completion Complete(const std::string& line, bool with_bash_completion) {
  std::string bin_dir = SANDBOXCTL_BIN;
  bin_dir.erase(bin_dir.rfind('/'));
  std::string words;
  for (const auto& word : CompWords(line)) words += Quote(word) + " ";
  std::string script =
      // The built sandboxctl is the one the completion finds.
      "PATH=" + Quote(bin_dir) + ":$PATH\n" +
      (with_bash_completion
           // compopt works only while readline runs a completion, and bash-completion's own
           // helpers call it bare; ours silence it themselves (the bare-bash run checks that).
           ? std::string("source ") + kBashCompletion + "\ncompopt() { builtin compopt \"$@\" 2>/dev/null; return 0; }\n"
           : std::string()) +
      "source " + Quote(std::string(SANDBOXD_SOURCE_DIR) + "/shell-completion/sandboxctl") + "\n" +
      "spec=($(complete -p sandboxctl)) || exit 3\n"
      "fn=\n"
      "for ((i = 0; i < ${#spec[@]}; i++)); do [[ ${spec[i]} == -F ]] && fn=${spec[i + 1]}; done\n"
      "[[ -n $fn ]] || exit 4\n"
      "COMP_WORDS=(" + words + ")\n"
      "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
      "COMP_LINE=" + Quote(line) + "\n"
      "COMP_POINT=${#COMP_LINE}\n"
      "COMPREPLY=()\n"
      "\"$fn\" sandboxctl \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD - 1]}\"\n"
      "(( ${#COMPREPLY[@]} == 0 )) || printf '%s\\n' \"${COMPREPLY[@]}\"\n";
  Completion completion;
  completion.result = World().RunAs(kAlice, {"bash", "--norc", "--noprofile", "-c", script});
  std::istringstream out(completion.result.out);
  for (std::string word; std::getline(out, word);) completion.words.insert(word);
  return completion;
}

std::string Join(const Words& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : " ") + word;
  return "{" + text + "}";
}

/// The names listed in one section of CLI11's help ("Subcommands:", "Options:"): the first
/// column of each indented line up to the next blank line, split at commas.
Words HelpSection(const std::string& help, const std::string& section) {
  Words names;
  std::istringstream in(help);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    std::string lower = line;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (!inside) {
      inside = lower.rfind(section + ":", 0) == 0;
      continue;
    }
    if (line.empty() || line[0] != ' ') break;
    std::string first;
    std::istringstream(line) >> first;
    std::istringstream parts(first);
    for (std::string name; std::getline(parts, name, ',');) names.insert(name);
  }
  return names;
}

Words Help(const std::vector<std::string>& args, const std::string& section) {
  std::vector<std::string> argv = {SANDBOXCTL_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--help");
  Result help = World().RunAs(kAlice, argv);
  EXPECT_EQ(help.status, 0) << help.err;
  return HelpSection(help.out, section);
}

class CompletionTest : public ::testing::Test {
 protected:
  void SetUp() override { SANDBOXD_REQUIRE_WORLD(); }
  void TearDown() override {
    for (const auto& [user, id] : created_) World().Sandboxctl(user, {"destroy", id});
  }

  /// Both ways of loading the script: bare, and after bash-completion when it is installed.
  std::vector<bool> Modes() const {
    std::vector<bool> modes = {false};
    if (access(kBashCompletion, R_OK) == 0) modes.push_back(true);
    return modes;
  }

  /// Checks `line` completes to exactly `expected` in every mode, quietly.
  void ExpectCompletion(const std::string& line, const Words& expected) {
    for (bool with : Modes()) {
      Completion c = Complete(line, with);
      EXPECT_EQ(c.result.status, 0) << line << (with ? " (bash-completion)" : "") << ": " << c.result.err;
      EXPECT_EQ(c.result.err, "") << line << (with ? " (bash-completion)" : "");
      EXPECT_EQ(c.words, expected) << "`" << line << "`" << (with ? " with bash-completion" : "") << " gave " << Join(c.words);
    }
  }

  std::string Create(const std::string& user, const std::string& name) {
    Result r = World().Sandboxctl(user, {"create", "--name", name, World().MakeProject(user)});
    EXPECT_EQ(r.status, 0) << r.err;
    std::string id = Trim(r.out);
    if (!id.empty()) created_.push_back({user, id});
    return id;
  }

  std::vector<std::pair<std::string, std::string>> created_;
};

TEST_F(CompletionTest, VerbsCompleteFromAPrefix) {
  ExpectCompletion("sandboxctl su", {"suspend"});
  ExpectCompletion("sandboxctl re", {"reject", "resume", "review"});
  // Global options come before the verb without hiding it.
  ExpectCompletion("sandboxctl --json --no-ask-password di", {"diff", "discard"});
}

TEST_F(CompletionTest, AnEmptyWordOffersExactlyTheVerbsOfHelp) {
  // The verbs as sandboxctl itself lists them, so that a verb added to the client and not to
  // the completion (or the other way round) fails here.
  Words verbs = Help({}, "subcommands");
  ASSERT_GE(verbs.size(), 15u) << "cannot read the verbs from sandboxctl --help";
  ExpectCompletion("sandboxctl ", verbs);
}

TEST_F(CompletionTest, GlobalOptionsAreThoseOfHelp) {
  Words options = Help({}, "options");
  ASSERT_TRUE(options.count("--no-ask-password")) << Join(options);
  ExpectCompletion("sandboxctl -", options);
}

TEST_F(CompletionTest, EachVerbsOptionsAreThoseOfItsHelp) {
  ExpectCompletion("sandboxctl run --ti", {"--timeout"});
  ExpectCompletion("sandboxctl commit --f", {"--force"});
  // Every verb: its own options as its --help lists them, plus the global ones (sandboxctl
  // takes those after the verb too), plus `--` where a command follows.
  Words global = Help({}, "options");
  for (const auto& verb : Help({}, "subcommands")) {
    SCOPED_TRACE(verb);
    Words expected = Help({verb}, "options");
    expected.insert(global.begin(), global.end());
    if (verb == "run" || verb == "shell" || verb == "try") expected.insert("--");
    ExpectCompletion("sandboxctl " + verb + " -", expected);
  }
}

TEST_F(CompletionTest, SandboxIdsAndNamesAreTheCallersOnly) {
  std::string id = Create(kAlice, "comp-alice");
  std::string bobs = Create(kBob, "comp-bob");
  ASSERT_FALSE(id.empty());
  ASSERT_FALSE(bobs.empty());
  ExpectCompletion("sandboxctl show comp-", {"comp-alice"});
  // An option's value is not the SANDBOX: what follows it is.
  ExpectCompletion("sandboxctl run --timeout 5 " + id.substr(0, 8), {id});
  ExpectCompletion("sandboxctl run --hide /opt --env A=1 comp-a", {"comp-alice"});
  ExpectCompletion("sandboxctl --json changes comp-a", {"comp-alice"});
  for (bool with : Modes()) {
    Completion all = Complete("sandboxctl destroy ", with);
    EXPECT_TRUE(all.words.count(id) && all.words.count("comp-alice")) << Join(all.words);
    EXPECT_FALSE(all.words.count(bobs) || all.words.count("comp-bob")) << "bob's sandbox offered to alice: " << Join(all.words);
  }
  // A verb takes one SANDBOX: what follows is not another.
  ExpectCompletion("sandboxctl diff comp-alice comp-", {});
  for (bool with : Modes()) {
    // After run's SANDBOX comes the command: command names, not sandboxes.
    Completion command = Complete("sandboxctl run comp-alice ", with);
    EXPECT_TRUE(command.words.count("ls")) << Join(command.words);
    EXPECT_FALSE(command.words.count("comp-alice")) << Join(command.words);
  }
}

TEST_F(CompletionTest, UserIsPassedOnAndQuietWhenNoUserDaemonAnswers) {
  // Alice has a sandbox on the system daemon; with --user the completion must ask the session
  // daemon instead, which is not there: nothing offered, nothing printed, wherever --user is.
  ASSERT_FALSE(Create(kAlice, "comp-system").empty());
  ExpectCompletion("sandboxctl show comp-s", {"comp-system"});
  ExpectCompletion("sandboxctl --user show comp-s", {});
  ExpectCompletion("sandboxctl show --user comp-s", {});
}

TEST_F(CompletionTest, DirectoriesWhereADirectoryIsExpected) {
  std::string project = World().MakeProject(kAlice);
  // The project holds files and one directory, sub: only sub is offered.
  ExpectCompletion("sandboxctl create " + project + "/", {project + "/sub"});
  ExpectCompletion("sandboxctl create --name x " + project + " " + project + "/s", {project + "/sub"});
  ExpectCompletion("sandboxctl run --cwd " + project + "/", {project + "/sub"});
  ExpectCompletion("sandboxctl run --cwd=" + project + "/", {project + "/sub"});
  ExpectCompletion("sandboxctl try --root " + project + "/", {project + "/sub"});
  // A hidden PATH may be a file too.
  ExpectCompletion("sandboxctl create --hide " + project + "/a", {project + "/a.txt"});
  ExpectCompletion("sandboxctl run --hide " + project + "/a", {project + "/a.txt"});
}

TEST_F(CompletionTest, AfterTheDashDashTheCommandIsTheUsers) {
  for (bool with : Modes()) {
    Completion command = Complete("sandboxctl try -- ech", with);
    EXPECT_TRUE(command.words.count("echo")) << Join(command.words);
    EXPECT_EQ(command.result.err, "");
    // The command's own options are never sandboxctl's.
    Completion options = Complete("sandboxctl run box -- ls --ti", with);
    EXPECT_FALSE(options.words.count("--timeout")) << Join(options.words);
    Completion sandboxes = Complete("sandboxctl shell box -- ", with);
    EXPECT_FALSE(sandboxes.words.count("--")) << Join(sandboxes.words);
  }
}

// The command begins at its first word (`run SANDBOX CMD ARGS`, `try CMD`), `--` or not: the
// word after SANDBOX is a command name, and what follows the command is the command's, even
// where it looks like sandboxctl's options or has '=' in it.
TEST_F(CompletionTest, TheCommandBeginsAtItsFirstWordWithoutDashDash) {
  for (bool with : Modes()) {
    Completion run = Complete("sandboxctl run box ech", with);
    EXPECT_TRUE(run.words.count("echo")) << Join(run.words);
    EXPECT_EQ(run.result.err, "");
    Completion with_options = Complete("sandboxctl run --timeout 5 --env A=1 box ech", with);
    EXPECT_TRUE(with_options.words.count("echo")) << Join(with_options.words);
    Completion shell = Complete("sandboxctl shell box bas", with);
    EXPECT_TRUE(shell.words.count("bash")) << Join(shell.words);
    Completion tried = Complete("sandboxctl try -y ech", with);
    EXPECT_TRUE(tried.words.count("echo")) << Join(tried.words);
    Completion options = Complete("sandboxctl run box make CFLAGS=-O2 --ti", with);
    EXPECT_FALSE(options.words.count("--timeout")) << Join(options.words);
    Completion try_options = Complete("sandboxctl try make --ro", with);
    EXPECT_FALSE(try_options.words.count("--root")) << Join(try_options.words);
    // sandboxctl's own options still come before the command.
    Completion own = Complete("sandboxctl run --ti", with);
    EXPECT_TRUE(own.words.count("--timeout")) << Join(own.words);
  }
}

}  // namespace
}  // namespace sandboxd::it
