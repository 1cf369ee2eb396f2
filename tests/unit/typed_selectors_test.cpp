// Selectors typed on the command line become structured ones: a text that could name a file
// and a hunk of another is refused naming both (a job chooses names, DESIGN "Data safety"); the
// change set is listed only when a text could mean either.

#include "typed_selectors.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "context.h"

namespace sandboxctl {
namespace {

using sandboxd::api::Selector;

std::vector<Selector> Resolve(const std::vector<std::string>& typed, const std::vector<std::string>& paths, int* listed = nullptr) {
  return ResolveTypedSelectors(
      typed,
      [&] {
        if (listed) ++*listed;
        return paths;
      },
      "3fa2");
}

TEST(TypedSelectorsTest, ATextThatCouldNameAFileOrAHunkIsRefusedNamingBoth) {
  try {
    Resolve({"run.sh:1"}, {"run.sh", "run.sh:1"});
    FAIL() << "not refused";
  } catch (const std::runtime_error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("the file run.sh:1"), std::string::npos) << message;
    EXPECT_NE(message.find("hunk 1 of run.sh"), std::string::npos) << message;
    EXPECT_NE(message.find("sandbox 3fa2"), std::string::npos) << message;
    EXPECT_NE(message.find("\"run.sh:1\" or ./run.sh:1 for the file, \"run.sh\":1 for the hunk"), std::string::npos) << message;
  }
  // A directory of that name holds changes: the same.
  EXPECT_THROW(Resolve({"src:2"}, {"src", "src:2/a.c"}), std::runtime_error);
  EXPECT_THROW(Resolve({"a:1.2"}, {"a", "a:1.2"}), std::runtime_error);
}

TEST(TypedSelectorsTest, WhatTheChangeSetHoldsSaysWhichIsMeant) {
  auto hunk = Resolve({"run.sh:1"}, {"run.sh"});
  ASSERT_EQ(hunk.size(), 1u);
  EXPECT_EQ(hunk[0].path, "run.sh");
  EXPECT_EQ(hunk[0].hunk, 1);
  auto file = Resolve({"notes:3"}, {"notes:3"});
  ASSERT_EQ(file.size(), 1u);
  EXPECT_EQ(file[0].path, "notes:3");
  EXPECT_FALSE(file[0].hunk);
  // Neither: the file, for the daemon to refuse by name.
  auto neither = Resolve({"x:3"}, {"a"});
  EXPECT_EQ(neither[0].path, "x:3");
  EXPECT_FALSE(neither[0].hunk);
}

TEST(TypedSelectorsTest, QuotesAndDotSlashNeedNoListing) {
  int listed = 0;
  auto selectors = Resolve({"\"run.sh:1\"", "./run.sh:1", "\"run.sh\":1.2", "src/", "\"raw\\377\""}, {"run.sh", "run.sh:1"}, &listed);
  EXPECT_EQ(listed, 0);
  ASSERT_EQ(selectors.size(), 5u);
  EXPECT_EQ(selectors[0].path, "run.sh:1");
  EXPECT_FALSE(selectors[0].hunk);
  EXPECT_EQ(selectors[1].path, "run.sh:1");
  EXPECT_FALSE(selectors[1].hunk);
  EXPECT_EQ(selectors[2].path, "run.sh");
  EXPECT_EQ(selectors[2].hunk, 1);
  EXPECT_EQ(selectors[2].part, 2);
  EXPECT_EQ(selectors[4].path, "\"raw\\377\"") << "a name that is no UTF-8 travels as its wire name";
  // Listed once for several texts that need it.
  Resolve({"a:1", "b:2"}, {"a", "b"}, &listed);
  EXPECT_EQ(listed, 1);
}

TEST(TypedSelectorsTest, BadQuotingIsBadUsage) {
  EXPECT_THROW(Resolve({"\"unclosed"}, {}), UsageError);
  EXPECT_THROW(Resolve({"\"a\"b"}, {}), UsageError);
  EXPECT_THROW(TypedPaths({"\"a\":1"}), UsageError);
  auto paths = TypedPaths({"run.sh:1", "./x"});
  EXPECT_EQ(paths[0].path, "run.sh:1");
  EXPECT_EQ(paths[1].path, "x");
}

}  // namespace
}  // namespace sandboxctl
