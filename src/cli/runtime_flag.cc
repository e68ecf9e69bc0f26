#include "cli/runtime_flag.h"

#include <string>
#include <utility>
#include <vector>

namespace aevatar::cli {

CLI::Option* AddRuntimeFlag(CLI::App* command, std::function<void(sandbox::RuntimeEnv)> add,
                            bool root_required) {
  return command
      ->add_option_function<std::vector<std::string>>(
          "--runtime",
          [add = std::move(add), root_required](const std::vector<std::string>& values) {
            for (const std::string& value : values) {
              auto env = sandbox::ParseRuntimeFlag(value, root_required);
              if (!env.ok()) {
                throw CLI::ValidationError("--runtime", std::string(env.status().message()));
              }
              add(std::move(*env));
            }
          },
          root_required
              ? "A runtime environment a call may choose: NAME=LANGUAGE:ROOT, ROOT a host "
                "directory mounted read-only (repeatable; config file: [runtimes.NAME])"
              : "A runtime environment code_execute advertises: NAME=LANGUAGE[:ROOT] "
                "(repeatable; config file: [runtimes.NAME]; the executor's list decides)")
      ->allow_extra_args(false);
}

}  // namespace aevatar::cli
