#include "store/pg_pool.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace aevatar::store {
namespace {

constexpr int kConnectTimeoutSeconds = 10;

std::string Trimmed(absl::string_view message) {
  return std::string(absl::StripTrailingAsciiWhitespace(message));
}

// A server error's first line: its DETAIL and HINT lines may quote the
// values of a row (a violated key, say), which no error of ours carries.
std::string FirstLine(absl::string_view message) {
  return Trimmed(message.substr(0, message.find('\n')));
}

// Whether an SQLSTATE says the same work may succeed when retried: class 08
// (connection exception), 57P (operator intervention: shutdown, restart) and
// 40 (transaction rollback: serialization failure, deadlock).
bool IsTransient(absl::string_view sqlstate) {
  return absl::StartsWith(sqlstate, "08") || absl::StartsWith(sqlstate, "57P") ||
         absl::StartsWith(sqlstate, "40");
}

}  // namespace

std::string WithConnectTimeout(const std::string& conninfo, int seconds) {
  if (absl::StrContains(conninfo, "connect_timeout")) return conninfo;
  const std::string setting = absl::StrCat("connect_timeout=", seconds);
  if (absl::StartsWith(conninfo, "postgresql://") || absl::StartsWith(conninfo, "postgres://")) {
    return absl::StrCat(conninfo, absl::StrContains(conninfo, "?") ? "&" : "?", setting);
  }
  return conninfo.empty() ? setting : absl::StrCat(conninfo, " ", setting);
}

absl::StatusOr<std::unique_ptr<PgPool>> PgPool::Connect(const std::string& conninfo,
                                                        int max_connections) {
  if (max_connections < 1) return absl::InvalidArgumentError("max_connections < 1");
  std::unique_ptr<PgPool> pool(
      new PgPool(WithConnectTimeout(conninfo, kConnectTimeoutSeconds), max_connections));
  absl::StatusOr<std::unique_ptr<pqxx::connection>> first = pool->Acquire(/*fresh=*/true);
  if (!first.ok()) return first.status();
  pool->Release(std::move(*first));
  return pool;
}

absl::StatusOr<std::unique_ptr<pqxx::connection>> PgPool::Open() {
  try {
    return std::make_unique<pqxx::connection>(conninfo_);
  } catch (const pqxx::broken_connection& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot connect to PostgreSQL: ", Trimmed(e.what())));
  } catch (const std::exception& e) {
    // A malformed connection string, for one.
    return absl::InvalidArgumentError(
        absl::StrCat("cannot connect to PostgreSQL: ", Trimmed(e.what())));
  }
}

absl::StatusOr<std::unique_ptr<pqxx::connection>> PgPool::Acquire(bool fresh) {
  {
    absl::MutexLock lock(&mu_);
    auto can_acquire = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !idle_.empty() || open_ < max_connections_;
    };
    mu_.Await(absl::Condition(&can_acquire));
    if (!idle_.empty() && !fresh) {
      std::unique_ptr<pqxx::connection> conn = std::move(idle_.back());
      idle_.pop_back();
      return conn;
    }
    if (open_ >= max_connections_) {  // fresh wanted, all open ones idle: replace one
      idle_.pop_back();
      --open_;
    }
    ++open_;  // reserved; opened outside the lock
  }
  absl::StatusOr<std::unique_ptr<pqxx::connection>> conn = Open();
  if (!conn.ok()) {
    absl::MutexLock lock(&mu_);
    --open_;
  }
  return conn;
}

void PgPool::Release(std::unique_ptr<pqxx::connection> conn) {
  absl::MutexLock lock(&mu_);
  if (conn != nullptr && conn->is_open()) {
    idle_.push_back(std::move(conn));
  } else {
    --open_;
  }
}

absl::Status PgPool::Transact(const std::function<absl::Status(pqxx::work&)>& body) {
  absl::Status status;
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<std::unique_ptr<pqxx::connection>> conn = Acquire(/*fresh=*/attempt > 0);
    if (!conn.ok()) return conn.status();
    bool retry = false;
    try {
      pqxx::work tx(**conn);
      status = body(tx);
      if (status.ok()) tx.commit();
    } catch (const pqxx::in_doubt_error& e) {
      status = absl::UnknownError(
          absl::StrCat("PostgreSQL commit outcome unknown: ", Trimmed(e.what())));
    } catch (const pqxx::broken_connection& e) {
      status =
          absl::UnavailableError(absl::StrCat("PostgreSQL connection lost: ", Trimmed(e.what())));
      retry = true;
    } catch (const pqxx::unique_violation& e) {
      status = absl::AlreadyExistsError(FirstLine(e.what()));
    } catch (const pqxx::sql_error& e) {
      if (IsTransient(e.sqlstate())) {
        status = absl::UnavailableError(FirstLine(e.what()));
      } else if (absl::StartsWith(e.sqlstate(), "22")) {
        // Class 22, data exception: a value the caller gave (an id that is
        // not UTF-8, say) is bad, not the store. Its message may quote it.
        status = absl::InvalidArgumentError(
            absl::StrCat("PostgreSQL refused a value (SQLSTATE ", e.sqlstate(), ")"));
      } else {
        status = absl::InternalError(FirstLine(e.what()));
      }
    } catch (const std::exception& e) {
      status = absl::InternalError(absl::StrCat("PostgreSQL: ", Trimmed(e.what())));
    }
    Release(std::move(*conn));
    if (!retry) break;
  }
  return status;
}

}  // namespace aevatar::store
