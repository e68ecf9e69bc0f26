#ifndef AEVATAR_TESTS_CHRONO_OPERATION_STORE_SUITE_H_
#define AEVATAR_TESTS_CHRONO_OPERATION_STORE_SUITE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "chrono/operation_store.h"
#include "gtest/gtest.h"

namespace aevatar::chrono {

// The lease the suite's claims take (the stores take any positive length).
inline constexpr int64_t kTestLeaseMs = 10000;

// Returns a fresh, empty store; each call is independent of the others. It
// may GTEST_SKIP() (and return null) when its backend is not installed.
using OperationStoreFactory = std::function<std::unique_ptr<OperationStore>()>;

// The OperationStore contract, written once for every implementation. Each
// implementation's test instantiates it with its factory:
//
//   INSTANTIATE_TEST_SUITE_P(Sqlite, OperationStoreSuite,
//                            ::testing::Values(OperationStoreFactory(MakeSqlite)));
//
// The cases live in operation_store_suite.cc (operations, idempotency,
// cancel, retention) and operation_store_lease_suite.cc (leases).
class OperationStoreSuite : public ::testing::TestWithParam<OperationStoreFactory> {
 protected:
  void SetUp() override;

  // Stores `op` and asserts (non-fatally) that it was newly created.
  Operation Create(const Operation& op);
  // Claims the next operation and asserts (non-fatally) there was one.
  Operation Claim(const std::string& runner_id, int64_t now_ms);

  std::unique_ptr<OperationStore> store_;
};

// Returns a fresh queued operation with distinct, recognisable payloads.
Operation NewOperation(const std::string& id, const std::string& owner, const std::string& key,
                       int64_t created_at_ms = 1000);

// From `threads` threads at once, thread i calls store_for(i).CreateOrGet
// for a fresh operation "op_<i>" of owner "alice" with one shared key;
// expects exactly one creation (the creator gets its own) and one id for all.
void ExpectConcurrentSameKeyCreatesMakeOne(const std::function<OperationStore&(int)>& store_for,
                                           int threads);

// Expects every field of `actual` to equal `expected`.
void ExpectSameOperation(const Operation& actual, const Operation& expected);

}  // namespace aevatar::chrono

#endif  // AEVATAR_TESTS_CHRONO_OPERATION_STORE_SUITE_H_
