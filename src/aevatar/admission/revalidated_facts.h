#ifndef AEVATAR_AEVATAR_ADMISSION_REVALIDATED_FACTS_H_
#define AEVATAR_AEVATAR_ADMISSION_REVALIDATED_FACTS_H_

// The workflow runtime's re-read of NyxID facts (step_turns.cc) at the cost
// of one bodiless request while they hold. The facts last read for a
// credential are kept with NyxID's digest of them (NyxidFacts::facts_digest,
// confirmed against both bodies read); a re-read first asks GET
// /api/v1/keys with If-None-Match on that digest. NyxID answers 304 only
// when the caller's /me and /keys are still exactly the documents the
// digest covers, so the kept facts are then what a full read would return.
// Any other answer reads both documents afresh (ReadNyxidFacts), which maps
// every error as before and replaces or forgets what was kept.
//
// Kept in memory only, keyed by a digest of the credential, never the
// credential; at most `capacity` credentials (past it, the memo starts
// afresh). Thread-safe.
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/admission/route_admission.h"
#include "aevatar/clients/nyxid_client.h"
#include "aevatar/clients/nyxid_route_writer.h"

namespace aevatar::orchestrator {

class RevalidatedFacts {
 public:
  explicit RevalidatedFacts(const NyxidClient* nyxid, size_t capacity = 4096)
      : nyxid_(nyxid), capacity_(capacity) {}

  // What ReadNyxidFacts(nyxid, credential) would answer now.
  absl::StatusOr<NyxidFacts> Read(const std::string& credential);

 private:
  std::optional<NyxidFacts> Kept(const std::string& key);
  void Keep(const std::string& key, const absl::StatusOr<NyxidFacts>& facts);

  const NyxidClient* nyxid_;
  const size_t capacity_;
  absl::Mutex mu_;
  std::unordered_map<std::string, NyxidFacts> kept_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ADMISSION_REVALIDATED_FACTS_H_
