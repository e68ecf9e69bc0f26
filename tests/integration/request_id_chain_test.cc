// One user call, one request id: aevatar's call to NyxID carries the id it
// logs under, and NyxID's proxy passes its own to chrono-sandbox, so the
// three real binaries' log lines for one code_execute share that id. The
// calls between them reuse kept-alive connections (ClientRequest::pool);
// a second call gets its own id all the way through.
#include <string>

#include "aevatar_stack.h"
#include "gtest/gtest.h"
#include "http/client.h"

namespace aevatar::testing {
namespace {

http::ClientResponse ExecuteWithRequestId(AevatarStack& stack, const std::string& bearer,
                                          const std::string& request_id) {
  http::ClientRequest request;
  request.method = "POST";
  request.url = stack.aevatar().base_url() + "/api/tools/code_execute";
  request.headers.Set("Authorization", "Bearer " + bearer);
  request.headers.Set("Content-Type", "application/json");
  request.headers.Set("X-Request-Id", request_id);
  request.body = R"({"language":"bash","source":"echo chained"})";
  request.timeout = std::chrono::seconds(120);
  auto response = http::Fetch(request);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? *response : http::ClientResponse{};
}

TEST(RequestIdChain, OneCodeExecuteHasOneRequestIdInAllThreeLogs) {
  AevatarStack stack(kAliceWithChronoRoute);
  ASSERT_TRUE(stack.ok());
  const std::string alice = stack.Login("alice");
  ASSERT_FALSE(alice.empty());
  const std::string ids[] = {"chain-test-first-call", "chain-test-second-call"};
  for (const std::string& id : ids) {
    http::ClientResponse response = ExecuteWithRequestId(stack, alice, id);
    ASSERT_EQ(response.status, 200) << response.body;
    EXPECT_NE(response.body.find("chained"), std::string::npos) << response.body;
    EXPECT_EQ(response.headers.Get("X-Request-Id").value_or(""), id);
    const std::string field = "\"request_id\":\"" + id + "\"";
    EXPECT_TRUE(stack.aevatar().WaitForLog(field)) << "aevatar";
    EXPECT_TRUE(stack.nyxid().service().WaitForLog(field)) << "nyxid";
    EXPECT_TRUE(stack.chrono().WaitForLog(field)) << "chrono-sandbox";
  }
}

}  // namespace
}  // namespace aevatar::testing
