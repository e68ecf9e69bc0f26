#ifndef AEVATAR_AEVATAR_RUNTIME_DEFINITION_CACHE_H_
#define AEVATAR_AEVATAR_RUNTIME_DEFINITION_CACHE_H_

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/workflow/workflow_definition.h"

namespace aevatar::orchestrator {

// Validated workflow definitions by content digest ("sha256:…" of the
// canonical form, which WorkflowFromJson recomputes), so that a run's turns
// and the runs of one workflow unseal and validate their definition once
// instead of on every turn. A digest names its content, so an entry never
// goes stale. Holds at most `capacity` entries and forgets the oldest first;
// it lives in the process that already holds the vault's keys, and nothing
// in it is written anywhere. Thread-safe.
class DefinitionCache {
 public:
  explicit DefinitionCache(size_t capacity = 256) : capacity_(capacity) {}

  // The definition whose digest is `digest`, or null.
  std::shared_ptr<const WorkflowDefinition> Find(const std::string& digest) const;
  // Remembers `definition` under its own digest.
  void Put(std::shared_ptr<const WorkflowDefinition> definition);

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<const WorkflowDefinition>> by_digest_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> oldest_first_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_RUNTIME_DEFINITION_CACHE_H_
