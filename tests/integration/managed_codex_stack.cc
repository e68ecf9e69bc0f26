#include "managed_codex_stack.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace aevatar::testing {
namespace {

constexpr char kDefaultUsers[] = R"(users:
  - {username: alice, password: pw-alice}
  - {username: bob, password: pw-bob}
user_services:
  - owner: {user: alice}
    catalog_service_id: chrono-sandbox
    label: chrono-sandbox
)";

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

ManagedCodexStack::ManagedCodexStack(ManagedCodexOptions options)
    : record_path_(dir_.path() + "/model-record.jsonl") {
  doubles::ResponsesDoubleOptions model_options;
  model_options.api_key = kProviderKey;
  model_options.record_path = record_path_;
  model_options.hang_limit = std::chrono::seconds(120);
  auto model = doubles::ResponsesDouble::Start(model_options);
  if (!model.ok()) return;
  model_ = std::move(*model);

  const std::string key_file = dir_.path() + "/provider.key";
  {
    std::ofstream(key_file) << kProviderKey << "\n";
    std::filesystem::permissions(
        key_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  }
  AevatarStackOptions stack_options;
  stack_options.users_yaml = options.users_yaml.empty() ? kDefaultUsers : options.users_yaml;
  stack_options.nyxid_args = std::move(options.nyxid_args);
  stack_options.aevatar_args = {"--managed-codex", "all"};
  stack_options.aevatar_args.insert(stack_options.aevatar_args.end(), options.aevatar_args.begin(),
                                    options.aevatar_args.end());
  stack_options.chrono_args = {"--codex-model", kModel, "--codex-backend", options.backend};
  stack_options.chrono_args.insert(stack_options.chrono_args.end(), options.chrono_args.begin(),
                                   options.chrono_args.end());
  if (options.llm_route) {
    stack_options.catalog_yaml =
        "  - id: chrono-llm-public\n    slug: chrono-llm-public\n    kind: llm\n"
        "    base_url: http://127.0.0.1:" +
        std::to_string(model_->port()) + "/v1\n    provider_api_key_file: " + key_file +
        "\n    model_allowlist: [" + kModel + "]\n    delegation_audiences: [chrono-sandbox]\n" +
        "    auto_connect: true\n";
  }
  stack_ = std::make_unique<AevatarStack>(std::move(stack_options));
}

std::vector<nlohmann::json> ManagedCodexStack::ModelRecord() const {
  std::vector<nlohmann::json> lines;
  std::ifstream in(record_path_);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false));
  }
  return lines;
}

http::ClientResponse ManagedCodexStack::EnsureCredential(const std::string& token) {
  return stack_->Aevatar("POST", "/api/managed-codex/credential", token, "{}");
}

http::ClientResponse ManagedCodexStack::CredentialStatus(const std::string& token) {
  return stack_->Aevatar("GET", "/api/managed-codex/credential", token);
}

http::ClientResponse ManagedCodexStack::Exec(const std::string& token, const nlohmann::json& args) {
  return stack_->Aevatar("POST", "/api/tools/codex_exec", token, args.dump());
}

std::string ManagedCodexStack::DefaultUsers() { return kDefaultUsers; }

nlohmann::json ManagedCodexStack::ManagedArgs(const std::string& prompt, int timeout_secs) {
  return {{"target", {{"kind", "managed_sandbox"}}},
          {"workspace", {{"kind", "empty_git"}}},
          {"prompt", prompt},
          {"timeout_secs", timeout_secs}};
}

std::string ManagedCodexStack::AllStateAndLogs() const {
  std::string all;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           dir_.path(), std::filesystem::directory_options::skip_permission_denied)) {
    const std::string name = entry.path().filename();
    if (entry.is_regular_file() && name != "provider.key" && name != "model-record.jsonl") {
      all += ReadAll(entry.path());
    }
  }
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           stack_->dir(), std::filesystem::directory_options::skip_permission_denied)) {
    if (entry.is_regular_file()) all += ReadAll(entry.path());
  }
  return all;
}

}  // namespace aevatar::testing
