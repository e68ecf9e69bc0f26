#ifndef AEVATAR_TESTS_AEVATAR_CLIENTS_CANNED_SERVER_H_
#define AEVATAR_TESTS_AEVATAR_CLIENTS_CANNED_SERVER_H_

#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "http/server.h"

// A real http::Server on loopback that answers each path with a canned
// status and body: a stand-in for NyxID (or the executor behind its proxy)
// that sends exactly the bytes a test wants, malformed ones included.
namespace aevatar::orchestrator::testing {

class CannedServer {
 public:
  // Starts on 127.0.0.1 with a free port; check ok() before use.
  CannedServer();
  ~CannedServer();

  bool ok() const { return server_ != nullptr; }
  // "http://127.0.0.1:<port>".
  std::string url() const;
  // Requests for `path` (without the query) get `status` and `body`
  // (application/json); unknown paths get 404 with an empty body.
  void Answer(const std::string& path, int status, std::string body);

 private:
  struct Canned {
    absl::Mutex mu;
    std::map<std::string, std::pair<int, std::string>> answers ABSL_GUARDED_BY(mu);
  };
  // Shared with the handler so a late request never touches freed memory.
  std::shared_ptr<Canned> canned_ = std::make_shared<Canned>();
  std::unique_ptr<http::Server> server_;
};

}  // namespace aevatar::orchestrator::testing

#endif  // AEVATAR_TESTS_AEVATAR_CLIENTS_CANNED_SERVER_H_
