// responses-double: a TEST DOUBLE of a Responses-API model provider (see
// doubles/responses_double.h). Prints "listening on port N", then serves until
// SIGINT or SIGTERM.
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "cli/wait_for_signal.h"
#include "doubles/responses_double.h"
#include "http/server.h"
#include "os/atomic_file.h"

int main(int argc, char** argv) {
  CLI::App app{"responses-double: a test double of an OpenAI Responses-API provider"};
  std::string listen = "127.0.0.1:0";
  std::string api_key_file;
  aevatar::doubles::ResponsesDoubleOptions options;
  app.add_option("--listen", listen, "HOST:PORT (port 0 picks one)");
  app.add_option("--api-key-file", api_key_file, "require this provider key as the bearer");
  app.add_option("--record", options.record_path, "append one JSON line per request here");
  CLI11_PARSE(app, argc, argv);

  auto address = aevatar::http::ParseListenAddress(listen);
  if (!address.ok()) {
    std::cerr << "responses-double: " << address.status().message() << "\n";
    return 2;
  }
  options.host = address->first;
  options.port = address->second;
  if (!api_key_file.empty()) {
    auto key = aevatar::os::ReadPrivateFile(api_key_file, 4096);
    if (!key.ok()) {
      std::cerr << "responses-double: " << key.status().message() << "\n";
      return 2;
    }
    options.api_key = std::string(absl::StripAsciiWhitespace(*key));
  }
  aevatar::cli::BlockStopSignals();
  auto server = aevatar::doubles::ResponsesDouble::Start(options);
  if (!server.ok()) {
    std::cerr << "responses-double: " << server.status().message() << "\n";
    return 1;
  }
  std::cout << "responses-double (a test double, not a model) listening on port "
            << (*server)->port() << std::endl;
  aevatar::cli::WaitForStopSignal();
  (*server)->Stop();
  return 0;
}
