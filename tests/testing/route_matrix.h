#ifndef AEVATAR_TESTS_TESTING_ROUTE_MATRIX_H_
#define AEVATAR_TESTS_TESTING_ROUTE_MATRIX_H_

// The adversarial route matrix, shared by the services' routers: every
// (method, pattern) a router has is called, on a victim's resources, with
// each credential an attacker might hold, and one table says the answer each
// must get. A route without a row fails, and so does a row without a route.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "http/router.h"

namespace aevatar::testing {

enum Attacker { kNone, kForged, kOtherUser, kOrgViewer, kRestrictedKey, kForeignDelegation };
inline constexpr Attacker kAttackers[] = {kNone,      kForged,        kOtherUser,
                                          kOrgViewer, kRestrictedKey, kForeignDelegation};
inline const char* AttackerName(Attacker a) {
  static const char* names[] = {"none",       "forged",         "other-user",
                                "org-viewer", "restricted-key", "foreign-delegation"};
  return names[a];
}

// The answer a row expects: an HTTP status, or kOwn: a 2xx about the
// caller's own things, which must not name any of the victim's ids.
inline constexpr int kOwn = -1;
struct MatrixRow {
  std::map<Attacker, int> expect;
  std::string body = "{}";
};

// 401 without a credential or with a forged one; the given answers for the others.
inline MatrixRow Authenticated(int other, int viewer, int key, int delegation,
                               std::string body = "{}") {
  return {{{kNone, 401},
           {kForged, 401},
           {kOtherUser, other},
           {kOrgViewer, viewer},
           {kRestrictedKey, key},
           {kForeignDelegation, delegation}},
          std::move(body)};
}
// The same answer for every attacker.
inline MatrixRow Everyone(int status, std::string body = "{}") {
  MatrixRow row;
  for (Attacker a : kAttackers) row.expect[a] = status;
  row.body = std::move(body);
  return row;
}

// What the matrix needs of a service's fixture.
struct MatrixSubject {
  const http::Router* router;
  // The concrete path (with query) of a pattern, on the victim's resources.
  std::function<std::string(const std::string& pattern)> path_of;
  // Puts `attacker`'s credential on `request` (nothing for kNone).
  std::function<void(Attacker attacker, http::Request& request)> present;
  // Ids of the victim's resources that no kOwn answer may name.
  std::vector<std::string> victim_ids;
};

// Calls every route of `subject.router` as each attacker and checks `table`
// ("METHOD pattern" -> row).
inline void RunRouteMatrix(const MatrixSubject& subject,
                           const std::map<std::string, MatrixRow>& table) {
  std::set<std::string> covered;
  for (const auto& [method, pattern] : subject.router->Routes()) {
    const std::string key = method + " " + pattern;
    auto row = table.find(key);
    ASSERT_NE(row, table.end()) << key << " has no row in the matrix: add one";
    covered.insert(key);
    for (Attacker attacker : kAttackers) {
      http::Request request;
      request.method = method;
      request.target = subject.path_of(pattern);
      const size_t q = request.target.find('?');
      request.path = request.target.substr(0, q);
      if (q != std::string::npos) request.query = request.target.substr(q + 1);
      request.remote_address = "198.51.100." + std::to_string(attacker + 1);
      request.body = row->second.body;
      request.headers.Set("Content-Type", "application/json");
      subject.present(attacker, request);
      const http::Response response = subject.router->Handle(request);
      const int expected = row->second.expect.at(attacker);
      const std::string what = key + " as " + AttackerName(attacker) + ": " + response.body;
      if (expected == kOwn) {
        EXPECT_GE(response.status, 200) << what;
        EXPECT_LT(response.status, 300) << what;
        for (const std::string& id : subject.victim_ids) {
          EXPECT_EQ(response.body.find(id), std::string::npos) << what << " shows " << id;
        }
      } else {
        EXPECT_EQ(response.status, expected) << what;
      }
    }
  }
  for (const auto& [key, row] : table) {
    EXPECT_TRUE(covered.count(key)) << key << " is in the matrix but not in the router";
  }
}

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_ROUTE_MATRIX_H_
