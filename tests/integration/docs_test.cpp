// The man pages against what they document. The sources of truth are the built binaries'
// --help and the configuration parser's table of keys, so that an option, verb or key added
// without its documentation fails here, and so does a page that still documents one that is
// gone. These tests need no daemon: they run the binaries for their help only.

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"

namespace sandboxd::it {
namespace {


/// What a program printed on stdout, and its exit status.
struct Printed {
  int status = -1;
  std::string out;
};

/// Runs `argv` (no shell) with stdout captured through a file, stdin and stderr on /dev/null.
Printed RunForOutput(const std::vector<std::string>& argv) {
  char path[] = "/tmp/sandboxd-docs-test-XXXXXX";
  int out = mkstemp(path);
  if (out < 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out);
  int status = 0;
  waitpid(pid, &status, 0);
  Printed printed{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), ReadWhole(path)};
  unlink(path);
  return printed;
}

/// What CLI11 prints for --help: the long options of its "Options:" block and the names in its
/// "Subcommands:" block. Only the first column counts (a description may mention options of
/// other verbs, e.g. usage's "(--all: everyone's...)" in the main help).
struct Help {
  std::vector<std::string> long_options;
  std::vector<std::string> subcommands;
};

Help ParseHelp(const std::string& text) {
  Help help;
  std::string block;
  const std::regex long_option(R"(--[A-Za-z0-9][A-Za-z0-9-]*)");
  for (const auto& line : Lines(text)) {
    if (!line.empty() && line[0] != ' ' && line.back() == ':') {
      block = line;
      continue;
    }
    if (line.size() < 3 || line.compare(0, 2, "  ") != 0 || line[2] == ' ') continue;
    // The first column ends at a run of two spaces (or the line, when the description wraps);
    // CLI11 adds "Excludes: --no" and the like to it, which name other options.
    std::string column = line.substr(2, line.find("  ", 2) == std::string::npos ? std::string::npos : line.find("  ", 2) - 2);
    for (const char* note : {" Excludes:", " Needs:"}) column = column.substr(0, column.find(note));
    if (block == "Options:") {
      for (std::sregex_iterator it(column.begin(), column.end(), long_option), end; it != end; ++it)
        help.long_options.push_back(it->str());
    } else if (block == "Subcommands:") {
      help.subcommands.push_back(column);
    }
  }
  return help;
}

Help HelpOf(const std::vector<std::string>& argv) {
  Printed printed = RunForOutput(argv);
  EXPECT_EQ(printed.status, 0) << argv[0] << " --help failed";
  return ParseHelp(printed.out);
}

std::string Page(const std::string& name) {
  std::string text = ReadWhole(kSourceDir + "/man/" + name);
  EXPECT_FALSE(text.empty()) << "cannot read man/" << name;
  return text;
}

/// The part of a scdoc page under the heading line `heading` ("# OPTIONS", "## run"), up to
/// the next heading of the same or a higher level; "" when there is no such heading. Lines
/// inside ``` blocks are text, whatever they start with.
std::string Part(const std::string& page, const std::string& heading) {
  auto level = [](const std::string& line) -> size_t {
    size_t hashes = line.find_first_not_of('#');
    return hashes != std::string::npos && hashes > 0 && line[hashes] == ' ' ? hashes : 0;
  };
  size_t own_level = level(heading);
  std::string part;
  bool inside = false, literal = false;
  for (const auto& line : Lines(page)) {
    if (line.rfind("```", 0) == 0) literal = !literal;
    size_t line_level = literal ? 0 : level(line);
    if (inside && line_level > 0 && line_level <= own_level) break;
    if (inside) part += line + "\n";
    if (!literal && line == heading) inside = true;
  }
  return part;
}

/// Whether `part` has an entry for `term` (an option, or a configuration key with its "="): a
/// line that starts with it in bold (`*--name* _NAME_`, `*-y*, *--yes*`), followed by its
/// indented description. A mention in a synopsis or in prose does not count.
bool Documents(const std::string& part, const std::string& term) {
  auto lines = Lines(part);
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string& line = lines[i];
    bool entry = line.rfind("*" + term + "*", 0) == 0 || (line.rfind("*-", 0) == 0 && line.find(", *" + term + "*") != std::string::npos);
    if (entry && lines[i + 1].rfind("\t", 0) == 0) return true;
  }
  return false;
}

/// Every `*--option*` a part of a page documents.
std::set<std::string> DocumentedOptions(const std::string& part) {
  std::set<std::string> options;
  const std::regex bold(R"(\*(--[A-Za-z0-9][A-Za-z0-9-]*)\*)");
  for (std::sregex_iterator it(part.begin(), part.end(), bold), end; it != end; ++it) options.insert((*it)[1].str());
  return options;
}

bool Lists(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::vector<std::string> Verbs() { return HelpOf({SANDBOXCTL_BIN, "--help"}).subcommands; }

TEST(DocsTest, EveryGlobalOptionOfSandboxctlIsInItsOptionsSection) {
  Help help = HelpOf({SANDBOXCTL_BIN, "--help"});
  ASSERT_FALSE(help.long_options.empty()) << "no options found in sandboxctl --help: has CLI11's format changed?";
  std::string options = Part(Page("sandboxctl.1.scd"), "# OPTIONS");
  ASSERT_FALSE(options.empty()) << "sandboxctl.1.scd has no OPTIONS section";
  for (const auto& option : help.long_options) EXPECT_TRUE(Documents(options, option)) << option << " has no entry in sandboxctl(1)'s OPTIONS";
  for (const auto& option : DocumentedOptions(options))
    EXPECT_TRUE(Lists(help.long_options, option))
        << "sandboxctl(1)'s OPTIONS documents " << option << ", which sandboxctl --help does not list";
}

TEST(DocsTest, EveryVerbHasItsOwnPartOfTheManPage) {
  auto verbs = Verbs();
  // The contract's verbs: a help that lists fewer means the parsing above went wrong.
  ASSERT_GE(verbs.size(), 19u) << "too few verbs found in sandboxctl --help: has CLI11's format changed?";
  std::string commands = Part(Page("sandboxctl.1.scd"), "# COMMANDS");
  ASSERT_FALSE(commands.empty()) << "sandboxctl.1.scd has no COMMANDS section";
  for (const auto& verb : verbs) {
    std::string part = Part(commands, "## " + verb);
    EXPECT_FALSE(part.empty()) << "sandboxctl(1) has no \"## " << verb << "\" part under COMMANDS";
    // Its synopsis line, so that the part is about the verb and not just a heading.
    EXPECT_NE(part.find("*sandboxctl " + verb + "*"), std::string::npos) << "the part of " << verb << " has no synopsis";
  }
}

TEST(DocsTest, EveryVerbOptionIsInTheVerbsPart) {
  std::string commands = Part(Page("sandboxctl.1.scd"), "# COMMANDS");
  for (const auto& verb : Verbs()) {
    std::string part = Part(commands, "## " + verb);
    for (const auto& option : HelpOf({SANDBOXCTL_BIN, verb, "--help"}).long_options) {
      // Every verb takes --help; OPTIONS documents it once, for all of them (checked above).
      if (option == "--help") continue;
      EXPECT_TRUE(Documents(part, option)) << "sandboxctl " << verb << " " << option << " has no entry in the part of " << verb;
    }
  }
}

TEST(DocsTest, TheManPageDocumentsNoVerbOptionThatIsGone) {
  std::string commands = Part(Page("sandboxctl.1.scd"), "# COMMANDS");
  // A verb's part may name a global option too ("prints nothing with --json").
  auto global = HelpOf({SANDBOXCTL_BIN, "--help"}).long_options;
  for (const auto& verb : Verbs()) {
    auto help = HelpOf({SANDBOXCTL_BIN, verb, "--help"}).long_options;
    help.insert(help.end(), global.begin(), global.end());
    for (const auto& option : DocumentedOptions(Part(commands, "## " + verb)))
      EXPECT_TRUE(Lists(help, option))
          << "the part of " << verb << " documents " << option << ", which sandboxctl " << verb << " --help does not list";
  }
}

TEST(DocsTest, EverySandboxdOptionIsInItsManPage) {
  Help help = HelpOf({SANDBOXD_BIN, "--help"});
  ASSERT_FALSE(help.long_options.empty()) << "no options found in sandboxd --help";
  std::string options = Part(Page("sandboxd.8.scd"), "# OPTIONS");
  ASSERT_FALSE(options.empty()) << "sandboxd.8.scd has no OPTIONS section";
  for (const auto& option : help.long_options) EXPECT_TRUE(Documents(options, option)) << option << " has no entry in sandboxd(8)'s OPTIONS";
  for (const auto& option : DocumentedOptions(options))
    EXPECT_TRUE(Lists(help.long_options, option))
        << "sandboxd(8) documents " << option << ", which sandboxd --help does not list";
}

/// The keys the configuration parser accepts, by section, read from its table in
/// daemon_config.cpp: the one list the parser itself consults, so it cannot go stale.
std::map<std::string, std::set<std::string>> ParserKeys() {
  std::string source = ReadWhole(kSourceDir + "/daemon/as_root/config/daemon_config.cpp");
  size_t start = source.find("constexpr KeySpec kKeys[] = {");
  size_t end = source.find("};", start);
  EXPECT_NE(start, std::string::npos) << "the key table kKeys is not in daemon_config.cpp any more; adapt this test";
  std::map<std::string, std::set<std::string>> keys;
  if (start == std::string::npos || end == std::string::npos) return keys;
  std::string table = source.substr(start, end - start);
  const std::regex row(R"re(\{"([A-Za-z]+)", "([A-Za-z]+)",)re");
  for (std::sregex_iterator it(table.begin(), table.end(), row), stop; it != stop; ++it) keys[(*it)[1]].insert((*it)[2]);
  return keys;
}

/// The `[Section]` / `#Key=` lines of the installed example configuration.
std::map<std::string, std::set<std::string>> ExampleKeys() {
  std::map<std::string, std::set<std::string>> keys;
  std::string section;
  const std::regex header(R"(^\[([A-Za-z]+)\]$)"), key(R"(^#?([A-Za-z]+)=)");
  for (const auto& line : Lines(ReadWhole(kSourceDir + "/daemon/as_root/config/sandboxd.conf.example"))) {
    std::smatch match;
    if (std::regex_search(line, match, header)) section = match[1];
    else if (std::regex_search(line, match, key)) keys[section].insert(match[1]);
  }
  return keys;
}

TEST(DocsTest, EveryConfigKeyIsInSandboxdConf5UnderItsSection) {
  auto keys = ParserKeys();
  // The table's rows have to be found at all; and the installed example, which shows every key
  // at its default, must agree with them (a row the pattern misses would show up there).
  ASSERT_GE(keys.size(), 2u) << "no rows read from kKeys in daemon_config.cpp; adapt this test";
  EXPECT_EQ(keys, ExampleKeys()) << "daemon/as_root/config/sandboxd.conf.example and the parser's kKeys list different keys";
  std::string page = Page("sandboxd.conf.5.scd");
  for (const auto& [section, names] : keys) {
    std::string part = Part(page, "## [" + section + "]");
    EXPECT_FALSE(part.empty()) << "sandboxd.conf(5) has no \"## [" << section << "]\" part";
    for (const auto& name : names)
      EXPECT_TRUE(Documents(part, name + "=")) << "[" << section << "] " << name << "= has no entry in sandboxd.conf(5)";
  }
}

TEST(DocsTest, TheBuiltInHiddenPathsAreListedInSandboxdConf5) {
  // The installed example shows the built-in HiddenPaths= list, commented out.
  std::string page = Page("sandboxd.conf.5.scd");
  size_t listed = 0;
  for (const auto& line : Lines(ReadWhole(kSourceDir + "/daemon/as_root/config/sandboxd.conf.example"))) {
    if (line.rfind("#HiddenPaths=", 0) != 0) continue;
    std::istringstream paths(line.substr(13));
    for (std::string path; paths >> path; ++listed) {
      // Whole paths only: ~/.cargo/credentials is also the start of ~/.cargo/credentials.toml.
      const std::regex whole("(^|[ \\t_(\\n])" + std::regex_replace(path, std::regex(R"([.])"), R"(\.)") + "($|[ _)\\n])");
      EXPECT_TRUE(std::regex_search(page, whole)) << path << " (a built-in hidden path) is not in sandboxd.conf(5)";
    }
  }
  EXPECT_GT(listed, 10u);
}

bool ScdocInstalled() {
  const char* path = getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (access((dir + "/scdoc").c_str(), X_OK) == 0) return true;
  return false;
}

TEST(DocsTest, TheManPagesAreBuiltWhenScdocIsThere) {
  if (!ScdocInstalled()) GTEST_SKIP() << "scdoc is not installed: the build makes no man pages (-Dman=auto)";
  for (const auto& [page, title] : std::map<std::string, std::string>{
           {"sandboxd.8", R"(.TH "sandboxd" "8")"}, {"sandboxctl.1", R"(.TH "sandboxctl" "1")"}, {"sandboxd.conf.5", R"(.TH "sandboxd.conf" "5")"}}) {
    std::string roff = ReadWhole(kBuildDir + "/man/" + page);
    EXPECT_NE(roff.find(title), std::string::npos) << kBuildDir << "/man/" << page << " is missing or not a man page";
  }
}

}  // namespace
}  // namespace sandboxd::it
