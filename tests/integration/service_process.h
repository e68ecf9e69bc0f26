#ifndef AEVATAR_TESTS_INTEGRATION_SERVICE_PROCESS_H_
#define AEVATAR_TESTS_INTEGRATION_SERVICE_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "testing/poll.h"  // PollUntil, kHangGuard
#include "testing/temp_dir.h"

namespace aevatar::testing {

// A file of the committed test PKI (tests/http/testdata: ca.pem, server.pem,
// client.pem, …; generate.sh there says what each is).
std::string TestPki(const std::string& name);

// Path of a binary built next to the running test (build/bin/<name>).
std::string BinaryPath(const std::string& name);

// Pids of live processes whose command line (argv, NUL-separated) contains
// `needle`.
std::vector<pid_t> ProcessesMatching(const std::string& needle);

// One real service binary started for a test, on loopback. It must print
// "... port N" on its first stdout line; its stderr (the JSON log) goes to
// log_path() so tests can grep it.
class ServiceProcess {
 public:
  // Starts `argv` (argv[0] is the binary path) and waits for the port line.
  ServiceProcess(std::vector<std::string> argv, std::string log_path);
  ~ServiceProcess();  // SIGTERM, then SIGKILL after the hang guard (kHangGuard)

  bool ok() const { return port_ > 0; }
  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  // https:// for a service started with --tls-cert.
  std::string base_url() const {
    return (tls_ ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port_);
  }
  const std::string& log_path() const { return log_path_; }
  std::string ReadLog() const;
  // Waits until the log contains `needle`; false after `timeout`. The
  // services write each line whole and in order, so once a sentinel appears
  // (e.g. the diagnostic id of a request made after the ones under test),
  // every line written before it is in the log too.
  bool WaitForLog(const std::string& needle, std::chrono::milliseconds timeout = kHangGuard) const;
  // Sends GET `path` without credentials (a harmless request the service
  // answers with a problem), then waits until the log has that problem's
  // diagnostic id: every line the service wrote for earlier requests is then
  // in the log too. False when there is no such id or it never appears.
  bool WaitForSentinel(const std::string& path) const;

  // kill -9, as a crash would; waits until the process is gone.
  void KillHard();
  // SIGTERM and wait; returns the exit status.
  int Terminate();

 private:
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  bool tls_ = false;
  std::string log_path_;
};

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_INTEGRATION_SERVICE_PROCESS_H_
