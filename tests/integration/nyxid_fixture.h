#ifndef AEVATAR_TESTS_INTEGRATION_NYXID_FIXTURE_H_
#define AEVATAR_TESTS_INTEGRATION_NYXID_FIXTURE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "http/client.h"
#include "nlohmann/json.hpp"
#include "service_process.h"

namespace aevatar::testing {

// A free loopback TCP port (for services that must know each other's URL
// before both are up): PickFreePortRange(1).
uint16_t PickFreePort();

// The first of `count` consecutive loopback ports that are all free, chosen
// below the kernel's ephemeral range (ip_local_port_range), so the client
// sockets of other tests can never take one between the pick and the bind.
// For `aevatar up --port-base`, which listens on base, base+1 and base+2.
uint16_t PickFreePortRange(int count);

// A real `nyxid serve` on loopback, seeded from `bootstrap_yaml`, plus a small
// client. Its JSON log goes to dir()/nyxid.log.
class NyxidFixture {
 public:
  explicit NyxidFixture(const std::string& bootstrap_yaml, std::vector<std::string> extra_args = {},
                        uint16_t port = 0);

  bool ok() const { return service_ && service_->ok(); }
  // Stops the broker and starts it again on the same port and state, with
  // `extra_args` in place of the constructor's (e.g. another --public-url).
  void Restart(std::vector<std::string> extra_args);
  ServiceProcess& service() { return *service_; }
  std::string url() const { return service_->base_url(); }
  const std::string& dir() const { return dir_.path(); }

  // One exchange; `bearer` "" sends no Authorization.
  http::ClientResponse Call(const std::string& method, const std::string& path,
                            const std::string& bearer, const std::string& body = "",
                            std::vector<std::pair<std::string, std::string>> headers = {});
  // POST /api/v1/auth/login; returns the access token ("" on failure).
  std::string Login(const std::string& username, const std::string& password);
  // POST /api/v1/agent-keys; returns the whole response body.
  nlohmann::json CreateAgentKey(const std::string& bearer, const std::string& label,
                                const std::vector<std::string>& allowed = {});
  // The /keys entry with `slug` visible to `bearer` (null when none).
  nlohmann::json KeyBySlug(const std::string& bearer, const std::string& slug);

 private:
  void StartService(uint16_t port, const std::vector<std::string>& extra_args);

  TempDir dir_;
  std::unique_ptr<ServiceProcess> service_;
};

nlohmann::json JsonOf(const http::ClientResponse& response);

// Asserts a problem+json answer with `status` and typed `code`.
void ExpectProblem(const http::ClientResponse& response, int status, const std::string& code);

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_INTEGRATION_NYXID_FIXTURE_H_
