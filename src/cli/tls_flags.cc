#include "cli/tls_flags.h"

namespace aevatar::cli {

void AddTlsFlags(CLI::App* serve, http::ServiceTls& tls, const std::string& peers,
                 const std::string& ca_flags) {
  auto* cert = serve->add_option("--tls-cert", tls.listen.cert_file,
                                 "serve HTTPS with this PEM certificate chain (leaf first)");
  auto* key = serve->add_option("--tls-key", tls.listen.key_file, "the certificate's private key");
  cert->needs(key);
  key->needs(cert);
  auto* client_ca =
      serve
          ->add_option("--tls-client-ca", tls.listen.client_ca_file,
                       "mutual TLS: accept only callers with a client certificate from this CA")
          ->needs(cert);
  serve
      ->add_option("--tls-client-name", tls.listen.client_name,
                   "mutual TLS: the client certificate must also name this DNS name "
                   "(e.g. only NyxID's certificate, when one CA signs every service)")
      ->needs(client_ca);
  serve->add_option(
      ca_flags, tls.peers.ca_file,
      "PEM CA certificate(s) that verify " + peers + " over https, besides the system trust store");
  auto* client_cert =
      serve->add_option("--client-cert", tls.peers.cert_file,
                        "client certificate (PEM) shown to " + peers + " under mutual TLS");
  auto* client_key =
      serve->add_option("--client-key", tls.peers.key_file, "the client certificate's key");
  client_cert->needs(client_key);
  client_key->needs(client_cert);
  serve->add_flag("--insecure-listen", tls.insecure_listen,
                  "allow plain HTTP on a non-loopback --listen address (behind a TLS proxy); "
                  "logged as a warning");
}

}  // namespace aevatar::cli
