// Suspend and resume over several roots: the figures the sandbox reports are the whole
// sandbox's, so they only move on from root to root, whatever each root's helper says.

#include "lifecycle/roots_progress.h"

#include <gtest/gtest.h>

namespace sandboxd {
namespace {

ArchiveProgress Figures(uint64_t entries_done, uint64_t entries_total, uint64_t bytes_done, uint64_t bytes_total) {
  return {entries_done, entries_total, bytes_done, bytes_total};
}

TEST(RootsProgressTest, TotalsKnownAheadHoldAndWhatIsDoneAddsUp) {
  RootsProgress progress(ProgressPhase::kArchiving, Figures(0, 30, 0, 3000));
  EXPECT_EQ(progress.Of(Figures(4, 10, 400, 1000)), (ProgressFigures{ProgressPhase::kArchiving, 4, 30, 400, 3000}));
  // The helper's last line came before its end (it writes at most one per 100 ms): the root
  // counts as wholly done.
  progress.NextRoot({.entries = 10, .bytes = 77});
  EXPECT_EQ(progress.Of(Figures(0, 20, 0, 2000)), (ProgressFigures{ProgressPhase::kArchiving, 10, 30, 1000, 3000}));
  EXPECT_EQ(progress.Of(Figures(20, 20, 2000, 2000)), (ProgressFigures{ProgressPhase::kArchiving, 30, 30, 3000, 3000}));
}

TEST(RootsProgressTest, TotalsNotKnownAheadGrowFromWhatIsDone) {
  RootsProgress progress(ProgressPhase::kRestoring, Figures(0, 0, 0, 0));
  EXPECT_EQ(progress.Of(Figures(5, 0, 50, 100)), (ProgressFigures{ProgressPhase::kRestoring, 5, 0, 50, 100}));
  progress.NextRoot({.entries = 8, .bytes = 100});
  EXPECT_EQ(progress.Of(Figures(1, 0, 10, 60)), (ProgressFigures{ProgressPhase::kRestoring, 9, 0, 110, 160}))
      << "entries: the root's own count at its end; bytes: its total, done";
}

TEST(RootsProgressTest, WhatIsDoneNeverPassesATotal) {
  // A count ahead that passed an entry over, or a layer that grew: the total follows.
  RootsProgress progress(ProgressPhase::kArchiving, Figures(0, 5, 0, 100));
  EXPECT_EQ(progress.Of(Figures(7, 7, 150, 150)), (ProgressFigures{ProgressPhase::kArchiving, 7, 7, 150, 150}));
}

TEST(RootsProgressTest, FiguresNeverGoBackAcrossRoots) {
  RootsProgress progress(ProgressPhase::kArchiving, Figures(0, 300, 0, 0));
  uint64_t last = 0;
  for (int root = 0; root < 3; ++root) {
    for (uint64_t done = 0; done <= 100; done += 25) {
      ProgressFigures figures = progress.Of(Figures(done, 100, 0, 0));
      EXPECT_GE(figures.entries_done, last) << "root " << root << ", " << done;
      EXPECT_EQ(figures.entries_total, 300u);
      last = figures.entries_done;
    }
    progress.NextRoot({.entries = 100});
  }
  EXPECT_EQ(last, 300u);
}

}  // namespace
}  // namespace sandboxd
