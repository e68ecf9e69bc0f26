#ifndef AEVATAR_BASE_SHA256_STREAM_H_
#define AEVATAR_BASE_SHA256_STREAM_H_

#include <memory>
#include <string>
#include <string_view>

namespace aevatar::base {

// SHA-256 over bytes given in pieces (a file read in chunks), so that a large
// input is never in memory at once (libsodium's incremental API, like
// base/crypto.h's one-shot Sha256Hex). Not thread-safe; move-only.
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(Sha256Stream&&) noexcept;
  Sha256Stream& operator=(Sha256Stream&&) noexcept;

  // Adds `data` to the digested bytes.
  void Update(std::string_view data);

  // Returns the 64 lowercase hex digits of the digest of everything added.
  // Requires: called once, as the last use.
  std::string FinalHex();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_SHA256_STREAM_H_
