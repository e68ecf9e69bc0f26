#ifndef AEVATAR_TESTS_INTEGRATION_SERVICE_PROCESS_H_
#define AEVATAR_TESTS_INTEGRATION_SERVICE_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace aevatar::testing {

// Path of a binary built next to the running test (build/bin/<name>).
std::string BinaryPath(const std::string& name);

// A fresh private temporary directory, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One real service binary started for a test, on loopback. It must print
// "... port N" on its first stdout line; its stderr (the JSON log) goes to
// log_path() so tests can grep it.
class ServiceProcess {
 public:
  // Starts `argv` (argv[0] is the binary path) and waits for the port line.
  ServiceProcess(std::vector<std::string> argv, std::string log_path);
  ~ServiceProcess();  // SIGTERM, then SIGKILL after 5 s

  bool ok() const { return port_ > 0; }
  uint16_t port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& log_path() const { return log_path_; }
  std::string ReadLog() const;

  // kill -9, as a crash would; waits until the process is gone.
  void KillHard();
  // SIGTERM and wait; returns the exit status.
  int Terminate();

 private:
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string log_path_;
};

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_INTEGRATION_SERVICE_PROCESS_H_
