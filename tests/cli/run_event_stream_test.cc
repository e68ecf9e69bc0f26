// The CLI's server-sent events parser (src/cli/run_event_stream): how
// `aevatar workflow run --wait stream` and `watch` split aevatar's stream.
#include "cli/run_event_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aevatar::cli {
namespace {

std::vector<SseEvent> Parse(const std::vector<std::string>& chunks) {
  SseParser parser;
  std::vector<SseEvent> events;
  for (const std::string& chunk : chunks) {
    parser.Feed(chunk, [&](const SseEvent& event) { events.push_back(event); });
  }
  return events;
}

TEST(SseParser, ReadsIdTypeAndDataWithCrLfOrLf) {
  const auto events = Parse({"id: 7\r\nevent: step.completed\r\ndata: {\"a\":1}\r\n\r\n",
                             "event: run.end\ndata: {}\n\n"});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].id, "7");
  EXPECT_EQ(events[0].type, "step.completed");
  EXPECT_EQ(events[0].data, "{\"a\":1}");
  EXPECT_EQ(events[1].type, "run.end");
  EXPECT_EQ(events[1].id, "");
}

TEST(SseParser, AnEventSplitAnywhereAcrossChunksComesOutWhole) {
  const std::string stream = "id: 12\nevent: run.started\ndata: {\"x\": \"y\"}\n\n";
  for (size_t cut = 1; cut < stream.size(); ++cut) {
    const auto events = Parse({stream.substr(0, cut), stream.substr(cut)});
    ASSERT_EQ(events.size(), 1u) << "cut at " << cut;
    EXPECT_EQ(events[0].id, "12");
    EXPECT_EQ(events[0].data, "{\"x\": \"y\"}");
  }
}

TEST(SseParser, DataLinesJoinWithNewlinesEvenWhenTheFirstIsEmpty) {
  const auto events = Parse({"data:\ndata: second\n\n", "data: a\ndata: b\ndata:\n\n"});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "\nsecond");
  EXPECT_EQ(events[1].data, "a\nb\n");
}

TEST(SseParser, CommentsAndUnknownFieldsAreNotEvents) {
  const auto events = Parse({": keep-alive\n\n", "retry: 100\n\n", ": x\ndata: real\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "real");
}

TEST(ReconnectDelay, DoublesFromHalfASecondAndStopsAtEight) {
  EXPECT_EQ(ReconnectDelay(1), std::chrono::milliseconds(500));
  EXPECT_EQ(ReconnectDelay(2), std::chrono::milliseconds(1000));
  EXPECT_EQ(ReconnectDelay(5), std::chrono::milliseconds(8000));
  EXPECT_EQ(ReconnectDelay(50), std::chrono::milliseconds(8000));
  EXPECT_EQ(ReconnectDelay(0), std::chrono::milliseconds(500));
}

}  // namespace
}  // namespace aevatar::cli
