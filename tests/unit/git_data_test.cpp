#include "git_data.h"

#include <gtest/gtest.h>

namespace sandboxd::api {
namespace {

std::string GitDirOf(std::string_view path) {
  auto place = GitDataOf(path);
  return place ? place->git_dir + " " + place->inner : "-";
}

TEST(GitDataPathTest, WhatAGitCommitWritesIsInertData) {
  EXPECT_EQ(GitDirOf(".git/objects/1a/2b3c4d"), ".git objects/1a/2b3c4d");
  EXPECT_EQ(GitDirOf(".git/objects/pack/pack-1.pack"), ".git objects/pack/pack-1.pack");
  EXPECT_EQ(GitDirOf(".git/objects"), ".git objects");
  EXPECT_EQ(GitDirOf(".git/refs/heads/main"), ".git refs/heads/main");
  EXPECT_EQ(GitDirOf(".git/logs/HEAD"), ".git logs/HEAD");
  EXPECT_EQ(GitDirOf(".git/index"), ".git index");
  EXPECT_EQ(GitDirOf(".git/index.lock"), ".git index.lock");
  EXPECT_EQ(GitDirOf(".git/HEAD"), ".git HEAD");
  EXPECT_EQ(GitDirOf(".git/COMMIT_EDITMSG"), ".git COMMIT_EDITMSG");
  EXPECT_EQ(GitDirOf(".git/packed-refs"), ".git packed-refs");
  EXPECT_EQ(GitDirOf(".git/hooks/pre-commit.sample"), ".git hooks/pre-commit.sample");
  EXPECT_EQ(GitDirOf("lib/vendor/.git/refs/tags/v1"), "lib/vendor/.git refs/tags/v1");
}

TEST(GitDataPathTest, WhatGitRunsOrObeysIsNeverFolded) {
  // A job that writes these changes what runs on the owner's next git command in the live tree.
  for (const char* path : {".git/config", ".git/hooks/pre-commit", ".git/hooks/post-checkout", ".git/hooks/sub/x.sample",
                           ".git/info/exclude", ".git/info/attributes", ".git/objects/info/alternates",
                           ".git/objects/info/http-alternates", ".git/modules/sub/config", ".git/worktrees/w/HEAD",
                           ".git/commondir", ".git/config.worktree", ".git/rr-cache/x", ".git/something-new"})
    EXPECT_EQ(GitDirOf(path), "-") << path;
  EXPECT_EQ(GitDirOf(".git/hooks"), ".git hooks");  // the empty directory git init makes
  EXPECT_EQ(GitDirOf(".git/objects/info/packs"), ".git objects/info/packs");
}

TEST(GitDataPathTest, OnlyAComponentNamedDotGitCounts) {
  EXPECT_EQ(GitDirOf(".git"), "-");  // the entry itself: it may be a file naming another git directory
  EXPECT_EQ(GitDirOf("lib/.git"), "-");
  EXPECT_EQ(GitDirOf(".gitignore"), "-");
  EXPECT_EQ(GitDirOf("a.git/objects/x"), "-");
  EXPECT_EQ(GitDirOf(".git2/objects/x"), "-");
  EXPECT_EQ(GitDirOf("src/.GIT/index"), "-");
  EXPECT_EQ(GitDirOf(".git/"), "-");
  EXPECT_EQ(GitDirOf("refs/heads/main"), "-");
  EXPECT_EQ(GitDirOf(".git/refsx"), "-");
  EXPECT_EQ(GitDirOf(".git/objects.lock"), "-");  // a lock of a file git keeps, not of a tree
}

TEST(GitDataPathTest, IndexAndWorkTree) {
  EXPECT_TRUE(IsGitIndex(".git/index"));
  EXPECT_TRUE(IsGitIndex("lib/.git/index"));
  EXPECT_FALSE(IsGitIndex(".git/index.lock"));
  EXPECT_FALSE(IsGitIndex("index"));
  EXPECT_EQ(WorkTreeOf(".git"), ".");
  EXPECT_EQ(WorkTreeOf("lib/x/.git"), "lib/x");
}

}  // namespace
}  // namespace sandboxd::api
