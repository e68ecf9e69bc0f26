#ifndef AEVATAR_AEVATAR_ADMISSION_ADMISSION_CACHE_H_
#define AEVATAR_AEVATAR_ADMISSION_ADMISSION_CACHE_H_

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/admission/route_admission.h"

namespace aevatar::orchestrator {

// Interactive code_execute admissions reused across one credential's calls.
// An entry is the route a full admission chose and the NyxID facts digest it
// was decided on (NyxidFacts::facts_digest). A reuse sends that digest
// with the proxied request, and NyxID refuses it (412 NYXID_FACTS_CHANGED,
// nothing forwarded) once the caller's identity or routes changed; the
// caller then forgets the entry and admits afresh. So a reuse never acts on
// facts NyxID no longer holds, and NyxID still checks the exact route on
// every call. The TTL and the capacity only bound memory: a full cache drops
// the entry closest to expiry.
//
// Entries are keyed by a digest of the credential, never the credential.
// Thread-safe.
class AdmissionCache {
 public:
  struct Options {
    std::chrono::seconds ttl{60};
    size_t capacity = 4096;
  };
  explicit AdmissionCache(Options options) : options_(options) {}
  AdmissionCache() : AdmissionCache(Options{}) {}

  struct Admission {
    AdmittedRoute route;
    std::string facts_digest;
  };

  // The admission remembered for `credential`, when there is a young one.
  std::optional<Admission> Find(const std::string& credential);
  // Remembers `admission` for `credential` (one without a digest is not).
  void Remember(const std::string& credential, const Admission& admission);
  // Forgets `credential`'s admission if it is still the one decided on
  // `facts_digest` (a concurrent call may have remembered a newer one).
  void Forget(const std::string& credential, const std::string& facts_digest);

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    Admission admission;
    Clock::time_point until;
  };

  const Options options_;
  absl::Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ADMISSION_ADMISSION_CACHE_H_
