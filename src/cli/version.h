#ifndef AEVATAR_CLI_VERSION_H_
#define AEVATAR_CLI_VERSION_H_

namespace aevatar::cli {

// The release of the three binaries, printed by each one's --version. The
// .deb packages carry the same number (cmake/packaging.cmake's
// AEVATAR_PACKAGE_VERSION default; tests/cli/cli_help_test.cc checks they
// agree).
inline constexpr char kVersion[] = "0.1.0";

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_VERSION_H_
