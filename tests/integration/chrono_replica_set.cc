#include "chrono_replica_set.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "store/pg_pool.h"
#include "testing/postgres_cluster.h"

namespace aevatar::testing {
namespace {

// Writes 32 bytes from the kernel's CSPRNG to `path`, mode 0600; false on error.
bool WriteRandomKey(const std::string& path) {
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  std::string key(32, '\0');
  if (!urandom.read(key.data(), static_cast<std::streamsize>(key.size()))) return false;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool written = ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size());
  return ::close(fd) == 0 && written;
}

// The tag of every log line of `service` whose event is `event`.
std::vector<std::string> TagsOf(const ServiceProcess& service, const std::string& event) {
  std::vector<std::string> tags;
  std::istringstream lines(service.ReadLog());
  std::string line;
  while (std::getline(lines, line)) {
    const nlohmann::json json = nlohmann::json::parse(line, nullptr, false);
    if (json.is_object() && json.value("event", "") == event) tags.push_back(json.value("tag", ""));
  }
  return tags;
}

}  // namespace

ReplicaSet::ReplicaSet() {
  url_ = SharedPostgresCluster().CreateDatabase();
  if (WriteRandomKey(keys_.path() + "/sealing.key")) key_file_ = keys_.path() + "/sealing.key";
}

std::unique_ptr<ChronoFixture> ReplicaSet::Start(const std::string& name, int workers) const {
  return std::make_unique<ChronoFixture>(std::vector<std::string>{
      "--store", url_, "--replica-id", name, "--sealing-key-file", key_file_, "--workers",
      std::to_string(workers), "--durable-queue-depth", "1000"});
}

int64_t ReplicaSet::CountOperations() const {
  int64_t count = -1;
  Query([&](pqxx::work& tx) {
    count = tx.exec("SELECT count(*) FROM chrono_operations")[0][0].as<int64_t>();
  });
  return count;
}

std::string ReplicaSet::StoredCredentials(const std::string& id) const {
  std::string sealed;
  Query([&](pqxx::work& tx) {
    pqxx::result rows =
        tx.exec_params("SELECT sealed_credentials FROM chrono_operations WHERE id = $1", id);
    if (!rows.empty()) sealed = pqxx::binarystring(rows[0][0]).str();
  });
  return sealed;
}

void ReplicaSet::Query(const std::function<void(pqxx::work&)>& body) const {
  absl::StatusOr<std::unique_ptr<store::PgPool>> pool = store::PgPool::Connect(url_, 1);
  if (!pool.ok()) return;
  (*pool)
      ->Transact([&](pqxx::work& tx) {
        body(tx);
        return absl::OkStatus();
      })
      .IgnoreError();  // the callers' defaults say "failed"
}

std::vector<std::string> StartedIds(const ServiceProcess& service) {
  return TagsOf(service, "operation.started");
}

std::vector<std::string> FinishedIds(const ServiceProcess& service) {
  return TagsOf(service, "operation.finished");
}

std::vector<std::string> FinishFailedIds(const ServiceProcess& service) {
  return TagsOf(service, "operation.finish_failed");
}

}  // namespace aevatar::testing
