#include "http/tls.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <map>

#include "absl/base/const_init.h"
#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace aevatar::http {
namespace {

ABSL_CONST_INIT absl::Mutex contexts_mu(absl::kConstInit);
// What is trusted and presented -> its context; never destroyed (exchanges
// may run at exit).
std::map<ClientTls, std::shared_ptr<ssl::context>>* contexts ABSL_GUARDED_BY(contexts_mu) = nullptr;

}  // namespace

absl::Status LoadCertificate(ssl::context& context, const std::string& cert_file,
                             const std::string& key_file) {
  if (cert_file.empty() || key_file.empty()) {
    return absl::InvalidArgumentError("a TLS certificate needs both its file and its key file");
  }
  beast::error_code ec;
  context.use_certificate_chain_file(cert_file, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load TLS certificate ", cert_file, ": ", ec.message()));
  }
  context.use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load TLS private key ", key_file, ": ", ec.message()));
  }
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS private key ", key_file, " does not match certificate ", cert_file));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ssl::context>> MakeClientTlsContext(const ClientTls& tls) {
  const std::string& ca_file = tls.ca_file;
  // Built from OpenSSL's own handle: Asio's constructors throw on failure.
  SSL_CTX* native = SSL_CTX_new(TLS_client_method());
  if (native == nullptr) return absl::InternalError("OpenSSL cannot create a TLS context");
  auto context = std::make_unique<ssl::context>(native);  // owns `native` from here
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
    return absl::InternalError("OpenSSL refuses TLS 1.2 as the minimum version");
  }
  beast::error_code ec;
  context->set_default_verify_paths(ec);
  if (ec)
    return absl::InternalError(absl::StrCat("cannot load the system trust store: ", ec.message()));
  if (!ca_file.empty()) {
    context->load_verify_file(ca_file, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot load TLS CA file ", ca_file, ": ", ec.message()));
    }
  }
  context->set_verify_mode(ssl::verify_peer, ec);
  if (ec)
    return absl::InternalError(absl::StrCat("cannot enable TLS verification: ", ec.message()));
  if (!tls.cert_file.empty() || !tls.key_file.empty()) {
    if (absl::Status st = LoadCertificate(*context, tls.cert_file, tls.key_file); !st.ok()) {
      return st;
    }
  }
  return context;
}

absl::StatusOr<std::shared_ptr<ssl::context>> MakeServerTlsContext(const ServerTls& tls) {
  SSL_CTX* native = SSL_CTX_new(TLS_server_method());
  if (native == nullptr) return absl::InternalError("OpenSSL cannot create a TLS context");
  auto context = std::make_shared<ssl::context>(native);  // owns `native` from here
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
    return absl::InternalError("OpenSSL refuses TLS 1.2 as the minimum version");
  }
  // Renegotiation is a client-driven CPU cost and old attack surface.
  SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (absl::Status st = LoadCertificate(*context, tls.cert_file, tls.key_file); !st.ok()) {
    return st;
  }
  if (!tls.client_ca_file.empty()) {
    beast::error_code ec;
    context->load_verify_file(tls.client_ca_file, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot load TLS client CA file ", tls.client_ca_file, ": ", ec.message()));
    }
    context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("cannot require client certificates: ", ec.message()));
    }
    // The chain check then also matches the client's certificate against
    // the name, as a client matches a server's against its URL's host.
    if (!tls.client_name.empty() &&
        X509_VERIFY_PARAM_set1_host(SSL_CTX_get0_param(native), tls.client_name.c_str(),
                                    tls.client_name.size()) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot require the client certificate name ", tls.client_name));
    }
  } else if (!tls.client_name.empty()) {
    return absl::InvalidArgumentError("a required client certificate name needs a client CA");
  }
  return context;
}

absl::StatusOr<std::shared_ptr<ssl::context>> SharedClientTlsContext(const ClientTls& tls) {
  absl::MutexLock lock(&contexts_mu);
  if (contexts == nullptr) contexts = new std::map<ClientTls, std::shared_ptr<ssl::context>>();
  auto found = contexts->find(tls);
  if (found != contexts->end()) return found->second;
  auto made = MakeClientTlsContext(tls);
  if (!made.ok()) return made.status();
  std::shared_ptr<ssl::context> shared = std::move(*made);
  contexts->emplace(tls, shared);
  return shared;
}

absl::Status PrepareTlsStream(TlsStream& stream, const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  const bool is_address = !ec;
  // RFC 6066: SNI carries DNS names only.
  if (!is_address && SSL_set_tlsext_host_name(stream.native_handle(), host.c_str()) != 1) {
    return absl::UnavailableError(absl::StrCat("TLS: cannot send server name ", host));
  }
  // Asio's check names no reason when the name does not match; recording
  // OpenSSL's own code makes the handshake error say so.
  ssl::host_name_verification check(host);
  stream.set_verify_callback(
      [check](bool preverified, ssl::verify_context& context) {
        const bool ok = check(preverified, context);
        if (preverified && !ok) {
          X509_STORE_CTX_set_error(context.native_handle(), X509_V_ERR_HOSTNAME_MISMATCH);
        }
        return ok;
      },
      ec);
  if (ec)
    return absl::UnavailableError(absl::StrCat("TLS: cannot set verification: ", ec.message()));
  return absl::OkStatus();
}

absl::Status TlsHandshakeError(TlsStream& stream, const beast::error_code& ec,
                               const std::string& where) {
  const long result = SSL_get_verify_result(stream.native_handle());
  if (result != X509_V_OK) {
    return absl::UnavailableError(absl::StrCat("TLS verification of ", where,
                                               " failed: ", X509_verify_cert_error_string(result)));
  }
  return absl::UnavailableError(
      absl::StrCat("TLS handshake with ", where, " failed: ", ec.message()));
}

}  // namespace aevatar::http
