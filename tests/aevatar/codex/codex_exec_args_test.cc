#include "aevatar/codex/codex_exec_args.h"

#include <string>

#include "base/api_error.h"
#include "gtest/gtest.h"

// codex_exec's strict input: the two shapes of the spec, and every mixed or
// obsolete shape rejected typed (the HTTP-level test proves no network call).
namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

json Managed() {
  return {{"target", {{"kind", "managed_sandbox"}}},
          {"workspace", {{"kind", "empty_git"}}},
          {"prompt", "Reply with exactly CODEX_EXEC_READY"},
          {"timeout_secs", 180}};
}

json Private() {
  return {{"target",
           {{"kind", "private_ssh"}, {"private_ssh", {{"service", "svc"}, {"principal", "me"}}}}},
          {"prompt", "Reply with exactly CODEX_EXEC_READY"},
          {"timeout_secs", 300}};
}

std::string CodeOf(const json& body) {
  auto args = ParseCodexExecArgs(body.dump());
  return args.ok() ? "OK" : base::ApiCode(args.status());
}

TEST(CodexExecArgs, AcceptsTheManagedCanaryPayload) {
  auto args = ParseCodexExecArgs(Managed().dump());
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->target, CodexTarget::kManagedSandbox);
  EXPECT_EQ(args->prompt, "Reply with exactly CODEX_EXEC_READY");
  EXPECT_EQ(args->timeout_secs, 180);
}

TEST(CodexExecArgs, TimeoutDefaultsTo180AndAcceptsItsRange) {
  json body = Managed();
  body.erase("timeout_secs");
  auto args = ParseCodexExecArgs(body.dump());
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(args->timeout_secs, 180);
  for (int secs : {1, 600}) {
    body["timeout_secs"] = secs;
    auto bounded = ParseCodexExecArgs(body.dump());
    ASSERT_TRUE(bounded.ok()) << secs;
    EXPECT_EQ(bounded->timeout_secs, secs);
  }
}

TEST(CodexExecArgs, PrivateSshTimeoutDefaultsTo300) {
  json body = Private();
  body.erase("timeout_secs");
  auto args = ParseCodexExecArgs(body.dump());
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->timeout_secs, 300);
}

TEST(CodexExecArgs, AcceptsTheNestedPrivateSshShape) {
  auto args = ParseCodexExecArgs(Private().dump());
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->target, CodexTarget::kPrivateSsh);
  EXPECT_EQ(args->ssh_service, "svc");
  EXPECT_EQ(args->ssh_principal, "me");
}

TEST(CodexExecArgs, RejectsObsoleteAndCallerControlledFieldsAtEveryLevel) {
  for (const char* field : {"service", "principal", "model", "image", "path", "provider", "shell",
                            "flags", "credential", "api_key", "sandbox_mode", "codex_home",
                            "approval_policy", "env", "model_route"}) {
    json root = Managed();
    root[field] = "x";
    EXPECT_EQ(CodeOf(root), kCodexFieldForbidden) << field;
    json in_target = Managed();
    in_target["target"][field] = "x";
    EXPECT_EQ(CodeOf(in_target), kCodexFieldForbidden) << "target." << field;
    json in_workspace = Managed();
    in_workspace["workspace"][field] = "x";
    EXPECT_EQ(CodeOf(in_workspace), kCodexFieldForbidden) << "workspace." << field;
  }
  json root = Managed();
  root["surprise"] = 1;
  EXPECT_EQ(CodeOf(root), kCodexFieldUnknown);
  json nested = Private();
  nested["target"]["private_ssh"]["node_id"] = "n1";
  EXPECT_EQ(CodeOf(nested), kCodexFieldForbidden);
}

TEST(CodexExecArgs, RejectsMixedTargetShapes) {
  json managed_with_private = Managed();
  managed_with_private["target"]["private_ssh"] = {{"service", "s"}, {"principal", "p"}};
  EXPECT_EQ(CodeOf(managed_with_private), kCodexFieldUnknown);
  json private_with_workspace = Private();
  private_with_workspace["workspace"] = {{"kind", "empty_git"}};
  EXPECT_EQ(CodeOf(private_with_workspace), kCodexWorkspaceInvalid);
  json managed_without_workspace = Managed();
  managed_without_workspace.erase("workspace");
  EXPECT_EQ(CodeOf(managed_without_workspace), kCodexWorkspaceInvalid);
  json private_without_nested = Private();
  private_without_nested["target"].erase("private_ssh");
  EXPECT_EQ(CodeOf(private_without_nested), kCodexTargetInvalid);
  json root_level_service = Private();
  root_level_service["target"].erase("private_ssh");
  root_level_service["service"] = "svc";
  EXPECT_EQ(CodeOf(root_level_service), kCodexFieldForbidden);
  json target_string = Managed();
  target_string["target"] = "managed_sandbox";  // the old flat shape
  EXPECT_EQ(CodeOf(target_string), kCodexFieldType);
  json other_workspace = Managed();
  other_workspace["workspace"]["kind"] = "repository";
  EXPECT_EQ(CodeOf(other_workspace), kCodexWorkspaceInvalid);
  json unknown_kind = Managed();
  unknown_kind["target"]["kind"] = "docker";
  EXPECT_EQ(CodeOf(unknown_kind), kCodexTargetInvalid);
}

TEST(CodexExecArgs, RejectsWrongTypesAndBadValues) {
  json prompt_number = Managed();
  prompt_number["prompt"] = 5;
  EXPECT_EQ(CodeOf(prompt_number), kCodexFieldType);
  json prompt_empty = Managed();
  prompt_empty["prompt"] = "";
  EXPECT_EQ(CodeOf(prompt_empty), kCodexPromptInvalid);
  json prompt_huge = Managed();
  prompt_huge["prompt"] = std::string(kCodexMaxPromptBytes + 1, 'a');
  EXPECT_EQ(CodeOf(prompt_huge), kCodexPromptInvalid);
  for (const json& bad : {json(0), json(601), json(-1), json(1.5), json("180"), json(true)}) {
    json body = Managed();
    body["timeout_secs"] = bad;
    const std::string code = CodeOf(body);
    EXPECT_TRUE(code == kCodexTimeoutInvalid || code == kCodexFieldType) << bad.dump();
  }
  json kind_number = Managed();
  kind_number["target"]["kind"] = 1;
  EXPECT_EQ(CodeOf(kind_number), kCodexFieldType);
  EXPECT_EQ(base::ApiCode(ParseCodexExecArgs("not json").status()), kCodexMalformedJson);
  EXPECT_EQ(base::ApiCode(ParseCodexExecArgs("[1]").status()), kCodexMalformedJson);
  // A repeated key could mean different shapes to different readers.
  EXPECT_EQ(base::ApiCode(ParseCodexExecArgs(R"({"prompt":"a","prompt":"b"})").status()),
            kCodexMalformedJson);
}

TEST(CodexExecArgs, ErrorsAreTyped400sThatNeverEchoValues) {
  json body = Managed();
  body["target"]["kind"] = "SECRET_VALUE_123";
  auto args = ParseCodexExecArgs(body.dump());
  ASSERT_FALSE(args.ok());
  EXPECT_EQ(base::HttpStatusFor(args.status()), 400);
  EXPECT_EQ(std::string(args.status().message()).find("SECRET_VALUE_123"), std::string::npos);
}

TEST(CodexExecArgs, ManagedRequestBodyHasExactlyTheContractMembers) {
  auto args = ParseCodexExecArgs(Managed().dump());
  ASSERT_TRUE(args.ok());
  const json body = ManagedCodexRequestBody(*args, "us_llm_9");
  EXPECT_EQ(body, json::parse(R"({"prompt": "Reply with exactly CODEX_EXEC_READY",
                                  "timeout_secs": 180,
                                  "model_route": {"user_service_id": "us_llm_9"}})"));
}

}  // namespace
}  // namespace aevatar::orchestrator
