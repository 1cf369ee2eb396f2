// Progress of a long operation: nothing for work quicker than a period, the figures as they
// move (each report once), and one last report saying how it ended; the line sandboxctl draws.

#include "sandbox/operation_progress.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "progress_line.h"

namespace sandboxd {
namespace {

using namespace std::chrono_literals;

struct Reports {
  std::mutex mutex;
  std::vector<ProgressFigures> heard;
  ProgressSink Sink() {
    return [this](const std::string& operation, const ProgressFigures& figures) {
      EXPECT_EQ(operation, "commit");
      std::lock_guard lock(mutex);
      heard.push_back(figures);
    };
  }
  std::vector<ProgressFigures> Taken() {
    std::lock_guard lock(mutex);
    return heard;
  }
};

TEST(OperationProgressTest, WorkQuickerThanAPeriodSendsNothing) {
  Reports reports;
  {
    OperationProgress progress("commit", reports.Sink(), 10s);
    progress.Set({ProgressPhase::kMoving, 0, 10, 0, 0});
    progress.Advance(10);
  }
  EXPECT_TRUE(reports.Taken().empty());
}

TEST(OperationProgressTest, FiguresAreSentAsTheyMoveAndTheEndIsSaid) {
  Reports reports;
  {
    OperationProgress progress("commit", reports.Sink(), 20ms);
    progress.Set({ProgressPhase::kMoving, 0, 100, 0, 0});
    std::this_thread::sleep_for(100ms);
    progress.Advance(40);
    std::this_thread::sleep_for(100ms);
  }
  auto heard = reports.Taken();
  ASSERT_GE(heard.size(), 3u);
  EXPECT_EQ(heard.front(), (ProgressFigures{ProgressPhase::kMoving, 0, 100, 0, 0}));
  // Unchanged figures are not sent again: each report differs from the one before.
  for (size_t i = 1; i < heard.size(); ++i) EXPECT_FALSE(heard[i] == heard[i - 1]) << i;
  EXPECT_EQ(heard[heard.size() - 2], (ProgressFigures{ProgressPhase::kMoving, 40, 100, 0, 0}));
  EXPECT_EQ(heard.back(), (ProgressFigures{ProgressPhase::kDone, 100, 100, 0, 0}));
}

TEST(OperationProgressTest, AFailureIsTheLastReport) {
  Reports reports;
  {
    OperationProgress progress("commit", reports.Sink(), 20ms);
    progress.Set({ProgressPhase::kPlanning, 7, 0, 0, 0});
    std::this_thread::sleep_for(100ms);
    progress.Finish(true);
  }
  auto heard = reports.Taken();
  ASSERT_GE(heard.size(), 2u);
  EXPECT_EQ(heard.back().phase, ProgressPhase::kFailed);
  EXPECT_EQ(heard.back().entries_done, 7u);
}

TEST(ProgressLineTest, ABarWithTotalsACountWithout) {
  using sandboxctl::ProgressLine;
  EXPECT_EQ(ProgressLine({"commit", "moving", 5200, 10000, 0, 0}, 80),
            "commit: moving [###############               ]  52%  5,200/10,000 entries");
  EXPECT_EQ(ProgressLine({"commit", "planning", 3000, 0, 0, 0}, 80), "commit: planning 3,000 entries");
  // Bytes, where counted, are what the bar measures.
  std::string line = ProgressLine({"suspend", "archiving", 9000, 10000, 1 << 20, 4 << 20}, 100);
  EXPECT_NE(line.find(" 25%  9,000/10,000 entries, 1.0 MiB/4.0 MiB"), std::string::npos) << line;
  // Never wider than the terminal.
  EXPECT_LE(ProgressLine({"suspend", "archiving", 9000, 10000, 1 << 20, 4 << 20}, 40).size(), 40u);
  EXPECT_EQ(sandboxctl::Grouped(1234567), "1,234,567");
  EXPECT_EQ(sandboxctl::Grouped(999), "999");
}

}  // namespace
}  // namespace sandboxd
