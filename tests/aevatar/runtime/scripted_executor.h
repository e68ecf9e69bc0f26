#ifndef AEVATAR_TESTS_AEVATAR_SCRIPTED_EXECUTOR_H_
#define AEVATAR_TESTS_AEVATAR_SCRIPTED_EXECUTOR_H_

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "aevatar/clients/executions_transport.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator::testing {

// A test double of the executor as seen through the NyxID proxy: it answers
// each exchange with the next queued reply and records every exchange
// (method, idempotency key, If-None-Match, operation id). An exchange with no
// reply queued fails the test, so every test states the whole conversation.
class ScriptedExecutor : public ExecutionsTransport {
 public:
  struct Exchange {
    std::string method;  // Submit, Status, Result, Cancel
    std::string key;
    std::string if_none_match;
    std::string operation_id;
  };

  ScriptedExecutor& Then(int status, nlohmann::json body = nlohmann::json::object(),
                         std::vector<std::pair<std::string, std::string>> headers = {}) {
    NyxidReply reply;
    reply.status = status;
    reply.body = std::move(body);
    for (auto& [name, value] : headers) reply.headers.Add(name, value);
    replies_.push_back(std::move(reply));
    return *this;
  }

  NyxidReply Submit(const std::string& key, const nlohmann::json&) override {
    return Record({"Submit", key, "", ""});
  }
  NyxidReply Status(const std::string& id, const std::string& if_none_match) override {
    return Record({"Status", "", if_none_match, id});
  }
  NyxidReply Result(const std::string& id) override { return Record({"Result", "", "", id}); }
  NyxidReply Cancel(const std::string& id, int64_t) override {
    return Record({"Cancel", "", "", id});
  }

  const std::vector<Exchange>& exchanges() const { return exchanges_; }
  int Count(const std::string& method) const {
    int n = 0;
    for (const auto& e : exchanges_) n += e.method == method;
    return n;
  }
  bool drained() const { return replies_.empty(); }

 private:
  NyxidReply Record(Exchange exchange) {
    exchanges_.push_back(std::move(exchange));
    if (replies_.empty()) {
      ADD_FAILURE() << "unscripted exchange: " << exchanges_.back().method;
      return NyxidReply{};
    }
    NyxidReply reply = std::move(replies_.front());
    replies_.pop_front();
    return reply;
  }

  std::deque<NyxidReply> replies_;
  std::vector<Exchange> exchanges_;
};

}  // namespace aevatar::orchestrator::testing

#endif  // AEVATAR_TESTS_AEVATAR_SCRIPTED_EXECUTOR_H_
