#ifndef AEVATAR_TESTS_TESTING_POSTGRES_CLUSTER_H_
#define AEVATAR_TESTS_TESTING_POSTGRES_CLUSTER_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace aevatar::testing {

// A private PostgreSQL cluster for tests: Debian's server binaries (the
// newest /usr/lib/postgresql/NN/bin) run `initdb` in a fresh directory under
// /tmp, and `postgres` listens on a free loopback port and on a Unix socket
// in that directory. No system service, no shared state: the destructor
// stops the server (fast shutdown) and removes the directory.
//
// PostgreSQL refuses to run as root; when the test runs as root (CI), the
// server binaries run as the `postgres` system user (setpriv), which owns
// the directory. Logins are trusted (loopback and the private socket only)
// as the superuser `aevatar_test`.
//
// Not thread-safe; start one per test process (SharedPostgresCluster).
class PostgresCluster {
 public:
  PostgresCluster();
  ~PostgresCluster();
  PostgresCluster(const PostgresCluster&) = delete;
  PostgresCluster& operator=(const PostgresCluster&) = delete;

  // False when PostgreSQL's server is not installed: the caller skips
  // (GTEST_SKIP() << error()). scripts/setup installs it.
  bool installed() const { return !bin_dir_.empty(); }
  // Whether the server is accepting connections; error() says why not.
  bool ok() const { return pid_ > 0; }
  const std::string& error() const { return error_; }
  uint16_t port() const { return port_; }

  // Creates an empty database and returns its libpq URI
  // (postgresql://aevatar_test@127.0.0.1:PORT/NAME), or "" with error() set.
  std::string CreateDatabase();
  // The URI of database `name` on this cluster.
  std::string Url(const std::string& name) const;
  // Stops the server (fast shutdown: every session is cut) and starts it
  // again on the same port, keeping the data. False, with error(), when it
  // does not come back.
  bool Restart();

 private:
  bool Start();
  // Starts the server on `port` and waits until it accepts connections.
  bool Launch(uint16_t port);
  bool InitDb();
  // A server binary's name and arguments ("initdb -D …") as a shell command
  // that runs it as the postgres user when this process is root.
  std::string ServerCommand(const std::string& args) const;

  std::string bin_dir_;  // e.g. /usr/lib/postgresql/15/bin; "" when not installed
  std::string dir_;      // the cluster's temp directory (data/, socket, logs)
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  int next_database_ = 0;
  std::string error_;
};

// One cluster per test process, started on first use and stopped at exit.
// (ctest runs each TEST in its own process, so each test gets a fresh one.)
PostgresCluster& SharedPostgresCluster();

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_POSTGRES_CLUSTER_H_
