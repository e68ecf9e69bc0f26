#include "base/crypto.h"

#include <sodium.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"

namespace aevatar::base {
namespace {

// libsodium must be initialised before use; sodium_init() is itself
// thread-safe and idempotent, the function-local static makes it run once.
void EnsureSodium() {
  static const bool kReady = [] {
    if (sodium_init() < 0) {
      std::fputs("aevatar: sodium_init failed\n", stderr);
      std::abort();
    }
    return true;
  }();
  (void)kReady;
}

// A broken "Requires" on key sizes is a programming error; calling libsodium
// with a short buffer would read out of bounds, so stop loudly instead.
void RequireSize(std::string_view what, std::string_view bytes, size_t size) {
  if (bytes.size() == size) return;
  std::fprintf(stderr, "aevatar: %.*s must be %zu bytes\n", static_cast<int>(what.size()),
               what.data(), size);
  std::abort();
}

const unsigned char* U8(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}
unsigned char* U8(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }

constexpr char kBase32Alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
constexpr size_t kRandomIdChars = 26;

constexpr size_t kNonceBytes = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
constexpr size_t kTagBytes = crypto_aead_xchacha20poly1305_ietf_ABYTES;
constexpr size_t kBoxKeyBytes = crypto_aead_xchacha20poly1305_ietf_KEYBYTES;

}  // namespace

std::string Sha256(std::string_view data) {
  EnsureSodium();
  std::string digest(crypto_hash_sha256_BYTES, '\0');
  crypto_hash_sha256(U8(digest), U8(data), data.size());
  return digest;
}

std::string Sha256Hex(std::string_view data) { return HexEncode(Sha256(data)); }

std::string HexEncode(std::string_view bytes) {
  EnsureSodium();
  // sodium_bin2hex writes a terminating NUL, hence the extra byte.
  std::string hex(bytes.size() * 2 + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), U8(bytes), bytes.size());
  hex.pop_back();
  return hex;
}

std::string Base64UrlEncode(std::string_view bytes) {
  EnsureSodium();
  constexpr int kVariant = sodium_base64_VARIANT_URLSAFE_NO_PADDING;
  std::string text(sodium_base64_ENCODED_LEN(bytes.size(), kVariant), '\0');
  sodium_bin2base64(text.data(), text.size(), U8(bytes), bytes.size(), kVariant);
  text.resize(text.size() - 1);  // drop the NUL libsodium appends
  return text;
}

absl::StatusOr<std::string> Base64UrlDecode(std::string_view text) {
  EnsureSodium();
  std::string bytes(text.size() / 4 * 3 + 3, '\0');
  size_t length = 0;
  // No ignore set and a null end pointer: libsodium then fails unless every
  // character is consumed, and it rejects '=', '+', '/', a dangling sixth-bit
  // character and non-zero trailing bits, so each byte string has exactly one
  // accepted encoding.
  if (sodium_base642bin(U8(bytes), bytes.size(), text.data(), text.size(), /*ignore=*/nullptr,
                        &length, /*b64_end=*/nullptr,
                        sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0) {
    return absl::InvalidArgumentError("invalid base64url text");
  }
  bytes.resize(length);
  return bytes;
}

std::string RandomBytes(size_t n) {
  EnsureSodium();
  std::string bytes(n, '\0');
  randombytes_buf(bytes.data(), n);
  return bytes;
}

std::string RandomId(std::string_view prefix) {
  std::string random = RandomBytes(kRandomIdChars);
  std::string id(prefix);
  id.reserve(prefix.size() + kRandomIdChars);
  // 256 is a multiple of 32, so the low five bits of a uniform byte are uniform.
  for (unsigned char byte : random) id.push_back(kBase32Alphabet[byte & 31]);
  return id;
}

std::string HmacSha256(std::string_view key, std::string_view message) {
  EnsureSodium();
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key.data()),
                              key.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(message.data()),
                                message.size());
  std::string mac(crypto_auth_hmacsha256_BYTES, '\0');
  crypto_auth_hmacsha256_final(&state, reinterpret_cast<unsigned char*>(mac.data()));
  return mac;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  EnsureSodium();
  const size_t common = std::min(a.size(), b.size());
  const bool same_prefix = common == 0 || sodium_memcmp(a.data(), b.data(), common) == 0;
  return same_prefix && a.size() == b.size();
}

Ed25519KeyPair GenerateEd25519KeyPair() {
  EnsureSodium();
  Ed25519KeyPair pair;
  pair.public_key.assign(crypto_sign_PUBLICKEYBYTES, '\0');
  pair.secret_key.assign(crypto_sign_SECRETKEYBYTES, '\0');
  crypto_sign_keypair(U8(pair.public_key), U8(pair.secret_key));
  return pair;
}

std::string Ed25519Sign(std::string_view secret_key, std::string_view message) {
  EnsureSodium();
  RequireSize("Ed25519 secret key", secret_key, crypto_sign_SECRETKEYBYTES);
  std::string signature(crypto_sign_BYTES, '\0');
  crypto_sign_detached(U8(signature), nullptr, U8(message), message.size(), U8(secret_key));
  return signature;
}

bool Ed25519Verify(std::string_view public_key, std::string_view message,
                   std::string_view signature) {
  EnsureSodium();
  if (public_key.size() != crypto_sign_PUBLICKEYBYTES || signature.size() != crypto_sign_BYTES) {
    return false;
  }
  return crypto_sign_verify_detached(U8(signature), U8(message), message.size(), U8(public_key)) ==
         0;
}

std::string SecretBoxSeal(std::string_view key, std::string_view plaintext) {
  EnsureSodium();
  RequireSize("secret box key", key, kBoxKeyBytes);
  std::string sealed(kNonceBytes + plaintext.size() + kTagBytes, '\0');
  // A random 192-bit nonce cannot collide in practice, so one key may seal
  // any number of messages without a counter.
  randombytes_buf(sealed.data(), kNonceBytes);
  unsigned long long cipher_length = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(U8(sealed) + kNonceBytes, &cipher_length,
                                             U8(plaintext), plaintext.size(), nullptr, 0, nullptr,
                                             U8(sealed), U8(key));
  sealed.resize(kNonceBytes + cipher_length);
  return sealed;
}

absl::StatusOr<std::string> SecretBoxOpen(std::string_view key, std::string_view sealed) {
  EnsureSodium();
  if (key.size() != kBoxKeyBytes) {
    return absl::InvalidArgumentError("secret box key must be 32 bytes");
  }
  if (sealed.size() < kNonceBytes + kTagBytes) {
    return absl::DataLossError("sealed data is truncated");
  }
  const std::string_view nonce = sealed.substr(0, kNonceBytes);
  const std::string_view cipher = sealed.substr(kNonceBytes);
  std::string plaintext(cipher.size() - kTagBytes, '\0');
  unsigned long long plain_length = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(U8(plaintext), &plain_length, nullptr, U8(cipher),
                                                 cipher.size(), nullptr, 0, U8(nonce),
                                                 U8(key)) != 0) {
    return absl::DataLossError("sealed data failed authentication (altered, or wrong key)");
  }
  plaintext.resize(plain_length);
  return plaintext;
}

absl::StatusOr<std::string> HashPassword(std::string_view password) {
  EnsureSodium();
  char hash[crypto_pwhash_STRBYTES] = {};
  if (crypto_pwhash_str_alg(hash, password.data(), password.size(),
                            crypto_pwhash_OPSLIMIT_INTERACTIVE, crypto_pwhash_MEMLIMIT_INTERACTIVE,
                            crypto_pwhash_ALG_ARGON2ID13) != 0) {
    // The only documented failure is running out of memory for Argon2.
    return absl::ResourceExhaustedError("password hashing ran out of memory");
  }
  return std::string(hash);
}

bool VerifyPassword(std::string_view hash, std::string_view password) {
  EnsureSodium();
  // libsodium reads a NUL-terminated string: refuse embedded NULs and
  // anything longer than a hash it could have written.
  if (hash.empty() || hash.size() >= crypto_pwhash_STRBYTES ||
      hash.find('\0') != std::string_view::npos) {
    return false;
  }
  const std::string terminated(hash);
  return crypto_pwhash_str_verify(terminated.c_str(), password.data(), password.size()) == 0;
}

}  // namespace aevatar::base
