// The listen-security rule of the services, kept apart from server.cc so it
// needs no Boost.
#include "http/service_tls.h"

#include <arpa/inet.h>

#include "absl/strings/str_cat.h"
#include "base/log.h"

namespace aevatar::http {

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost") return true;
  const std::string text(host);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, text.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

absl::Status CheckServiceTls(std::string_view service, const std::string& listen_host,
                             const ServiceTls& tls) {
  if (tls.listen.enabled() || !tls.listen.key_file.empty()) {
    if (tls.listen.cert_file.empty() || tls.listen.key_file.empty()) {
      return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
    }
  } else if (!tls.listen.client_ca_file.empty()) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
  } else if (!IsLoopbackHost(listen_host)) {
    if (!tls.insecure_listen) {
      return absl::FailedPreconditionError(absl::StrCat(
          "refusing to serve plain HTTP on ", listen_host,
          ", which other hosts can reach: give --tls-cert and --tls-key, or "
          "--insecure-listen when a TLS-terminating proxy is in front (docs/deployment.md)"));
    }
    base::Log(base::LogLevel::kWarn, "insecure_listen", "",
              {{"service", std::string(service)}, {"host", listen_host}});
  }
  if (!tls.peers.cert_file.empty() || !tls.peers.key_file.empty() || !tls.peers.ca_file.empty()) {
    if (absl::Status st = CheckClientTls(tls.peers); !st.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--ca-file/--client-cert/--client-key: ", st.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace aevatar::http
