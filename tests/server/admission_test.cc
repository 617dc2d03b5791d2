// What the HTTP server counts when it admits a connection: every loopback address is one client,
// and the reading connection a new one displaces is the oldest of its client's (over the
// per-address budget), else the oldest of all (over the budget in all).

#include "server/admission.h"

#include <gtest/gtest.h>

namespace allot::server {
namespace {

namespace ip = boost::asio::ip;

ip::address Ip(const char* text) { return ip::make_address(text); }

TEST(AdmissionKey, EveryLoopbackAddressIsOne) {
  const ip::address local = Ip("127.0.0.1");
  for (const char* peer : {"127.0.0.1", "127.0.5.9", "127.255.255.254", "127.1.2.3", "::1",
                           "::ffff:127.0.0.1", "::ffff:127.9.8.7"}) {
    EXPECT_EQ(AdmissionKey(Ip(peer)), local) << peer;
  }
}

TEST(AdmissionKey, OtherAddressesAreTheirOwn) {
  EXPECT_EQ(AdmissionKey(Ip("10.0.0.7")), Ip("10.0.0.7"));
  EXPECT_EQ(AdmissionKey(Ip("128.0.0.1")), Ip("128.0.0.1"));
  EXPECT_EQ(AdmissionKey(Ip("126.255.255.255")), Ip("126.255.255.255"));
  EXPECT_EQ(AdmissionKey(Ip("2001:db8::1")), Ip("2001:db8::1"));
  EXPECT_EQ(AdmissionKey(Ip("::2")), Ip("::2"));
  // An IPv4 client of a dual-stack listener counts as the same client as over IPv4.
  EXPECT_EQ(AdmissionKey(Ip("::ffff:10.0.0.7")), Ip("10.0.0.7"));
  EXPECT_NE(AdmissionKey(Ip("10.0.0.7")), AdmissionKey(Ip("10.0.0.8")));
}

TEST(ReadingConnections, CountsPerKeyAndInAll) {
  ReadingConnections reading;
  const ip::address a = Ip("127.0.0.1");
  const ip::address b = Ip("10.0.0.2");
  reading.Begin(1, a);
  reading.Begin(2, a);
  reading.Begin(3, b);
  reading.Begin(2, a);  // already reading: no second count
  EXPECT_EQ(reading.CountOf(a), 2U);
  EXPECT_EQ(reading.CountOf(b), 1U);
  EXPECT_EQ(reading.size(), 3U);
  reading.End(2);
  reading.End(2);   // no longer reading: nothing happens
  reading.End(99);  // never read
  EXPECT_EQ(reading.CountOf(a), 1U);
  EXPECT_EQ(reading.size(), 2U);
  reading.End(1);
  reading.End(3);
  EXPECT_EQ(reading.size(), 0U);
  EXPECT_EQ(reading.CountOf(a), 0U);
  EXPECT_FALSE(reading.Oldest());
  EXPECT_FALSE(reading.OldestOf(a));
}

TEST(ReadingConnections, UnderBothBudgetsNothingIsDisplaced) {
  ReadingConnections reading;
  reading.Begin(1, Ip("127.0.0.1"));
  reading.Begin(2, Ip("10.0.0.2"));
  EXPECT_FALSE(reading.Displaced(Ip("127.0.0.1"), 2, 3));
  EXPECT_FALSE(reading.Displaced(Ip("10.0.0.3"), 1, 3));
}

TEST(ReadingConnections, OverItsKeysBudgetTheOldestOfThatKeyIsDisplaced) {
  ReadingConnections reading;
  const ip::address a = Ip("127.0.0.1");
  const ip::address b = Ip("10.0.0.2");
  reading.Begin(1, b);  // the oldest of all, but another key's
  reading.Begin(7, a);
  reading.Begin(5, a);
  const auto displaced = reading.Displaced(a, 2, 100);
  ASSERT_TRUE(displaced);
  EXPECT_EQ(displaced->serial, 7U);  // began first, whatever its serial
  EXPECT_EQ(displaced->key, a);
  reading.End(7);
  EXPECT_FALSE(reading.Displaced(a, 2, 100));
}

TEST(ReadingConnections, OverTheBudgetInAllTheOldestOfAllIsDisplaced) {
  ReadingConnections reading;
  reading.Begin(1, Ip("10.0.0.1"));
  reading.Begin(2, Ip("10.0.0.2"));
  reading.Begin(3, Ip("10.0.0.3"));
  const auto displaced = reading.Displaced(Ip("10.0.0.4"), 16, 3);
  ASSERT_TRUE(displaced);
  EXPECT_EQ(displaced->serial, 1U);
  EXPECT_EQ(displaced->key, Ip("10.0.0.1"));
}

TEST(ReadingConnections, ReadingAgainGoesToTheBack) {
  // A keep-alive connection that has been open longest but began its request last is the newest.
  ReadingConnections reading;
  const ip::address a = Ip("127.0.0.1");
  reading.Begin(1, a);
  reading.Begin(2, a);
  reading.End(1);
  reading.Begin(1, a);
  EXPECT_EQ(reading.OldestOf(a)->serial, 2U);
  EXPECT_EQ(reading.Oldest()->serial, 2U);
}

TEST(ReadingConnections, APromptClientOutlastsBudgetMinusOneNewcomers) {
  // The guarantee the server rests on: with a budget of B per key, a connection is displaced
  // only once B newer ones from its key began reading while it still reads.
  constexpr std::size_t kBudget = 4;
  ReadingConnections reading;
  const ip::address a = Ip("127.0.0.1");
  ReadingConnections::Serial next = 0;
  auto admit = [&] {
    if (const auto displaced = reading.Displaced(a, kBudget, 1000)) reading.End(displaced->serial);
    reading.Begin(next, a);
    return next++;
  };
  for (int i = 0; i < 10; ++i) admit();  // a flood that never finishes a request
  const auto prompt = admit();
  for (std::size_t i = 0; i + 1 < kBudget; ++i) {
    admit();
    EXPECT_EQ(reading.CountOf(a), kBudget);
  }
  EXPECT_EQ(reading.OldestOf(a)->serial, prompt);  // still reading: its turn comes next
  admit();
  EXPECT_NE(reading.OldestOf(a)->serial, prompt);
}

}  // namespace
}  // namespace allot::server
