// sandboxd-review driven as a person (or a screen reader) would drive it, over AT-SPI, in a
// private desktop of an unprivileged test user, against the real daemon on the test system bus
// with polkitd. What the app shows is checked against sandboxctl, and what it commits against
// the live tree: a decision made in the app is the decision the daemon holds, and Commit lands
// exactly what was approved there.

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "review_app.h"

namespace sandboxd::it {
namespace {

TEST(ReviewAppTest, ShowsTheSandboxesAndTheirChangesAsJobsMakeThem) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  const std::string project = MakeLongProject(kAlice);
  // Lines 2 and 6 of long.txt: one hunk of two parts (runs of changed lines apart).
  const std::string id = SandboxAfterJob(kAlice, "gui-watch", project,
                                         "echo new > new.txt; sed -i -e 's/^line 2$/line two/' -e 's/^line 6$/line six/' long.txt");
  ASSERT_FALSE(id.empty());

  ReviewApp app(kAlice);
  ASSERT_EQ(app.Start(), "");
  // The sandbox row is named by its name and id.
  Accessible row = app.WaitForRow("gui-watch (" + id + ")");
  ASSERT_TRUE(row) << app.State();
  ASSERT_EQ(app.Select("gui-watch"), "") << app.State();
  ASSERT_TRUE(app.WaitForRow("A new.txt")) << app.State();
  ASSERT_TRUE(app.WaitForRow("M long.txt")) << app.State();

  // A job's new file appears while the app is open.
  ASSERT_EQ(w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "echo live > live.txt"}).status, 0);
  EXPECT_TRUE(app.WaitForRow("A live.txt")) << app.State();

  // A running job is listed with a button that cancels it.
  Result started = w.Sandboxctl(kAlice, {"run", "--detach", id, "--", "sleep", "600"});
  ASSERT_EQ(started.status, 0) << started.err;
  const std::string job = Trim(started.out);
  Accessible job_row = app.WaitForRow("sleep 600");
  ASSERT_TRUE(job_row) << app.State();
  Accessible cancel = WaitFor([&] { return Find(job_row, ATSPI_ROLE_PUSH_BUTTON, "Cancel job"); });
  ASSERT_TRUE(cancel) << app.State();
  EXPECT_EQ(Click(cancel), "");
  EXPECT_TRUE(WaitUntil([&] { return w.Sandboxctl(kAlice, {"jobs", id}).out.find("running") == std::string::npos; }, std::chrono::seconds(20)))
      << w.Sandboxctl(kAlice, {"jobs", id}).out;

  // Anyone on the bus can send a signal with sandboxd's interface: bob's forged ones tell the
  // app nothing (it listens to the daemon only, and reads what a signal says from the daemon).
  for (const auto& forged : std::vector<std::vector<std::string>>{
           {"--signal", "org.sandboxd.Sandbox1.Sandbox.ChangesSeen", "[(uint32 0, 'forged.txt', 'added')]", "uint32 0", "false"},
           {"--signal", "org.sandboxd.Sandbox1.Sandbox.ReviewRequested", "'forged request'", "int64 0"}}) {
    std::vector<std::string> argv = {"gdbus", "emit", "--system", "--object-path", "/org/sandboxd/Sandbox1/sandbox/" + id};
    argv.insert(argv.end(), forged.begin(), forged.end());
    Result sent = w.RunAs(kBob, argv, {.extra_env = {"DBUS_SYSTEM_BUS_ADDRESS=" + w.bus_address()}});
    ASSERT_EQ(sent.status, 0) << sent.err;
  }
  // An agent asks for review: the row carries the request.
  // The message is the agent's: an escape sequence in it is shown, never obeyed.
  Result asked = w.Gdbus(kAlice, "/org/sandboxd/Sandbox1/sandbox/" + id, "org.sandboxd.Sandbox1.Sandbox.RequestReview",
                         {"'done: please look\\u001b[2J'"});
  ASSERT_EQ(asked.status, 0) << asked.err;
  EXPECT_TRUE(app.WaitForRow("Review requested: done: please look\\033[2J")) << app.State();
  EXPECT_FALSE(FindContaining(app.app(), ATSPI_ROLE_LIST_ITEM, "forged")) << app.State();
  // ... and the desktop is told, once.
  const std::string notification = "\tReview requested: gui-watch (" + id + ")\tdone: please look\\033[2J\n";
  EXPECT_TRUE(WaitUntil([&] { return Contains(app.Notifications(), notification); })) << app.Notifications() << app.State();

  // The diff of a change, hunk by hunk.
  ASSERT_EQ(app.Select("M long.txt"), "") << app.State();
  EXPECT_TRUE(WaitFor([&] { return FindIf(app.app(), [](const Accessible& a) { return Name(a) == "Hunk 1 of long.txt"; }); }))
      << app.State();
  EXPECT_TRUE(app.WaitForLabel("+line two")) << app.State();
  // A job rewrites the change shown, its size kept (its row's words do not change): the diff
  // shown is the new one, never the one the daemon no longer holds.
  ASSERT_EQ(w.Sandboxctl(kAlice, {"run", id, "--", "sed", "-i", "s/^line two$/line TWO/", "long.txt"}).status, 0);
  EXPECT_TRUE(app.WaitForLabel("+line TWO")) << app.State();
  EXPECT_FALSE(FindContaining(app.app(), ATSPI_ROLE_LABEL, "+line two")) << app.State();
  // A part of a hunk is decided on its own.
  EXPECT_EQ(app.ClickIn("Part 2 of hunk 1 of long.txt", "Approve part"), "") << app.State();
  EXPECT_TRUE(WaitUntil([&] { return Contains(w.Sandboxctl(kAlice, {"changes", id}).out, "M long.txt [partial: hunks 1 decided in parts, of 1]"); }))
      << w.Sandboxctl(kAlice, {"changes", id}).out;
  EXPECT_TRUE(app.WaitForLabel("Hunk 1 (decided in parts)")) << app.State();
  EXPECT_EQ(app.Shot("review-app-changes"), "");
  const std::string notifications = app.Notifications();
  EXPECT_EQ(std::count(notifications.begin(), notifications.end(), '\n'), 2) << "one notification, after the ready line:\n" << notifications;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
  EXPECT_TRUE(WaitFor([&] { return FindContaining(app.app(), ATSPI_ROLE_LIST_ITEM, "gui-watch") ? Accessible() : app.app(); }))
      << "the destroyed sandbox's row stayed" << app.State();
}

TEST(ReviewAppTest, WhatIsApprovedInTheAppIsWhatTheCommitLandsAndUndoTakesItBack) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  const std::string project = MakeLongProject(kAlice);
  const std::string id = SandboxAfterJob(kAlice, "gui-commit", project,
                                         "echo new > new.txt; echo other > other.txt; "
                                         "sed -i -e 's/^line 2$/line two/' -e 's/^line 29$/line twenty-nine/' long.txt");
  ASSERT_FALSE(id.empty());
  const auto before = Snapshot(project);

  ReviewApp app(kAlice);
  ASSERT_EQ(app.Start(), "");
  ASSERT_EQ(app.Select("gui-commit"), "") << app.State();

  // The whole of new.txt, with a note for whoever made it.
  ASSERT_EQ(app.Select("A new.txt"), "") << app.State();
  Accessible note = WaitFor([&] { return Find(app.app(), ATSPI_ROLE_TEXT, "Note"); });
  ASSERT_TRUE(note) << app.State();
  EXPECT_EQ(SetText(note, "looks right"), "");
  EXPECT_EQ(app.ClickWhenSensitive("Approve file"), "") << app.State();
  EXPECT_TRUE(WaitUntil([&] { return Contains(w.Sandboxctl(kAlice, {"changes", id}).out, "A new.txt [approved]"); }))
      << w.Sandboxctl(kAlice, {"changes", id}).out;

  // Hunk 1 of long.txt approved, hunk 2 rejected.
  ASSERT_EQ(app.Select("M long.txt"), "") << app.State();
  EXPECT_EQ(app.ClickIn("Hunk 1 of long.txt", "Approve hunk"), "") << app.State();
  EXPECT_TRUE(WaitUntil([&] { return Contains(w.Sandboxctl(kAlice, {"changes", id}).out, "hunks 1 approved"); }))
      << w.Sandboxctl(kAlice, {"changes", id}).out;
  EXPECT_EQ(app.ClickIn("Hunk 2 of long.txt", "Reject hunk"), "") << app.State();
  const std::string changes = "M long.txt [partial: hunks 1 approved, hunks 2 rejected, of 2]\nA new.txt [approved]\nA other.txt\n";
  EXPECT_TRUE(WaitUntil([&] { return w.Sandboxctl(kAlice, {"changes", id}).out == changes; }))
      << w.Sandboxctl(kAlice, {"changes", id}).out;
  // The app shows the decisions the daemon now holds, hunk by hunk, in place.
  EXPECT_TRUE(app.WaitForLabel("Hunk 1 (approved)")) << app.State();
  EXPECT_TRUE(app.WaitForLabel("Hunk 2 (rejected)")) << app.State();
  Result log = w.Gdbus(kAlice, "/org/sandboxd/Sandbox1/sandbox/" + id, "org.sandboxd.Sandbox1.Sandbox.GetReviewLog", {"uint32 10"});
  EXPECT_TRUE(Contains(log.out, "'approved', ['new.txt'], 'looks right'")) << "the note was not kept with the decision: " << log.out << log.err;
  EXPECT_EQ(app.Shot("review-app-decided"), "");

  // Commit: its button counts the changes it takes, and it lands exactly them.
  EXPECT_TRUE(WaitFor([&] { return app.Button("Commit"); })) << app.State();
  EXPECT_TRUE(app.WaitForLabel("Commit (2)")) << app.State();
  EXPECT_EQ(app.ClickWhenSensitive("Commit"), "") << app.State();
  EXPECT_TRUE(app.WaitForLabel("Committed 2 changes.")) << app.State();
  EXPECT_EQ(ReadWhole(project + "/new.txt"), "new\n");
  EXPECT_FALSE(Exists(project + "/other.txt"));
  const std::string long_text = ReadWhole(project + "/long.txt");
  EXPECT_TRUE(Contains(long_text, "line two\n") && Contains(long_text, "line 29\n") && !Contains(long_text, "twenty-nine")) << long_text;
  // What the commit did not take stays, with its decision: hunk 2 rejected.
  EXPECT_TRUE(WaitUntil([&] { return w.Sandboxctl(kAlice, {"changes", id}).out == "M long.txt [rejected]\nA other.txt\n"; }))
      << w.Sandboxctl(kAlice, {"changes", id}).out;
  EXPECT_EQ(app.Shot("review-app-committed"), "");

  // Undo takes the commit back: the live tree as before it.
  EXPECT_EQ(app.ClickWhenSensitive("Undo"), "") << app.State();
  EXPECT_TRUE(app.WaitForLabel("The last commit was undone")) << app.State();
  EXPECT_EQ(Snapshot(project), before) << DescribeMismatch(Snapshot(project), before, before);

  // Discard asks first; "Keep them" keeps them, "Discard all changes" throws them away.
  EXPECT_EQ(app.ClickWhenSensitive("Discard"), "") << app.State();
  EXPECT_EQ(app.ClickWhenSensitive("Keep them"), "") << app.State();
  EXPECT_NE(w.Sandboxctl(kAlice, {"changes", id}).out, "");
  EXPECT_EQ(app.ClickWhenSensitive("Discard"), "") << app.State();
  EXPECT_EQ(app.ClickWhenSensitive("Discard all changes"), "") << app.State();
  EXPECT_TRUE(app.WaitForLabel("Every change was discarded.")) << app.State();
  EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", id}).out, "");
  EXPECT_TRUE(app.WaitForLabel("0 changes")) << app.State();
  EXPECT_EQ(Snapshot(project), before);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST(ReviewAppTest, RefusalsAreShownInTheDaemonsWordsAndChangeNothing) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();

  // A conflict: alice changed the live a.txt after the sandbox's job, which read it, changed it too.
  const std::string project = MakeLongProject(kAlice);
  const std::string id = SandboxAfterJob(kAlice, "gui-conflict", project, "echo sandbox >> a.txt");
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", "echo live >> '" + project + "/a.txt'"}).status, 0);
  const auto before = Snapshot(project);
  {
    ReviewApp app(kAlice);
    ASSERT_EQ(app.Start(), "");
    ASSERT_EQ(app.Select("gui-conflict"), "") << app.State();
    // The conflict is shown before any commit is tried.
    EXPECT_TRUE(app.WaitForRow("[conflict: changed in the live tree]")) << app.State();
    ASSERT_EQ(app.Select("M a.txt"), "") << app.State();
    EXPECT_EQ(app.ClickWhenSensitive("Approve file"), "") << app.State();
    EXPECT_TRUE(app.WaitForRow("[approved] [conflict:")) << app.State();
    EXPECT_EQ(app.ClickWhenSensitive("Commit"), "") << app.State();
    // The daemon's sentence names the path and why (conflict_test.cpp has sandboxctl's).
    EXPECT_TRUE(app.WaitForLabel("a.txt (changed in the live tree)")) << app.State();
    // In words for any client: no command-line option the app has none of.
    EXPECT_EQ(app.State().find("--force"), std::string::npos) << app.State();
    EXPECT_EQ(app.Shot("review-app-conflict"), "");
    EXPECT_EQ(Snapshot(project), before);
    // The person may commit over it, knowingly: asked first, and leaving it leaves it.
    EXPECT_EQ(app.ClickWhenSensitive("Leave the live files"), "") << app.State();
    EXPECT_EQ(Snapshot(project), before);
    // Once the question is gone its buttons cannot be pressed, nor said to be: a click on one
    // would be dropped (a screen reader's, or this test's, racing the next refusal). (The click
    // is answered before the app has acted on it.)
    for (const char* gone : {"Commit anyway", "Leave the live files"})
      EXPECT_TRUE(PollUntil([&] {
        Accessible button = app.Button(gone);
        return !button || !IsSensitive(button);
      })) << gone << " is offered while no question is asked:\n"
          << app.State();
    EXPECT_EQ(app.ClickWhenSensitive("Commit"), "") << app.State();
    EXPECT_EQ(app.ClickWhenSensitive("Commit anyway"), "") << app.State();
    EXPECT_TRUE(app.WaitForLabel("Committed 1 change.")) << app.State();
    EXPECT_EQ(ReadWhole(project + "/a.txt"), "alpha\nsandbox\n");
    // ... and Undo gives the live file back as it was.
    EXPECT_EQ(app.ClickWhenSensitive("Undo"), "") << app.State();
    EXPECT_TRUE(app.WaitForLabel("The last commit was undone")) << app.State();
  }
  EXPECT_EQ(Snapshot(project), before);
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);

  // polkit says no to bob (tests/integration/data/test.rules).
  const std::string bobs = w.MakeProject(kBob);
  const std::string bob_id = CreateSandbox(kBob, "gui-denied", bobs);
  ASSERT_FALSE(bob_id.empty());
  ASSERT_EQ(w.Sandboxctl(kBob, {"run", bob_id, "--", "sh", "-c", "echo more >> a.txt"}).status, 0);
  const auto bob_before = Snapshot(bobs);
  {
    ReviewApp app(kBob);
    ASSERT_EQ(app.Start(), "");
    ASSERT_EQ(app.Select("gui-denied"), "") << app.State();
    ASSERT_EQ(app.Select("M a.txt"), "") << app.State();
    EXPECT_EQ(app.ClickWhenSensitive("Approve file"), "") << app.State();
    EXPECT_TRUE(app.WaitForLabel("Commit (1)")) << app.State();
    EXPECT_EQ(app.ClickWhenSensitive("Commit"), "") << app.State();
    EXPECT_TRUE(app.WaitForLabel("not authorized")) << app.State();
    EXPECT_TRUE(app.WaitForLabel(bob_id)) << "the refusal names the sandbox" << app.State();
    EXPECT_EQ(app.Shot("review-app-denied"), "");
  }
  EXPECT_EQ(Snapshot(bobs), bob_before);
  EXPECT_EQ(w.Sandboxctl(kBob, {"changes", bob_id}).out, "M a.txt [approved]\n");
  EXPECT_EQ(w.Sandboxctl(kBob, {"destroy", bob_id}).status, 0);
}

// A job may name a file "run.sh:1": approving that file in the app approves that file, never
// hunk 1 of run.sh (a selector is (path, hunk, part), not a name parsed back).
TEST(ReviewAppTest, AFileNamedLikeAHunkIsDecidedAsTheFileItIs) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  const std::string project = MakeLongProject(kAlice);
  ASSERT_EQ(w.RunAs(kAlice, {"cp", project + "/long.txt", project + "/run.sh"}).status, 0);
  const std::string id = SandboxAfterJob(kAlice, "gui-names", project,
                                         "sed -i -e 's/^line 2$/two/' -e 's/^line 29$/x/' run.sh; echo hunk > run.sh:1");
  ASSERT_FALSE(id.empty());
  ReviewApp app(kAlice);
  ASSERT_EQ(app.Start(), "");
  ASSERT_EQ(app.Select("gui-names"), "") << app.State();
  ASSERT_EQ(app.Select("A run.sh:1"), "") << app.State();
  EXPECT_TRUE(app.WaitForLabel("+hunk")) << app.State();
  EXPECT_EQ(app.ClickWhenSensitive("Approve file"), "") << app.State();
  EXPECT_TRUE(WaitUntil([&] { return w.Sandboxctl(kAlice, {"changes", id}).out == "M run.sh\nA run.sh:1 [approved]\n"; }))
      << w.Sandboxctl(kAlice, {"changes", id}).out;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// A commit that takes a while shows how far it has come (the daemon's Progress signal), and
// the bar goes once it is done.
TEST(ReviewAppTest, ALongCommitShowsItsProgress) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  const std::string project = w.MakeProject(kAlice);
  const std::string id = CreateSandbox(kAlice, "gui-progress", project);
  ASSERT_FALSE(id.empty());
  // 20,000 files: their moves take long past the 200 ms a commit works before it reports.
  ASSERT_EQ(w.Sandboxctl(kAlice, {"run", "--no-live-feed", id, "--", "sh", "-c", "mkdir many && cd many && seq -f 'f%05g' 20000 | xargs touch"},
                         {.timeout = std::chrono::seconds(300)})
                .status,
            0);
  ASSERT_EQ(w.Sandboxctl(kAlice, {"approve", id, "--all"}).status, 0);
  ReviewApp app(kAlice);
  ASSERT_EQ(app.Start(), "");
  ASSERT_EQ(app.Select("gui-progress"), "") << app.State();
  EXPECT_TRUE(app.WaitForLabel("Commit (20001)")) << app.State();
  EXPECT_FALSE(FindContaining(app.app(), ATSPI_ROLE_PROGRESS_BAR, "Commit progress")) << "a bar before any commit" << app.State();
  EXPECT_EQ(app.ClickWhenSensitive("Commit"), "") << app.State();
  EXPECT_TRUE(WaitFor([&] { return FindContaining(app.app(), ATSPI_ROLE_PROGRESS_BAR, "Commit progress"); }, std::chrono::seconds(60)))
      << app.State();
  EXPECT_TRUE(app.WaitForLabel("Committed 20001 changes.")) << app.State();
  EXPECT_FALSE(FindContaining(app.app(), ATSPI_ROLE_PROGRESS_BAR, "Commit progress")) << "the bar stayed" << app.State();
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}, {.timeout = std::chrono::seconds(120)}).status, 0);
}

// What a job wrote is shown as the terminal shows it: a control byte cannot clear, rewrite or
// hide a line, binary content is marked as such, and a file its owner cannot read is said to be so.
TEST(ReviewAppTest, ContentIsShownVisiblyBinaryAndUnreadableAreMarked) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  const std::string project = w.MakeProject(kAlice);
  const std::string id = SandboxAfterJob(kAlice, "gui-content", project,
                                         "printf 'shown\\033[2J\\rhidden\\n' > tricky.txt; printf 'a\\000b' > data.bin; "
                                         "echo secret > closed.txt; chmod 000 closed.txt");
  ASSERT_FALSE(id.empty());
  ReviewApp app(kAlice);
  ASSERT_EQ(app.Start(), "");
  ASSERT_EQ(app.Select("gui-content"), "") << app.State();
  ASSERT_EQ(app.Select("A tricky.txt"), "") << app.State();
  // ESC and CR written as ^[ and ^M (marked), so the line keeps all it holds.
  EXPECT_TRUE(app.WaitForLabel("+shown^[[2J^Mhidden")) << app.State();
  ASSERT_EQ(app.Select("A data.bin"), "") << app.State();
  EXPECT_TRUE(app.WaitForLabel("Binary content")) << app.State();
  ASSERT_EQ(app.Select("A closed.txt"), "") << app.State();
  EXPECT_TRUE(app.WaitForRow("[unreadable: not shown, approved only by name]")) << app.State();
  EXPECT_TRUE(app.WaitForLabel("Its owner cannot read this file")) << app.State();
  EXPECT_FALSE(FindContaining(app.app(), ATSPI_ROLE_LABEL, "secret")) << app.State();
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// No argument is passed over in silence (nor handed to GTK to read).
TEST(ReviewAppTest, AnArgumentItDoesNotKnowIsRefused) {
  SANDBOXD_REQUIRE_WORLD();
  Result bogus = World().RunAs(kAlice, {SANDBOXD_REVIEW_BIN, "--bogus"});
  EXPECT_EQ(bogus.status, 2);
  EXPECT_TRUE(Contains(bogus.err, "unknown argument '--bogus'")) << bogus.err;
  Result version = World().RunAs(kAlice, {SANDBOXD_REVIEW_BIN, "--version"});
  EXPECT_EQ(version.status, 0) << version.err;
  EXPECT_TRUE(version.out.starts_with("sandboxd-review ")) << version.out;
}

// The system bus going away (a stopping system) is said, once, and the app does not end.
TEST(ReviewAppTest, ALostBusIsSaidAndTheAppStays) {
  SANDBOXD_REQUIRE_WORLD();
  const std::string project = MakeLongProject(kAlice);
  const std::string id = SandboxAfterJob(kAlice, "gui-lost", project, "echo sandbox >> a.txt");
  ASSERT_FALSE(id.empty());
  ReviewApp app(kAlice);
  ASSERT_EQ(app.Start(), "");
  ASSERT_EQ(app.Select("gui-lost"), "") << app.State();
  ASSERT_TRUE(app.WaitForRow("M a.txt")) << app.State();
  // No change chosen: nothing to decide is offered (GTK 4.8 would say a button in an
  // insensitive box is sensitive; each is told itself).
  auto offered = [&](const std::string& name) {
    Accessible button = app.Button(name);
    return button && IsSensitive(button);
  };
  EXPECT_TRUE(PollUntil([&] { return !offered("Approve file") && !offered("Reject file"); })) << app.State();
  ASSERT_EQ(app.Select("M a.txt"), "") << app.State();
  EXPECT_TRUE(PollUntil([&] { return offered("Approve file") && offered("Approve hunk") && offered("Undo"); })) << app.State();
  // A running job, cancellable while there is a bus.
  ASSERT_EQ(World().Sandboxctl(kAlice, {"run", "--detach", id, "--", "sleep", "600"}).status, 0);
  EXPECT_TRUE(app.WaitForRow("sleep 600")) << app.State();
  EXPECT_TRUE(PollUntil([&] { return offered("Cancel job"); })) << app.State();
  ASSERT_NE(World().RestartBusUnderDaemon(), -1);
  EXPECT_TRUE(app.WaitForLabel("The connection to the bus was lost")) << app.State();
  EXPECT_TRUE(Find(app.app(), ATSPI_ROLE_FRAME, "Sandboxd Review")) << "the app ended" << app.State();
  // Still there after its timers have run (the jobs are asked for every 2 s: a call that cannot
  // be sent any more ended the app from inside GTK's handler).
  std::this_thread::sleep_for(std::chrono::seconds(5));
  EXPECT_TRUE(Find(app.app(), ATSPI_ROLE_FRAME, "Sandboxd Review")) << "the app ended after the bus went" << app.State();
  // Nothing can be asked of the daemon now, and nothing says it can.
  for (const char* name : {"Approve file", "Reject file", "Approve hunk", "Reject hunk", "Commit", "Undo", "Discard", "Cancel job"})
    EXPECT_TRUE(PollUntil([&] { return !offered(name); })) << name << " is offered with no bus:\n" << app.State();
}

// --user: the app speaks to the user's own sandboxd on the session bus (user mode, where no
// root and no polkit are involved), not to the system's.
TEST(ReviewAppTest, WithUserItReviewsTheSandboxesOfTheUsersOwnSandboxd) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  const std::string project = MakeLongProject(kAlice);
  const std::string state = std::string(getpwnam(kAlice)->pw_dir) + "/it-gui-user-state-" + std::to_string(getpid());
  const std::string before = ReadWhole(project + "/a.txt");
  std::vector<std::string> user_env;  // the session's, once it is up
  auto ctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "--user");
    return w.Sandboxctl(kAlice, args, {.extra_env = user_env});
  };
  // Removed however the test ends, after the user's sandboxd (the session's, below) has ended.
  struct RemovedAtEnd {
    std::string path;
    ~RemovedAtEnd() { World().RunAs("root", {"rm", "-rf", "--one-file-system", path}); }
  } state_dir{state};
  std::string id;
  {
    ReviewApp app(kAlice, {}, {"--user"});
    app.BeforeApp([&](GuiSession& session) -> std::string {
      user_env = {"DBUS_SESSION_BUS_ADDRESS=" + session.session_bus_address(), "XDG_RUNTIME_DIR=" + session.dir() + "/runtime",
                  "XDG_STATE_HOME=" + state, std::string("SANDBOXD_HELPER=") + SANDBOXD_HELPER_BIN};
      if (session.StartApp({SANDBOXD_BIN, "--user"}, user_env) < 0) return "sandboxd --user did not start: " + session.AppLog();
      if (!WaitUntil([&] { return ctl({"list"}).status == 0; }, std::chrono::seconds(20)))
        return "sandboxd --user does not answer on the session bus: " + session.AppLog();
      id = Trim(ctl({"create", "--name", "gui-user", project}).out);
      Result job = ctl({"run", id, "--", "sh", "-c", "echo user >> a.txt"});
      return job.status == 0 ? "" : "the job failed: " + job.err;
    });
    ASSERT_EQ(app.Start(), "");
    ASSERT_FALSE(id.empty());
    // The system's sandboxd has no such sandbox: what the app shows is the user's daemon's.
    EXPECT_EQ(w.Sandboxctl(kAlice, {"list"}).out.find("gui-user"), std::string::npos);
    ASSERT_EQ(app.Select("gui-user"), "") << app.State();
    ASSERT_EQ(app.Select("M a.txt"), "") << app.State();
    EXPECT_EQ(app.ClickWhenSensitive("Approve file"), "") << app.State();
    EXPECT_TRUE(app.WaitForRow("[approved]")) << app.State();
    EXPECT_NE(ctl({"changes", id}).out.find("[approved]"), std::string::npos);
    EXPECT_EQ(app.ClickWhenSensitive("Commit"), "") << app.State();
    EXPECT_TRUE(app.WaitForLabel("Committed 1 change.")) << app.State();
    EXPECT_EQ(ReadWhole(project + "/a.txt"), before + "user\n");
    EXPECT_EQ(app.ClickWhenSensitive("Undo"), "") << app.State();
    EXPECT_TRUE(app.WaitForLabel("The last commit was undone")) << app.State();
    EXPECT_EQ(ReadWhole(project + "/a.txt"), before);
    EXPECT_EQ(ctl({"destroy", id}).status, 0);
  }  // the session, the app and the user's sandboxd end here
}

TEST(ReviewAppTest, TheDesktopFileAndMetainfoValidate) {
  const std::string dir = kSourceDir + "/client/review/";
  Result desktop = World().RunAs("root", {"desktop-file-validate", dir + "org.sandboxd.Review.desktop"});
  EXPECT_EQ(desktop.status, 0) << desktop.out << desktop.err;
  EXPECT_EQ(desktop.out + desktop.err, "") << "hints and warnings count too";
  Result metainfo = World().RunAs("root", {"appstreamcli", "validate", "--no-net", "--explain", dir + "org.sandboxd.Review.metainfo.xml"});
  EXPECT_EQ(metainfo.status, 0) << metainfo.out << metainfo.err;
}

}  // namespace
}  // namespace sandboxd::it
