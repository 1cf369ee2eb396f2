// The diff is git's (DESIGN, "Data safety"): what `sandboxctl diff` prints parses as git's own
// diff does, binary changes included, so that `git apply` reads it in a copy of the live tree.
// A modified binary file used to be a header and a "Binary files" line, which git does not take
// for a patch at all: it read on into the next file's diff and stopped ("bad git-diff - expected
// /dev/null, got blob.bin"). Git writes an `index OLD..NEW MODE` line before it.

#include <gtest/gtest.h>

#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

class DiffApplyTest : public AliceSandboxTest {
 protected:
  void PrepareProject() override {
    // A live binary file that the job modifies, and one it deletes.
    Result made = World().RunAs(kAlice, {"sh", "-c", "printf 'old\\000bytes\\n' > blob.bin && printf 'gone\\000\\n' > gone.bin"},
                                {.cwd = project_});
    ASSERT_EQ(made.status, 0) << made.err;
  }

  /// git's id of `content` (git hash-object), abbreviated as git abbreviates it in a diff.
  std::string ShortId(const std::string& content) const {
    Result hashed = World().RunAs(kAlice, {"git", "hash-object", "--stdin"}, {.input = content});
    EXPECT_EQ(hashed.status, 0) << hashed.err;
    return hashed.out.substr(0, 7);
  }

  /// `git apply ARGS -` of `patch` in a fresh copy of the live tree, as alice.
  Result ApplyInCopy(const std::vector<std::string>& args, const std::string& patch) {
    std::string copy = project_ + ".copy";
    World().RunAs(kAlice, {"rm", "-rf", copy});
    EXPECT_EQ(World().RunAs(kAlice, {"cp", "-a", project_, copy}).status, 0);
    std::vector<std::string> argv = {"git", "apply"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("-");
    return World().RunAs(kAlice, argv, {.input = patch, .cwd = copy});
  }
};

// A new binary file, a modified one, a deleted one, and text around them: a text file with a NUL
// past git's first 8000 bytes (text, as git counts it) and an edited text file after the binaries,
// where git went astray.
TEST_F(DiffApplyTest, BinaryChangesParseAsGitsOwnDiffDoes) {
  Job("printf 'new\\000blob\\n' > new.bin && printf 'new\\000bytes\\n' > blob.bin && rm gone.bin"
      " && seq 1 2000 > nul.txt && printf 'echo harmless\\000; echo PWNED\\n' >> nul.txt && printf 'omega\\n' >> c.txt");
  Result diff = Ctl({"diff", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  // Git's form: the index line (blob ids, the mode when it stays), then "Binary files".
  EXPECT_NE(diff.out.find("diff --git a/blob.bin b/blob.bin\nindex " + ShortId(std::string("old\0bytes\n", 10)) + ".." +
                          ShortId(std::string("new\0bytes\n", 10)) + " 100644\nBinary files a/blob.bin and b/blob.bin differ\n"),
            std::string::npos)
      << diff.out;
  EXPECT_NE(diff.out.find("diff --git a/new.bin b/new.bin\nnew file mode 100644\nindex 0000000.." +
                          ShortId(std::string("new\0blob\n", 9)) + "\nBinary files /dev/null and b/new.bin differ\n"),
            std::string::npos)
      << diff.out;
  EXPECT_NE(diff.out.find("diff --git a/gone.bin b/gone.bin\ndeleted file mode 100644\nindex " +
                          ShortId(std::string("gone\0\n", 6)) + "..0000000\nBinary files a/gone.bin and /dev/null differ\n"),
            std::string::npos)
      << diff.out;

  // git apply reads every file of it.
  Result stat = ApplyInCopy({"--stat"}, diff.out);
  ASSERT_EQ(stat.status, 0) << stat.err << diff.out;
  for (const char* name : {" blob.bin ", " new.bin ", " gone.bin ", " nul.txt ", " c.txt "})
    EXPECT_NE(stat.out.find(name), std::string::npos) << name << " missing from\n" << stat.out;
  EXPECT_NE(stat.out.find("5 files changed"), std::string::npos) << stat.out;
  // All but the binary files applies. Those have no data in this form (that is `diff --binary`):
  // git refuses them as it refuses its own `git diff`'s, naming each, and nothing else.
  Result text_only = ApplyInCopy({"--check", "--exclude=*.bin"}, diff.out);
  EXPECT_EQ(text_only.status, 0) << text_only.err;
  Result whole = ApplyInCopy({"--check"}, diff.out);
  EXPECT_NE(whole.status, 0);
  EXPECT_NE(whole.err.find("cannot apply binary patch to 'blob.bin' without full index line"), std::string::npos) << whole.err;
  EXPECT_NE(whole.err.find("cannot apply binary patch to 'new.bin' without full index line"), std::string::npos) << whole.err;
  EXPECT_EQ(whole.err.find("bad git-diff"), std::string::npos) << whole.err;
  EXPECT_EQ(whole.err.find("corrupt"), std::string::npos) << whole.err;
  EXPECT_EQ(whole.err.find("nul.txt"), std::string::npos) << whole.err;
  EXPECT_EQ(whole.err.find("c.txt"), std::string::npos) << whole.err;
}

// A binary file whose mode changes and one whose content stays while its mode changes: the modes
// are lines of their own (so the index line carries none), and no content line where the bytes
// are the same, as git shows it.
TEST_F(DiffApplyTest, ABinaryFileWithANewModeParses) {
  Job("printf 'new\\000bytes\\n' > blob.bin && chmod 755 blob.bin gone.bin");
  Result diff = Ctl({"diff", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_NE(diff.out.find("diff --git a/blob.bin b/blob.bin\nold mode 100644\nnew mode 100755\nindex " +
                          ShortId(std::string("old\0bytes\n", 10)) + ".." + ShortId(std::string("new\0bytes\n", 10)) +
                          "\nBinary files a/blob.bin and b/blob.bin differ\n"),
            std::string::npos)
      << diff.out;
  EXPECT_NE(diff.out.find("diff --git a/gone.bin b/gone.bin\nold mode 100644\nnew mode 100755\n"), std::string::npos) << diff.out;
  EXPECT_EQ(diff.out.find("Binary files a/gone.bin"), std::string::npos) << diff.out;
  Result stat = ApplyInCopy({"--stat", "--summary"}, diff.out);
  ASSERT_EQ(stat.status, 0) << stat.err << diff.out;
  EXPECT_NE(stat.out.find("mode change 100644 => 100755 gone.bin"), std::string::npos) << stat.out;
  Result check = ApplyInCopy({"--check", "--exclude=blob.bin"}, diff.out);
  EXPECT_EQ(check.status, 0) << check.err;
}

}  // namespace
}  // namespace sandboxd::it

namespace sandboxd::it {
namespace {

// diff --binary through the bus: `git apply --binary` of it on a copy of the live tree gives the
// tree `commit --all` gives (DESIGN, "Data safety"), names with spaces, a newline and UTF-8,
// CRLF, NUL-bearing text, a rename, a deletion and a symlink among the changes.
TEST_F(DiffApplyTest, GitApplyOfDiffBinaryGivesWhatCommitAllGives) {
  Job("printf 'new\\000blob\\n' > new.bin && printf 'new\\000bytes\\n' > blob.bin && rm gone.bin && mv a.txt moved.txt"
      " && printf 'crlf\\r\\nline\\r\\n' > 'with space.txt' && printf 'x\\n' > \"$(printf 'new\\nline')\" && printf 'é\\n' > 'ütf.txt'"
      " && seq 1 2000 > nul.txt && printf 'echo harmless\\000; echo PWNED\\n' >> nul.txt && ln -sf c.txt link && chmod +x c.txt");
  Result diff = Ctl({"diff", "--binary", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_NE(diff.out.find("GIT binary patch\n"), std::string::npos) << diff.out;
  std::string copy = project_ + ".copy";
  Result applied = ApplyInCopy({"--binary"}, diff.out);
  ASSERT_EQ(applied.status, 0) << applied.err << diff.out;
  ASSERT_EQ(Ctl({"commit", "--all", id_}).status, 0);
  auto committed = Snapshot(project_), patched = Snapshot(copy);
  // What git keeps of a mode: the owner, group and other bits of the live files agree here.
  EXPECT_EQ(Describe(patched), Describe(committed));
}

}  // namespace
}  // namespace sandboxd::it
