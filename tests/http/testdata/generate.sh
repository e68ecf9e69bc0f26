#!/usr/bin/env bash
# Regenerates the TLS test fixtures (test keys only, never used outside tests):
#   ca.pem                   a private test CA (its key is discarded)
#   server.pem / server.key  signed by it for DNS:localhost and IP:127.0.0.1
#   other.pem / other.key    signed by it for DNS:other.example only (the
#                            wrong-host-name case)
#   client.pem / client.key  signed by it for client authentication (mutual TLS)
#   rogue-client.pem / .key  a client certificate from another CA (self-signed
#                            "rogue CA", also discarded): mutual TLS refuses it
# Valid for 100 years so the tests never depend on today's date.
set -euo pipefail
cd "$(dirname "$0")"
days=36500
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
  -subj "/CN=aevatar test CA" -keyout ca.key -out ca.pem \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
  -subj "/CN=rogue CA" -keyout rogue-ca.key -out rogue-ca.pem \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
leaf() {  # name subject-alt-names extended-key-usage [ca]
  local ca="${4:-ca}"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
    -keyout "$1.key" -out "$1.csr" -addext "subjectAltName=$2" \
    -addext "extendedKeyUsage=$3" -addext "basicConstraints=critical,CA:FALSE"
  openssl x509 -req -in "$1.csr" -CA "$ca.pem" -CAkey "$ca.key" -CAcreateserial -days "$days" \
    -copy_extensions copyall -out "$1.pem"
  rm "$1.csr"
}
# server.pem serves and, in the mutual-TLS tests, is also a service's client
# certificate (as docs/deployment.md has each service hold one certificate).
leaf server "DNS:localhost,IP:127.0.0.1" "serverAuth,clientAuth"
leaf other "DNS:other.example" "serverAuth"
leaf client "DNS:client" "clientAuth"
leaf rogue-client "DNS:client" "clientAuth" rogue-ca
# Nothing else is ever signed with either CA.
rm -f ca.srl ca.key rogue-ca.srl rogue-ca.key rogue-ca.pem
