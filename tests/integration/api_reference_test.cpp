// The D-Bus API reference that dbus/api-reference.py generates from the interface XML: every
// method, signal and property of the XML is in it under its interface, and a member whose
// comment is missing makes the generator fail, naming it, instead of leaving it out. Needs no
// daemon.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"

namespace sandboxd::it {
namespace {

const std::string kGenerator = kSourceDir + "/dbus/api-reference.py";
const std::vector<std::string> kInterfaceFiles = {"org.sandboxd.Sandbox1.Manager.xml", "org.sandboxd.Sandbox1.Sandbox.xml",
                                                  "org.sandboxd.Sandbox1.Job.xml"};

/// A directory of its own for each test, removed with it.
class ApiReferenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/tmp/sandboxd-api-reference-XXXXXX";
    ASSERT_NE(mkdtemp(path), nullptr);
    dir_ = path;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// Runs the generator on `xml_files`, writing `dir_/api.md`.
  Result Generate(const std::vector<std::string>& xml_files) {
    std::vector<std::string> argv = {"python3", kGenerator, "-o", dir_ + "/api.md"};
    argv.insert(argv.end(), xml_files.begin(), xml_files.end());
    return Run(argv);
  }

  /// Runs `argv` (no shell); stdout and stderr go through files in dir_.
  Result Run(const std::vector<std::string>& argv) {
    std::string out_path = dir_ + "/stdout", err_path = dir_ + "/stderr";
    pid_t pid = fork();
    if (pid == 0) {
      int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(out, STDOUT_FILENO);
      dup2(err, STDERR_FILENO);
      std::vector<char*> args;
      for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
      args.push_back(nullptr);
      execvp(args[0], args.data());
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), ReadWhole(out_path), ReadWhole(err_path)};
  }

  std::string dir_;
};

std::vector<std::string> RealInterfaceFiles() {
  std::vector<std::string> paths;
  for (const auto& name : kInterfaceFiles) paths.push_back(kSourceDir + "/dbus/" + name);
  return paths;
}

/// One interface of an XML file with its members' names by kind, read with patterns (the test
/// has no XML parser, and the XML is ours, written one element a line).
struct Interface {
  std::string name;
  std::map<std::string, std::vector<std::string>> members;  ///< "method", "signal", "property"
};

Interface ReadInterface(const std::string& xml) {
  Interface interface;
  std::smatch match;
  if (std::regex_search(xml, match, std::regex(R"re(<interface\s+name="([^"]+)")re"))) interface.name = match[1];
  const std::regex member(R"re(<(method|signal|property)\s+name="([^"]+)")re");
  for (std::sregex_iterator it(xml.begin(), xml.end(), member), end; it != end; ++it)
    interface.members[(*it)[1]].push_back((*it)[2]);
  return interface;
}

/// The lines of `text` from the line `heading` to the next heading of its level or above.
std::string SectionUnder(const std::string& text, const std::string& heading) {
  size_t level = heading.find(' ');
  size_t start = ("\n" + text).find("\n" + heading + "\n");
  if (start == std::string::npos) return "";
  start += heading.size() + 1;
  for (size_t end = text.find("\n#", start); end != std::string::npos; end = text.find("\n#", end + 1)) {
    size_t hashes = text.find_first_not_of('#', end + 1) - (end + 1);
    if (hashes <= level && text[end + 1 + hashes] == ' ') return text.substr(start, end - start);
  }
  return text.substr(start);
}

/// The text of the comment right before `<KIND name="NAME"` in `xml`, "" when there is none.
std::string CommentBefore(const std::string& xml, const std::string& kind, const std::string& name) {
  size_t element = xml.find("<" + kind + " name=\"" + name + "\"");
  size_t end = xml.rfind("-->", element);
  if (element == std::string::npos || end == std::string::npos || xml.find_first_not_of(" \t\n", end + 3) != element) return "";
  size_t start = xml.rfind("<!--", end) + 4;
  return xml.substr(start, end - start);
}

/// The first `count` words of `text`, separated by single spaces (the generator joins a
/// comment's lines into paragraphs).
std::string OpeningWords(const std::string& text, size_t count = 4) {
  std::istringstream in(text);
  std::string words;
  for (std::string word; count > 0 && in >> word; --count) words += (words.empty() ? "" : " ") + word;
  return words;
}

TEST_F(ApiReferenceTest, EveryMemberOfTheXmlIsInTheReferenceUnderItsInterface) {
  Result generated = Generate(RealInterfaceFiles());
  ASSERT_EQ(generated.status, 0) << generated.err;
  std::string reference = ReadWhole(dir_ + "/api.md");
  const std::map<std::string, std::string> kHeadings = {{"method", "### Methods"}, {"signal", "### Signals"}, {"property", "### Properties"}};
  size_t members = 0;
  for (const auto& path : RealInterfaceFiles()) {
    Interface interface = ReadInterface(ReadWhole(path));
    ASSERT_FALSE(interface.name.empty()) << "no interface in " << path;
    std::string part = SectionUnder(reference, "## " + interface.name);
    ASSERT_FALSE(part.empty()) << interface.name << " has no part in the reference";
    for (const auto& [kind, names] : interface.members) {
      std::string of_kind = SectionUnder(part, kHeadings.at(kind));
      for (const auto& name : names) {
        ++members;
        std::string entry = SectionUnder(of_kind, "#### " + name);
        EXPECT_FALSE(entry.empty()) << kind << " " << interface.name << "." << name << " is not in the reference under its interface";
        // Its signature, and the text of its comment.
        EXPECT_NE(entry.find(kind == "property" ? " " + name + ";" : name + " ("), std::string::npos) << name << " has no signature";
        std::string opening = OpeningWords(CommentBefore(ReadWhole(path), kind, name));
        EXPECT_FALSE(opening.empty()) << name << " has no comment in " << path;
        EXPECT_NE(OpeningWords(entry, 10000).find(opening), std::string::npos) << "the comment of " << name << " is not in its entry";
      }
    }
  }
  EXPECT_GE(members, 20u) << "too few members read from the XML";
}

TEST_F(ApiReferenceTest, TheBuildGeneratesTheSameReference) {
  Result generated = Generate(RealInterfaceFiles());
  ASSERT_EQ(generated.status, 0) << generated.err;
  std::string built = ReadWhole(kBuildDir + "/dbus/sandboxd-dbus-api.md");
  ASSERT_FALSE(built.empty()) << "the build made no " << kBuildDir << "/dbus/sandboxd-dbus-api.md";
  EXPECT_EQ(built, ReadWhole(dir_ + "/api.md"));
}

/// A member, and the XML file it is declared in.
struct Member {
  std::string file;
  std::string element;  ///< e.g. <method name="Diff"
  std::string name;
};

TEST_F(ApiReferenceTest, AMemberWithoutItsCommentFailsTheGeneratorNamingIt) {
  // One member of each kind, each in another file.
  for (const Member& member : {Member{"org.sandboxd.Sandbox1.Sandbox.xml", R"(<method name="Diff")", "Diff"},
                               Member{"org.sandboxd.Sandbox1.Job.xml", R"(<signal name="Finished")", "Finished"},
                               Member{"org.sandboxd.Sandbox1.Manager.xml", R"(<property name="Version")", "Version"}}) {
    SCOPED_TRACE(member.name);
    // A copy of the XML files with the comment right before the member taken out.
    std::vector<std::string> files;
    for (const auto& name : kInterfaceFiles) {
      std::string xml = ReadWhole(kSourceDir + "/dbus/" + name);
      if (name == member.file) {
        size_t element = xml.find(member.element);
        ASSERT_NE(element, std::string::npos) << member.element << " is not in " << name;
        size_t comment_end = xml.rfind("-->", element);
        ASSERT_NE(comment_end, std::string::npos);
        size_t comment_start = xml.rfind("<!--", comment_end);
        // Only whitespace between the comment and the element: it is the member's own.
        ASSERT_EQ(xml.find_first_not_of(" \t\n", comment_end + 3), element) << member.name << " has no comment of its own";
        xml.erase(comment_start, comment_end + 3 - comment_start);
      }
      files.push_back(dir_ + "/" + name);
      WriteWhole(files.back(), xml);
    }
    std::filesystem::remove(dir_ + "/api.md");
    Result generated = Generate(files);
    EXPECT_EQ(generated.status, 1);
    EXPECT_NE(generated.err.find(member.name), std::string::npos) << generated.err;
    EXPECT_NE(generated.err.find(member.file), std::string::npos) << generated.err;
    // No half reference is left for the build to install.
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/api.md"));
  }
}

}  // namespace
}  // namespace sandboxd::it
