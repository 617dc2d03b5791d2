// The pace of the walks over a job's files (exec/pacing.h).

#include "exec/pacing.h"

#include <gtest/gtest.h>

#include <chrono>

namespace allot::exec {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(PacedInterval, QuickWalksKeepTheBasePace) {
  EXPECT_EQ(PacedInterval(milliseconds(0), seconds(2), seconds(60)), seconds(2));
  EXPECT_EQ(PacedInterval(milliseconds(100), seconds(2), seconds(60)), seconds(2));
}

TEST(PacedInterval, ALongWalkWaitsTwentyTimesItsLength) {
  // A walk of 400,000 files that took 1.5 s waits 30 s: it takes a twentieth of a CPU.
  EXPECT_EQ(PacedInterval(milliseconds(1500), seconds(2), seconds(60)), seconds(30));
  EXPECT_EQ(PacedInterval(milliseconds(101), milliseconds(500), seconds(30)), milliseconds(2020));
}

TEST(PacedInterval, NeverLongerThanTheLongest) {
  EXPECT_EQ(PacedInterval(seconds(10), seconds(2), seconds(60)), seconds(60));
  // A longest shorter than the base is no longest at all.
  EXPECT_EQ(PacedInterval(seconds(10), seconds(2), seconds(1)), seconds(2));
}

}  // namespace
}  // namespace allot::exec
