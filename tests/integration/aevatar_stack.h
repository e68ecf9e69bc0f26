#ifndef AEVATAR_TESTS_INTEGRATION_AEVATAR_STACK_H_
#define AEVATAR_TESTS_INTEGRATION_AEVATAR_STACK_H_

#include <memory>
#include <string>

#include "http/client.h"
#include "nlohmann/json.hpp"
#include "nyxid_fixture.h"
#include "service_process.h"

namespace aevatar::testing {

// Users YAML for NyxID: alice (password pw-alice) with one chrono-sandbox
// route, what most full-stack tests need.
inline constexpr char kAliceWithChronoRoute[] = R"yaml(
users:
  - {username: alice, password: pw-alice}
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
)yaml";

// The secret aevatar introspects credentials with at a stack's NyxID.
inline constexpr char kStackIntrospectionSecret[] = "aevatar-test-introspection-secret";

// A stack's NyxID bootstrap: the chrono-sandbox catalog service at
// `chrono_url` (forwarding the access token, injecting a delegation token
// with proxy:* sandbox:execute), `catalog_yaml` (more "  - id: …" entries),
// aevatar registered for introspection with kStackIntrospectionSecret, then
// `users_yaml` (users:, orgs:, user_services:).
std::string StackBootstrapYaml(const std::string& chrono_url, const std::string& catalog_yaml,
                               const std::string& users_yaml);

// The three real binaries on loopback: chrono-sandbox (trusting nyxid's
// JWKS), nyxid (seeded by the test's bootstrap, with the chrono-sandbox
// catalog service pointing at that executor and aevatar registered for
// introspection), and aevatar. The bootstrap text is appended to the
// generated catalog/clients part; users' passwords are "pw-<username>".
// Everything an AevatarStack may be given beyond its users.
struct AevatarStackOptions {
  std::string users_yaml;  // users:, orgs: and user_services: sections
  std::vector<std::string> nyxid_args;
  std::vector<std::string> aevatar_args;
  std::vector<std::string> chrono_args;
  uint16_t aevatar_port = 0;
  std::string catalog_yaml;  // more catalog entries ("  - id: …" lines)
  // Every service on TLS with the test PKI (tests/http/testdata), as
  // docs/deployment.md sets it up: each verifies the others against the test
  // CA, and chrono-sandbox takes only callers with a client certificate from
  // it naming localhost (NyxID shows server.pem, which is also a client
  // certificate; client.pem from the same CA names another service).
  bool tls = false;
};

class AevatarStack {
 public:
  explicit AevatarStack(AevatarStackOptions options);
  // `users_yaml` holds the users:, orgs: and user_services: sections.
  // `aevatar_port` 0 picks a free port; a test that must name aevatar's URL
  // in the bootstrap (a NyxID route to aevatar) picks it first (PickFreePort).
  explicit AevatarStack(const std::string& users_yaml, std::vector<std::string> nyxid_args = {},
                        std::vector<std::string> aevatar_args = {}, uint16_t aevatar_port = 0);

  // Restarts a service on the same port and state, after a kill -9 when
  // `hard` (as a crash would) or a clean stop.
  void RestartAevatar(bool hard);
  void RestartChrono(bool hard);

  bool ok() const;
  NyxidFixture& nyxid() { return *nyxid_; }
  ServiceProcess& aevatar() { return *aevatar_; }
  ServiceProcess& chrono() { return *chrono_; }
  // The stack's private directory (aevatar's state is under aevatar/).
  const std::string& dir() const { return dir_.path(); }

  // Logs `username` in at NyxID ("" on failure).
  std::string Login(const std::string& username);
  // One call to aevatar with `credential` as the bearer ("" for none).
  http::ClientResponse Aevatar(const std::string& method, const std::string& path,
                               const std::string& credential, const std::string& body = "");
  // POST /api/tools/code_execute.
  http::ClientResponse Execute(const std::string& credential, const nlohmann::json& args);

 private:
  void StartAevatar(uint16_t port);
  void StartChrono(uint16_t port);

  TempDir dir_;
  std::string nyxid_url_;
  std::vector<std::string> aevatar_args_;
  std::vector<std::string> chrono_args_;
  std::unique_ptr<ServiceProcess> chrono_;
  std::unique_ptr<NyxidFixture> nyxid_;
  std::unique_ptr<ServiceProcess> aevatar_;
};

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_INTEGRATION_AEVATAR_STACK_H_
