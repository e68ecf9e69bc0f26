#ifndef AEVATAR_CLI_RUNTIME_FLAG_H_
#define AEVATAR_CLI_RUNTIME_FLAG_H_

#include <functional>

#include "CLI/CLI.hpp"
#include "sandbox/runtime_env.h"

namespace aevatar::cli {

// Adds the repeatable `--runtime NAME=LANGUAGE:ROOT` flag (a config file's
// `[runtimes.NAME]` tables feed it, config_runtimes.h) to `command`; each
// value is parsed (sandbox::ParseRuntimeFlag) and handed to `add`, a
// malformed one is a CLI::ValidationError naming what is wrong. With
// `root_required` false (a service that only advertises runtimes) the root
// may be left out.
CLI::Option* AddRuntimeFlag(CLI::App* command, std::function<void(sandbox::RuntimeEnv)> add,
                            bool root_required = true);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_RUNTIME_FLAG_H_
