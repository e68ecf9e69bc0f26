#ifndef AEVATAR_TESTS_INTEGRATION_CHRONO_CLIENT_H_
#define AEVATAR_TESTS_INTEGRATION_CHRONO_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include "http/client.h"
#include "nlohmann/json.hpp"
#include "service_process.h"
#include "test_issuer.h"

namespace aevatar::testing {

// A real `chrono-sandbox serve` on loopback with a test issuer's JWKS, plus a
// small client for it. Restart() keeps the state directory.
class ChronoFixture {
 public:
  explicit ChronoFixture(std::vector<std::string> extra_args = {});

  bool ok() const { return service_ && service_->ok(); }
  ServiceProcess& service() { return *service_; }
  const TestIssuer& issuer() const { return issuer_; }
  const std::string& dir() const { return dir_.path(); }

  void Restart();

  // One exchange as `subject` (a valid delegation token unless `token` is
  // given; "" sends none).
  http::ClientResponse Call(const std::string& method, const std::string& path,
                            const std::string& body = "", const std::string& subject = "alice",
                            std::vector<std::pair<std::string, std::string>> headers = {},
                            const std::string* token = nullptr);
  // GET /metrics as an operator's local scraper asks it: no delegation token
  // (a request carrying one came through NyxID's proxy and is refused).
  http::ClientResponse Metrics();
  // POST /executions with an Idempotency-Key.
  http::ClientResponse Submit(const nlohmann::json& body, const std::string& key,
                              const std::string& subject = "alice");
  // Polls the status until done (or the timeout); returns the last document.
  nlohmann::json WaitDone(const std::string& operation_id, int timeout_secs = 60,
                          const std::string& subject = "alice");

 private:
  void Start();
  TempDir dir_;
  TestIssuer issuer_;
  std::vector<std::string> extra_args_;
  std::unique_ptr<ServiceProcess> service_;
};

nlohmann::json BodyJson(const http::ClientResponse& response);

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_INTEGRATION_CHRONO_CLIENT_H_
