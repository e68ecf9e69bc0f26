#include "fake_executor.h"

#include <utility>

namespace aevatar::orchestrator::testing {

class FakeTransport : public ExecutionsTransport {
 public:
  explicit FakeTransport(FakeExecutor* executor) : executor_(executor) {}
  NyxidReply Submit(const std::string& key, const nlohmann::json& body) override {
    return executor_->Submit(key, body);
  }
  NyxidReply Status(const std::string& id, const std::string& inm) override {
    return executor_->Status(id, inm);
  }
  NyxidReply Result(const std::string& id) override { return executor_->Result(id); }
  NyxidReply Cancel(const std::string& id, int64_t deadline) override {
    return executor_->Cancel(id, deadline);
  }

 private:
  FakeExecutor* executor_;
};

std::unique_ptr<ExecutionsTransport> FakeExecutor::Transport() {
  return std::make_unique<FakeTransport>(this);
}

std::vector<Exchange> FakeExecutor::exchanges() const {
  absl::MutexLock lock(&mu_);
  return exchanges_;
}

int FakeExecutor::CountOf(const std::string& kind) const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const Exchange& e : exchanges_) n += e.kind == kind;
  return n;
}

void FakeExecutor::Record(Exchange exchange) {
  exchange.at_ms = clock != nullptr ? clock->load() : 0;
  exchanges_.push_back(std::move(exchange));
}

NyxidReply FakeExecutor::StatusDoc(Op& op) {
  NyxidReply reply;
  reply.status = 200;
  reply.body = {{"operation_id", op.id},
                {"status", op.status},
                {"done", op.status != "queued" && op.status != "running"}};
  reply.headers.Set("ETag", "\"" + op.id + "-v" + std::to_string(op.version) + "\"");
  if (!reply.body["done"].get<bool>()) reply.headers.Set("Retry-After", "1");
  return reply;
}

NyxidReply FakeExecutor::Submit(const std::string& key, const nlohmann::json& body) {
  absl::MutexLock lock(&mu_);
  Record({"submit", key, "", 0, 0, body});
  auto [it, created] = by_key_.try_emplace(key);
  if (created) {
    it->second.id = "op_fake" + std::to_string(by_key_.size());
    key_of_id_[it->second.id] = key;
  }
  NyxidReply reply = StatusDoc(it->second);
  reply.status = 202;
  reply.headers.Set("Location", "/executions/" + it->second.id);
  return reply;
}

NyxidReply FakeExecutor::Status(const std::string& id, const std::string& if_none_match) {
  absl::MutexLock lock(&mu_);
  Record({"status", "", if_none_match, 0});
  auto key = key_of_id_.find(id);
  if (key == key_of_id_.end()) return {404, {{"code", "OPERATION_NOT_FOUND"}}, {}, ""};
  Op& op = by_key_[key->second];
  if (op.status == "queued" || op.status == "running") {
    if (++op.polls > polls_before_done) {
      op.status = "succeeded";
    } else {
      op.status = "running";
    }
    ++op.version;
  }
  NyxidReply reply = StatusDoc(op);
  if (!if_none_match.empty() && if_none_match == reply.headers.Get("ETag").value_or("")) {
    reply.status = 304;
    reply.body = nullptr;
  }
  return reply;
}

NyxidReply FakeExecutor::Result(const std::string& id) {
  if (before_result) before_result();
  absl::MutexLock lock(&mu_);
  Record({"result", "", "", 0});
  auto key = key_of_id_.find(id);
  if (key == key_of_id_.end()) return {404, {{"code", "OPERATION_NOT_FOUND"}}, {}, ""};
  Op& op = by_key_[key->second];
  if (op.status == "queued" || op.status == "running") {
    return {409, {{"code", "OPERATION_NOT_TERMINAL"}}, {}, ""};
  }
  return {200,
          {{"operation_id", op.id},
           {"status", op.status},
           {"success", op.status == "succeeded"},
           {"exit_code", 0},
           {"stdout", stdout_text},
           {"stderr", ""},
           {"timed_out", false},
           {"verdict", "ok"}},
          {},
          ""};
}

NyxidReply FakeExecutor::Cancel(const std::string& id, int64_t deadline) {
  absl::MutexLock lock(&mu_);
  Record({"cancel", "", "", deadline});
  auto key = key_of_id_.find(id);
  if (key == key_of_id_.end()) return {404, {{"code", "OPERATION_NOT_FOUND"}}, {}, ""};
  Op& op = by_key_[key->second];
  if (!ignore_cancel && (op.status == "queued" || op.status == "running")) {
    op.status = "cancelled";
    ++op.version;
  }
  return StatusDoc(op);
}

}  // namespace aevatar::orchestrator::testing
