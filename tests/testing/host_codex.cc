#include "testing/host_codex.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "testing/shell_run.h"

namespace aevatar::testing {

bool MakeHostCodexHome(const std::string& dir, const std::string& home, uint16_t model_port,
                       const std::string& api_key, bool log_in) {
  std::error_code ec;
  std::filesystem::create_directory(dir + "/" + home, ec);
  // Its own provider, which requires its own key. (The built-in openai
  // provider with openai_base_url works too, but first tries WebSockets for
  // seconds.)
  std::ofstream(dir + "/" + home + "/config.toml")
      << "model = \"host-model\"\nmodel_provider = \"host\"\n[model_providers.host]\n"
      << "name = \"host\"\nbase_url = \"http://127.0.0.1:" << model_port << "/v1\"\n"
      << "wire_api = \"responses\"\nrequires_openai_auth = true\n";
  if (!log_in) return true;
  std::ofstream(dir + "/" + home + ".api-key") << api_key;
  return RunShell(dir,
                  absl::StrCat("CODEX_HOME='", dir, "/", home, "' ", kHostCodex,
                               " login --with-api-key"),
                  dir + "/" + home + ".api-key")
             .exit_code == 0;
}

std::string WrapperKeyLine(const std::string& dir, const std::string& home,
                           const std::string& options, const std::string& pub) {
  return absl::StrCat("environment=\"CODEX_HOME=", dir, "/", home, "\",command=\"", kCodexWrapper,
                      " --log ", dir, "/wrapper.log ", options, "\",restrict ", pub);
}

}  // namespace aevatar::testing
