#ifndef AEVATAR_CLI_CONFIG_FILE_H_
#define AEVATAR_CLI_CONFIG_FILE_H_

// The config file of a `serve` (nyxid, chrono-sandbox, aevatar).
//
// A TOML file of top-level keys, one per flag of that `serve`: the key is the
// flag's long name without the leading dashes, spelled with `-` exactly as the
// flag is (`state-dir`, not `state_dir`); a flag with two long names takes
// either. Strings for text flags, integers for numeric flags, booleans for
// on/off flags (false is the same as leaving the flag out). The file is read
// from `--config FILE`, else from /etc/aevatar/<service>.toml when that
// exists.
//
// The values become command-line arguments inserted right after `serve`, and
// a flag given on the command line drops the file's key for it (and for the
// flags it excludes): the command line overrides the file, and CLI11 then
// checks the whole as it checks any command line.
//
// Runtime environments are tables, `[runtimes.NAME]` (config_runtimes.h),
// for a serve with a `--runtime` flag; a `--runtime` on the command line
// drops all of the file's.
//
// Refused, with the file and the key's line: a TOML syntax error, an unknown
// key (any other table is one too), a value of the wrong type, and a secret inline.
// Secrets come only by file reference: a flag that takes a secret value
// itself (marked with MarkSecretFlag) has no key, and a value carrying a
// password (`scheme://user:password@…`, libpq's `password=`) is refused.

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"

namespace aevatar::cli {

// Marks a flag that takes a secret value inline (not a file holding one):
// a config file may not set it. No `serve` flag is one today.
void MarkSecretFlag(CLI::Option* option);

// Adds `--config FILE` to `serve`; its help names /etc/aevatar/<service>.toml.
void AddConfigFlag(CLI::App* serve, const std::string& service);

// Returns the arguments ("--key", "value", …, in the file's line order) that
// the TOML `text` read from `path` (named in errors) sets on `serve`'s
// options, leaving out every flag that `command_line` (the arguments after
// `serve`) gives and the flags those exclude. InvalidArgument, naming the key
// and its line, for the file errors described above.
absl::StatusOr<std::vector<std::string>> ConfigFileArgs(
    const CLI::App& serve, const std::string& path, const std::string& text,
    const std::vector<std::string>& command_line);

// Parses `argv` with `app`. When it runs `serve` (may be null: parse only),
// the config file's arguments (--config FILE, else
// /etc/aevatar/<service>.toml if it exists) are inserted after `serve`'s name
// first. Throws what CLI::App::parse throws; a config file error is a
// CLI::ConfigError carrying its message.
void ParseWithServeConfig(CLI::App& app, const CLI::App* serve, const std::string& service,
                          int argc, char** argv);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_CONFIG_FILE_H_
