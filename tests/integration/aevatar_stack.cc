#include "aevatar_stack.h"

#include <fstream>

#include "base/crypto.h"

namespace aevatar::testing {
namespace {

// The listener's certificate and the test CA for the calls to the others.
std::vector<std::string> ServiceTlsArgs() {
  return {"--tls-cert",          TestPki("server.pem"), "--tls-key",
          TestPki("server.key"), "--ca-file",           TestPki("ca.pem")};
}

void Append(std::vector<std::string>& to, const std::vector<std::string>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

std::string StackBootstrapYaml(const std::string& chrono_url, const std::string& catalog_yaml,
                               const std::string& users_yaml) {
  return "catalog:\n"
         "  - id: chrono-sandbox\n    slug: chrono-sandbox\n    kind: http\n"
         "    base_url: " +
         chrono_url +
         "\n"
         "    default_policy: {forward_access_token: true, inject_delegation_token: true,\n"
         "                     delegation_token_scope: 'proxy:* sandbox:execute'}\n" +
         catalog_yaml +
         "clients:\n"
         "  - name: aevatar\n    secret_sha256: " +
         base::Sha256Hex(kStackIntrospectionSecret) + "\n" + users_yaml;
}

void AevatarStack::StartChrono(uint16_t port) {
  std::vector<std::string> argv = {BinaryPath("chrono-sandbox"),
                                   "serve",
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(port),
                                   "--state-dir",
                                   dir_.path() + "/chrono",
                                   "--jwks-url",
                                   nyxid_url_ + "/.well-known/jwks.json",
                                   "--nyxid-base-url",
                                   nyxid_url_};
  argv.insert(argv.end(), chrono_args_.begin(), chrono_args_.end());
  chrono_ = std::make_unique<ServiceProcess>(argv, dir_.path() + "/chrono.log");
}

void AevatarStack::StartAevatar(uint16_t port) {
  std::vector<std::string> argv = {BinaryPath("aevatar"),
                                   "serve",
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(port),
                                   "--state-dir",
                                   dir_.path() + "/aevatar",
                                   "--nyxid-url",
                                   nyxid_url_,
                                   "--introspection-secret-file",
                                   dir_.path() + "/introspection.secret"};
  argv.insert(argv.end(), aevatar_args_.begin(), aevatar_args_.end());
  aevatar_ = std::make_unique<ServiceProcess>(argv, dir_.path() + "/aevatar.log");
}

void AevatarStack::RestartAevatar(bool hard) {
  const uint16_t port = aevatar_->port();
  if (hard) aevatar_->KillHard();
  aevatar_.reset();
  StartAevatar(port);
}

void AevatarStack::RestartChrono(bool hard) {
  const uint16_t port = chrono_->port();
  if (hard) chrono_->KillHard();
  chrono_.reset();
  StartChrono(port);
}

AevatarStack::AevatarStack(const std::string& users_yaml, std::vector<std::string> nyxid_args,
                           std::vector<std::string> aevatar_args, uint16_t aevatar_port)
    : AevatarStack(AevatarStackOptions{.users_yaml = users_yaml,
                                       .nyxid_args = std::move(nyxid_args),
                                       .aevatar_args = std::move(aevatar_args),
                                       .chrono_args = {},
                                       .aevatar_port = aevatar_port,
                                       .catalog_yaml = ""}) {}

AevatarStack::AevatarStack(AevatarStackOptions options)
    : aevatar_args_(std::move(options.aevatar_args)), chrono_args_(std::move(options.chrono_args)) {
  const uint16_t nyxid_port = PickFreePort();
  nyxid_url_ =
      (options.tls ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(nyxid_port);
  if (options.tls) {
    Append(chrono_args_, ServiceTlsArgs());
    // Only NyxID: its certificate (server.pem) names localhost; client.pem,
    // from the same CA, names "client".
    Append(chrono_args_, {"--tls-client-ca", TestPki("ca.pem"), "--tls-client-name", "localhost"});
    Append(options.nyxid_args, ServiceTlsArgs());
    Append(options.nyxid_args, {"--client-cert", TestPki("server.pem"), "--client-key",
                                TestPki("server.key"), "--public-url", nyxid_url_});
    Append(aevatar_args_, ServiceTlsArgs());
  }
  StartChrono(0);
  const std::string bootstrap =
      StackBootstrapYaml(chrono_->base_url(), options.catalog_yaml, options.users_yaml);
  nyxid_ = std::make_unique<NyxidFixture>(bootstrap, std::move(options.nyxid_args), nyxid_port);
  std::ofstream(dir_.path() + "/introspection.secret") << kStackIntrospectionSecret << "\n";
  StartAevatar(options.aevatar_port);
}

bool AevatarStack::ok() const { return chrono_->ok() && nyxid_->ok() && aevatar_->ok(); }

std::string AevatarStack::Login(const std::string& username) {
  return nyxid_->Login(username, "pw-" + username);
}

http::ClientResponse AevatarStack::Aevatar(const std::string& method, const std::string& path,
                                           const std::string& credential, const std::string& body) {
  http::ClientRequest request;
  request.method = method;
  request.url = aevatar_->base_url() + path;
  request.body = body;
  request.timeout = std::chrono::seconds(120);
  request.tls.ca_file = TestPki("ca.pem");  // https stacks only
  if (!body.empty()) request.headers.Set("Content-Type", "application/json");
  if (!credential.empty()) request.headers.Set("Authorization", "Bearer " + credential);
  auto response = http::Fetch(request);
  if (!response.ok()) return {0, {}, std::string(response.status().message())};
  return *response;
}

http::ClientResponse AevatarStack::Execute(const std::string& credential,
                                           const nlohmann::json& args) {
  return Aevatar("POST", "/api/tools/code_execute", credential, args.dump());
}

}  // namespace aevatar::testing
