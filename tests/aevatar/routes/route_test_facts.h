#ifndef AEVATAR_TESTS_AEVATAR_ROUTES_ROUTE_TEST_FACTS_H_
#define AEVATAR_TESTS_AEVATAR_ROUTES_ROUTE_TEST_FACTS_H_

#include <map>
#include <string>
#include <utility>

#include "aevatar/routes/route_resolution.h"

// Facts shared by the route resolution and convergence tests.
namespace aevatar::orchestrator::route_test {

inline constexpr char kCatalog[] = "cs_chrono";

inline CallerFacts Alice(std::map<std::string, std::string> orgs = {}) {
  return CallerFacts{"u_alice", std::move(orgs)};
}

}  // namespace aevatar::orchestrator::route_test

#endif  // AEVATAR_TESTS_AEVATAR_ROUTES_ROUTE_TEST_FACTS_H_
