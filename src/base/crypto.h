#ifndef AEVATAR_BASE_CRYPTO_H_
#define AEVATAR_BASE_CRYPTO_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

// Cryptographic primitives over libsodium. Byte strings are std::string.
// All functions are thread-safe (libsodium is initialised once, lazily).
namespace aevatar::base {

// SHA-256 of `data`: 32 raw bytes, or 64 lowercase hex digits.
std::string Sha256(std::string_view data);
std::string Sha256Hex(std::string_view data);

std::string HexEncode(std::string_view bytes);

// Base64url without padding (RFC 7515 §2), and its strict inverse
// (InvalidArgument on any character outside the alphabet or on padding).
std::string Base64UrlEncode(std::string_view bytes);
absl::StatusOr<std::string> Base64UrlDecode(std::string_view text);

// `n` bytes from the CSPRNG.
std::string RandomBytes(size_t n);
// `prefix` + 26 lowercase base32 characters of randomness (130 bits), e.g.
// RandomId("op_") -> "op_k3v…". Safe in URLs and paths.
std::string RandomId(std::string_view prefix);

// HMAC-SHA256 of `message` under `key` (any length): 32 raw bytes.
std::string HmacSha256(std::string_view key, std::string_view message);

// Compares two byte strings in constant time (for their common length).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

struct Ed25519KeyPair {
  std::string public_key;  // 32 bytes
  std::string secret_key;  // 64 bytes (libsodium layout: seed || public key)
};
Ed25519KeyPair GenerateEd25519KeyPair();
// Detached 64-byte signature.
std::string Ed25519Sign(std::string_view secret_key, std::string_view message);
bool Ed25519Verify(std::string_view public_key, std::string_view message,
                   std::string_view signature);

// Authenticated encryption at rest (XChaCha20-Poly1305, random nonce
// prepended). `key` is 32 bytes (see RandomBytes). Open fails with
// DataLoss when the ciphertext was altered or the key is wrong.
std::string SecretBoxSeal(std::string_view key, std::string_view plaintext);
absl::StatusOr<std::string> SecretBoxOpen(std::string_view key, std::string_view sealed);

// Password hashing with Argon2id (libsodium's crypto_pwhash_str, interactive
// limits); the result is a self-describing string.
absl::StatusOr<std::string> HashPassword(std::string_view password);
bool VerifyPassword(std::string_view hash, std::string_view password);

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_CRYPTO_H_
