#ifndef AEVATAR_TESTS_TESTING_OPENAPI_CHECK_H_
#define AEVATAR_TESTS_TESTING_OPENAPI_CHECK_H_

// The checks every service's OpenAPI document must pass (docs/openapi.md):
//  - coverage: its router and its document name the same operations, both
//    ways, and GET /openapi.json serves exactly those;
//  - validity: openapi-spec-validator (the pip package, in the machine
//    image) accepts the document as OpenAPI 3.1.
// A failure names the route and the files to edit.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "http/openapi.h"
#include "http/router.h"
#include "nlohmann/json.hpp"

namespace aevatar::testing {

inline constexpr const char* kOpenApiMethods[] = {"get",   "put",     "post", "delete",
                                                  "patch", "options", "head", "trace"};

// "METHOD /path" of every operation in `document`'s paths.
inline std::set<std::string> OpenApiOperations(const nlohmann::json& document) {
  std::set<std::string> operations;
  if (!document.is_object() || !document.contains("paths")) return operations;
  for (const auto& [path, item] : document["paths"].items()) {
    for (const char* method : kOpenApiMethods) {
      if (!item.contains(method)) continue;
      std::string upper = method;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      operations.insert(upper + " " + path);
    }
  }
  return operations;
}

// The fragment files that define `operation` ("METHOD /path"), for messages.
inline std::string OpenApiSourcesOf(const std::vector<http::OpenApiFragment>& fragments,
                                    const std::string& operation) {
  std::string sources;
  for (const http::OpenApiFragment& fragment : fragments) {
    const nlohmann::json part = nlohmann::json::parse(fragment.json, nullptr, false);
    if (OpenApiOperations(part).count(operation)) sources += " " + std::string(fragment.source);
  }
  return sources;
}

// Checks `router` (built with every optional feature on) against the
// document assembled from `fragments`; `fragments_dir` is where a missing
// route's description belongs.
inline void ExpectOpenApiMatchesRouter(const http::Router& router,
                                       const std::vector<http::OpenApiFragment>& fragments,
                                       const std::string& fragments_dir) {
  auto assembled = http::AssembleOpenApi(fragments);
  ASSERT_TRUE(assembled.ok()) << assembled.status();
  const nlohmann::json document = nlohmann::json::parse(*assembled);
  const std::set<std::string> documented = OpenApiOperations(document);
  std::set<std::string> routed;
  for (const auto& [method, pattern] : router.Routes()) {
    routed.insert(method + " " + http::OpenApiPathOf(pattern));
  }
  for (const std::string& operation : routed) {
    EXPECT_TRUE(documented.count(operation))
        << operation << " is routed but missing from the OpenAPI document: add its path item "
        << "(request body, responses, problem+json errors) to a file in " << fragments_dir
        << " (docs/openapi.md)";
  }
  for (const std::string& operation : documented) {
    EXPECT_TRUE(routed.count(operation))
        << operation << " is in the OpenAPI document but the router has no such route: remove it"
        << " from" << OpenApiSourcesOf(fragments, operation);
  }

  // What GET /openapi.json serves: public JSON naming exactly the routes.
  http::Request request;
  request.method = "GET";
  request.path = request.target = "/openapi.json";
  const http::Response response = router.Handle(request);
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.headers.Get("Content-Type").value_or(""), "application/json");
  const nlohmann::json served = nlohmann::json::parse(response.body, nullptr, false);
  ASSERT_TRUE(served.is_object()) << response.body.substr(0, 200);
  EXPECT_EQ(served.value("openapi", ""), "3.1.0");
  EXPECT_EQ(OpenApiOperations(served), routed);
}

// Runs openapi-spec-validator on the document of `fragments`; skips (saying
// why) when python3 or the module is missing.
inline void ExpectOpenApiSpecValid(const std::vector<http::OpenApiFragment>& fragments) {
  auto assembled = http::AssembleOpenApi(fragments);
  ASSERT_TRUE(assembled.ok()) << assembled.status();
  char dir_template[] = "/tmp/openapi_check_XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  std::ofstream(dir + "/openapi.json") << *assembled;
  const std::string command = std::string("python3 ") + AEVATAR_SOURCE_DIR +
                              "/tests/openapi/validate_document.py '" + dir + "/openapi.json' >'" +
                              dir + "/out.txt' 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream out_file(dir + "/out.txt");
  std::stringstream out;
  out << out_file.rdbuf();
  std::filesystem::remove_all(dir);
  // Exit 3: the module is missing; 127: python3 is.
  if (WIFEXITED(status) && (WEXITSTATUS(status) == 3 || WEXITSTATUS(status) == 127)) {
    GTEST_SKIP() << "python3's openapi_spec_validator is not installed (pip install "
                    "openapi-spec-validator==0.9.0; the machine image has it): "
                 << out.str();
  }
  EXPECT_EQ(status, 0) << out.str();
}

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_OPENAPI_CHECK_H_
