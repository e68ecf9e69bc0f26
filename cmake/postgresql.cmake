# libpqxx over libpq, linked from their archives like every other system
# library (the product binaries are static-pie). Defines system::pqxx; link it
# only into the targets that talk to PostgreSQL.
#
# Debian's libpq.a needs libpgcommon_shlib.a and libpgport_shlib.a (from
# postgresql-server-dev-NN) and is built with GSSAPI and LDAP, whose archives
# Debian does not ship: src/store/libpq_without_gss_ldap.cc answers those
# calls with "not available" (no Kerberos login, no LDAP service lookup).
find_package(PkgConfig REQUIRED)
pkg_check_modules(PQXX REQUIRED IMPORTED_TARGET libpqxx)
find_library(PQXX_ARCHIVE NAMES libpqxx.a HINTS ${PQXX_LIBRARY_DIRS} REQUIRED)
find_library(PQ_ARCHIVE NAMES libpq.a REQUIRED)
# The server-dev package's library directory, newest version first.
file(GLOB pg_lib_dirs LIST_DIRECTORIES true /usr/lib/postgresql/*/lib)
list(SORT pg_lib_dirs COMPARE NATURAL ORDER DESCENDING)
find_library(PGCOMMON_ARCHIVE NAMES libpgcommon_shlib.a HINTS ${pg_lib_dirs} REQUIRED)
find_library(PGPORT_ARCHIVE NAMES libpgport_shlib.a HINTS ${pg_lib_dirs} REQUIRED)

add_library(aevatar_libpq_stubs STATIC ${PROJECT_SOURCE_DIR}/src/store/libpq_without_gss_ldap.cc)
aevatar_target_defaults(aevatar_libpq_stubs)

add_library(system::pqxx INTERFACE IMPORTED GLOBAL)
target_include_directories(system::pqxx INTERFACE ${PQXX_INCLUDE_DIRS})
target_link_libraries(system::pqxx INTERFACE ${PQXX_ARCHIVE} ${PQ_ARCHIVE} ${PGCOMMON_ARCHIVE}
  ${PGPORT_ARCHIVE} aevatar_libpq_stubs OpenSSL::SSL OpenSSL::Crypto Threads::Threads m)
