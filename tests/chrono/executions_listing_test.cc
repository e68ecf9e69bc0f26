// GET /executions in-process: the caller's own operations only (owner-scoped:
// another caller sees nothing of yours), newest first, filtered by status,
// paged by an opaque cursor, and a typed 400 for a bad status, limit or
// cursor.
#include <set>
#include <string>

#include "chrono_harness.h"
#include "gtest/gtest.h"
#include "testing/poll.h"

namespace aevatar::chrono {
namespace {

using ::aevatar::testing::PollUntil;
using nlohmann::json;

const json kListedProgram = {{"language", "bash"}, {"script", "echo listed"}};

std::string SubmitAs(ChronoHarness& h, const std::string& key, const std::string& subject) {
  http::Response r = h.Submit(kListedProgram, key, subject);
  EXPECT_EQ(r.status, 202) << r.body;
  return BodyOf(r).value("operation_id", "");
}

json ListAs(ChronoHarness& h, const std::string& query, const std::string& subject) {
  http::Response r = h.Call("GET", "/executions" + query, "", {}, subject);
  EXPECT_EQ(r.status, 200) << r.body;
  return BodyOf(r);
}

std::vector<std::string> IdsOf(const json& page) {
  std::vector<std::string> ids;
  for (const json& item : page.value("executions", json::array())) {
    ids.push_back(item.value("operation_id", ""));
  }
  return ids;
}

void ExpectBadRequest(const http::Response& r, const std::string& code) {
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(BodyOf(r).value("code", ""), code) << r.body;
  EXPECT_FALSE(BodyOf(r).value("diagnostic_id", "").empty());
}

TEST(ExecutionsListing, AnotherCallerSeesNothingOfYours) {
  ChronoHarness h;
  ASSERT_TRUE(h.Start().ok());
  h.runner().Open();
  const std::string bobs_old = SubmitAs(h, "b0", "bob");
  h.clock().Advance(5);
  const std::string first = SubmitAs(h, "a1", "alice");
  h.clock().Advance(5);
  const std::string second = SubmitAs(h, "a2", "alice");
  h.clock().Advance(5);
  const std::string bobs = SubmitAs(h, "b1", "bob");
  // Alice's newest first, none of Bob's; Bob's own only; a stranger's empty.
  EXPECT_EQ(IdsOf(ListAs(h, "", "alice")), (std::vector<std::string>{second, first}));
  EXPECT_EQ(IdsOf(ListAs(h, "", "bob")), (std::vector<std::string>{bobs, bobs_old}));
  const json mallory = ListAs(h, "", "mallory");
  EXPECT_TRUE(IdsOf(mallory).empty());
  EXPECT_FALSE(mallory.contains("next_cursor"));
  // Alice's cursor in Bob's hands pages through Bob's operations older than
  // the cursor's position, never hers.
  const json page = ListAs(h, "?limit=1", "alice");
  ASSERT_TRUE(page.contains("next_cursor")) << page.dump();
  const std::string cursor = page.value("next_cursor", "");
  EXPECT_EQ(IdsOf(ListAs(h, "?cursor=" + cursor, "bob")), (std::vector<std::string>{bobs_old}));
  // The items are status documents: no source, no output.
  const json item = ListAs(h, "", "alice")["executions"][0];
  EXPECT_FALSE(item.contains("script"));
  EXPECT_FALSE(item.contains("stdout"));
  EXPECT_FALSE(item.value("status", "").empty());
}

TEST(ExecutionsListing, PagesAndStatusFilter) {
  ChronoHarness h;
  ASSERT_TRUE(h.Start().ok());
  h.runner().Open();
  std::set<std::string> submitted;
  for (int i = 0; i < 5; ++i) {
    submitted.insert(SubmitAs(h, "k" + std::to_string(i), "alice"));
    h.clock().Advance(1);
  }
  ASSERT_TRUE(PollUntil(
      [&] { return IdsOf(ListAs(h, "?status=succeeded", "alice")).size() == submitted.size(); }));
  EXPECT_TRUE(IdsOf(ListAs(h, "?status=queued", "alice")).empty());
  std::set<std::string> seen;
  std::string query = "?limit=2";
  int pages = 0;
  for (; pages < 10; ++pages) {
    const json page = ListAs(h, query, "alice");
    for (const std::string& id : IdsOf(page)) EXPECT_TRUE(seen.insert(id).second) << id;
    if (!page.contains("next_cursor")) break;
    query = "?limit=2&cursor=" + page.value("next_cursor", "");
  }
  EXPECT_EQ(seen, submitted);
  EXPECT_EQ(pages, 2);  // 2 + 2 + 1
}

TEST(ExecutionsListing, BadParametersAreTyped400s) {
  ChronoHarness h;
  ASSERT_TRUE(h.Start().ok());
  ExpectBadRequest(h.Call("GET", "/executions?status=done"), "INVALID_STATUS");
  ExpectBadRequest(h.Call("GET", "/executions?limit=0"), "INVALID_LIMIT");
  ExpectBadRequest(h.Call("GET", "/executions?limit=1000"), "INVALID_LIMIT");
  ExpectBadRequest(h.Call("GET", "/executions?limit=x"), "INVALID_LIMIT");
  ExpectBadRequest(h.Call("GET", "/executions?cursor=not-a-cursor"), "INVALID_CURSOR");
}

}  // namespace
}  // namespace aevatar::chrono
