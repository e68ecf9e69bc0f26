#ifndef AEVATAR_NYXID_STORE_POSTGRES_NYXID_H_
#define AEVATAR_NYXID_STORE_POSTGRES_NYXID_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "nyxid/nodes/node_store.h"
#include "nyxid/store/nyxid_store.h"
#include "nyxid/tokens/signing_key_storage.h"

namespace aevatar::nyxid {

// NyxID's durable state in one PostgreSQL database, shared by every `nyxid
// serve` replica that names it: accounts, orgs, catalog, routes, Agent Keys,
// clients, the admin audit log, nodes and SSH targets, and the signing keys.
// Tables are named nyxid_* (the database may hold chrono_* and aevatar_*
// tables too); the schema is created and migrated on open (component
// "nyxid" of store/pg_migrations.h: replicas starting at once are safe).
struct PostgresNyxid {
  std::unique_ptr<NyxidStore> store;
  std::unique_ptr<NodeStore> nodes;
  // Shared: KeyRing re-reads it (signing_keys.h). The document is sealed
  // with the at-rest key, like the catalog's provider keys.
  std::unique_ptr<SigningKeyStorage> signing_keys;
};

// Connects to `conninfo` (a libpq URI postgresql://… or key=value string)
// and migrates. An unreachable database or a refused login is Unavailable
// with libpq's reason (never the connection string, which may hold a
// password). `at_rest_key` (32 bytes, InvalidArgument otherwise) must be the
// same on every replica: a document sealed under another key reads as
// FailedPrecondition naming at-rest.key.
//
// The stores keep the contracts of NyxidStore and NodeStore; each method is
// one transaction, committed before it returns, so a write on one replica
// is read by every other at its next call (nothing is cached). Storage
// errors: Unavailable (connection lost, server shutting down, serialization
// failure; one retry on a fresh connection is made first) or Internal; the
// server's DETAIL lines (which quote key values) are dropped.
absl::StatusOr<PostgresNyxid> OpenPostgresNyxid(const std::string& conninfo,
                                                std::string at_rest_key);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_STORE_POSTGRES_NYXID_H_
