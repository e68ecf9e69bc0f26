#ifndef AEVATAR_TESTS_INTEGRATION_CHRONO_REPLICA_SET_H_
#define AEVATAR_TESTS_INTEGRATION_CHRONO_REPLICA_SET_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "chrono_client.h"
#include "pqxx/pqxx"
#include "service_process.h"

namespace aevatar::testing {

// Real chrono-sandbox replicas on one fresh database of the process's
// private PostgreSQL cluster (SharedPostgresCluster), sharing one sealing
// key file; each replica has its own state directory and test issuer.
class ReplicaSet {
 public:
  // Creates the database and the key file; ok() says whether both worked.
  ReplicaSet();
  bool ok() const { return !url_.empty() && !key_file_.empty(); }
  const std::string& url() const { return url_; }

  // Starts replica `name` (--replica-id) with `workers` workers and a
  // queue bound large enough for the tests' bursts.
  std::unique_ptr<ChronoFixture> Start(const std::string& name, int workers) const;

  // Rows in chrono_operations (every operation, whatever its state); -1 on error.
  int64_t CountOperations() const;
  // The sealed_credentials bytes stored with operation `id` ("" when none
  // or on error).
  std::string StoredCredentials(const std::string& id) const;

 private:
  // Runs `body` in one transaction on the database (errors leave the
  // caller's defaults).
  void Query(const std::function<void(pqxx::work&)>& body) const;

  TempDir keys_;
  std::string url_;
  std::string key_file_;
};

// The operation ids whose program `service` started, one per
// "operation.started" log line, in order (a repeated id means a second run).
std::vector<std::string> StartedIds(const ServiceProcess& service);
// The operation ids `service` logged "operation.finished" for.
std::vector<std::string> FinishedIds(const ServiceProcess& service);
// The operation ids whose outcome `service` could not record
// ("operation.finish_failed": the store stayed unreachable past the run's
// lease, or another runner had settled it meanwhile).
std::vector<std::string> FinishFailedIds(const ServiceProcess& service);

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_INTEGRATION_CHRONO_REPLICA_SET_H_
