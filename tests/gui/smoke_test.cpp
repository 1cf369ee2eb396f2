// The GUI test infrastructure tested on its own, with a tiny GTK 4 app (gui_probe.cpp) in place
// of sandboxd-review: a GuiSession comes up, the app appears over AT-SPI, and a click, typing
// and a row selection reach it and show in its labels; a screenshot is a PNG.

#include <gtest/gtest.h>

#include "atspi_driver.h"
#include "gui_session.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

constexpr const char* kProbeName = "gui-probe";  // the basename of its argv[0], as GTK reports it

/// What a failed step shows: the app's tree and its output.
std::string ProbeState(const GuiSession& session, const Accessible& app) {
  return "\n---- accessibility tree ----\n" + DumpTree(app) + "---- app log ----\n" + session.AppLog();
}

TEST(GuiSmokeTest, ProbeIsDrivenOverAtspi) {
  SANDBOXD_REQUIRE_WORLD();
  GuiSession session(kAlice);
  std::string why;
  ASSERT_TRUE(session.Start(why)) << why;
  AtspiDriver driver(session.a11y_bus_address());
  ASSERT_EQ(driver.error(), "");
  const pid_t probe = session.StartApp({SANDBOXD_GUI_PROBE_BIN});
  ASSERT_GT(probe, 0) << session.AppLog();

  Accessible app = driver.WaitForApp(kProbeName, probe);
  ASSERT_TRUE(app) << "the probe did not appear on the accessibility bus (running: " << session.AppRunning(probe) << ")"
                   << ProbeState(session, driver.Desktop());
  ASSERT_TRUE(WaitFor([&] { return Find(app, ATSPI_ROLE_FRAME, "Probe"); })) << ProbeState(session, app);

  Accessible button = Find(app, ATSPI_ROLE_PUSH_BUTTON, "Press me");
  Accessible pressed = Find(app, ATSPI_ROLE_LABEL, "not pressed");
  ASSERT_TRUE(button && pressed) << ProbeState(session, app);
  EXPECT_EQ(Text(pressed), "not pressed");
  EXPECT_EQ(Click(button), "");
  EXPECT_TRUE(PollUntil([&] { return Text(pressed) == "pressed"; })) << Text(pressed) << ProbeState(session, app);
  Accessible disabled = Find(app, ATSPI_ROLE_PUSH_BUTTON, "Not now");
  EXPECT_FALSE(IsSensitive(disabled));
  EXPECT_EQ(Click(disabled), "button 'Not now' is insensitive");

  // GTK 4.8: an Entry is a `text`, a SearchEntry an `entry`.
  Accessible entry = Find(app, ATSPI_ROLE_TEXT, "Type here");
  ASSERT_TRUE(entry) << ProbeState(session, app);
  EXPECT_EQ(SetText(entry, "hello"), "");
  EXPECT_TRUE(WaitFor([&] { return Find(app, ATSPI_ROLE_LABEL, "typed: hello"); })) << ProbeState(session, app);

  Accessible row = Find(app, ATSPI_ROLE_LIST_ITEM, "row two");
  ASSERT_TRUE(row) << ProbeState(session, app);
  EXPECT_EQ(FindAll(app, ATSPI_ROLE_LIST_ITEM, "row ").size(), 3u);
  EXPECT_EQ(SelectRow(row), "");
  EXPECT_TRUE(WaitFor([&] { return Find(app, ATSPI_ROLE_LABEL, "selected: row two"); })) << ProbeState(session, app);

  const std::string shot = session.dir() + "/probe.png";
  EXPECT_EQ(session.Screenshot(shot), "");
  EXPECT_GT(ReadWhole(shot).size(), 1000u);

  session.StopApp(probe);
  EXPECT_FALSE(session.AppRunning(probe));
  EXPECT_NE(Click(button), "");  // an error at once, not a hang on an app that has gone
  EXPECT_TRUE(PollUntil([&] { return !driver.FindApp(kProbeName, probe); })) << DumpTree(driver.Desktop(), 1);
}

// A second user's session in the same test program, while the first user's is still up: tests
// of sandboxd-review drive alice's and bob's apps from one process.
TEST(GuiSmokeTest, TwoSessionsAtOnce) {
  SANDBOXD_REQUIRE_WORLD();
  GuiSession alice(kAlice), bob(kBob);
  std::string why;
  ASSERT_TRUE(alice.Start(why)) << why;
  ASSERT_TRUE(bob.Start(why)) << why;
  EXPECT_NE(alice.display(), bob.display());
  AtspiDriver alice_driver(alice.a11y_bus_address()), bob_driver(bob.a11y_bus_address());
  ASSERT_EQ(alice_driver.error(), "");
  ASSERT_EQ(bob_driver.error(), "");
  const pid_t alices = alice.StartApp({SANDBOXD_GUI_PROBE_BIN});
  const pid_t bobs = bob.StartApp({SANDBOXD_GUI_PROBE_BIN});
  Accessible alice_app = alice_driver.WaitForApp(kProbeName, alices);
  Accessible bob_app = bob_driver.WaitForApp(kProbeName, bobs);
  ASSERT_TRUE(alice_app) << alice.AppLog();
  ASSERT_TRUE(bob_app) << bob.AppLog();
  // Each bus has its own user's app only.
  EXPECT_FALSE(alice_driver.FindApp(kProbeName, bobs));
  EXPECT_FALSE(bob_driver.FindApp(kProbeName, alices));
  Accessible bob_button = WaitFor([&] { return Find(bob_app, ATSPI_ROLE_PUSH_BUTTON, "Press me"); });
  EXPECT_EQ(Click(bob_button), "");
  EXPECT_TRUE(WaitFor([&] { return Find(bob_app, ATSPI_ROLE_LABEL, "pressed"); })) << ProbeState(bob, bob_app);
  EXPECT_TRUE(Find(alice_app, ATSPI_ROLE_LABEL, "not pressed")) << ProbeState(alice, alice_app);
}

}  // namespace
}  // namespace sandboxd::it
