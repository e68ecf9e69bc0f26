#include "cli/aevatar_skill_command.h"

#include <chrono>
#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "aevatar/skills/skill_dir.h"
#include "base/json_read.h"
#include "cli/aevatar_session.h"
#include "cli/server_replies.h"

namespace aevatar::cli {
namespace {

using nlohmann::json;

// How long `skill use --mount-workflows` follows a mount that is still
// mounting (each workflow's admission reads NyxID and may converge a route).
constexpr auto kMountWait = std::chrono::minutes(2);

int SkillFail(const std::string& message, int code = 1) {
  std::cerr << "aevatar skill: " << message << "\n";
  return code;
}

// --json: the server's answer as it is.
int PrintRaw(const std::string& body) {
  std::cout << body << "\n";
  return 0;
}

void PrintMount(const json& mount) {
  std::cout << "mount " << base::StringOr(mount, "mount_id", "") << " of "
            << base::StringOr(mount, "skill", "") << " (" << base::StringOr(mount, "digest", "")
            << "): " << base::StringOr(mount, "state", "") << "\n";
  for (const json& w : base::ArrayOrEmpty(mount, "workflows")) {
    std::cout << "  " << base::StringOr(w, "workflow_id", "") << " ("
              << base::StringOr(w, "file", "") << "): " << base::StringOr(w, "state", "") << "\n";
  }
  const json& error = base::ObjectOrEmpty(mount, "error");
  if (!error.empty()) {
    std::cout << "error: " << base::StringOr(error, "code", "") << ": "
              << base::StringOr(error, "detail", "")
              << "\ndiagnostic id: " << base::StringOr(error, "diagnostic_id", "") << "\n";
  }
}

int Publish(const AevatarSession& session, const SkillOptions& options) {
  auto bundle = orchestrator::ReadSkillDir(options.dir);
  if (!bundle.ok()) return SkillFail(std::string(bundle.status().message()), 2);
  json body = {{"skill_yaml", bundle->manifest_yaml}, {"assets", json::object()}};
  for (const auto& [file, yaml] : bundle->assets) body["assets"][file] = yaml;
  auto r = CallAevatar(session, "POST", "/api/skills", body.dump());
  if (r.status != 201 && r.status != 200) return PrintProblem(r);
  if (options.json) return PrintRaw(r.body);
  const json published = ParsedOrNull(r.body);
  std::cout << (base::BoolOr(published, "created", false) ? "published " : "already published ")
            << base::StringOr(published, "name", "") << "@"
            << base::StringOr(published, "version", "") << " ("
            << base::StringOr(published, "digest", "") << ")\n";
  return 0;
}

int List(const AevatarSession& session, const SkillOptions& options) {
  auto r = CallAevatar(session, "GET", "/api/skills");
  if (r.status != 200) return PrintProblem(r);
  if (options.json) return PrintRaw(r.body);
  const json listed = ParsedOrNull(r.body);  // outlives the loop over its members
  for (const json& skill : base::ArrayOrEmpty(listed, "skills")) {
    std::cout << base::StringOr(skill, "name", "") << "@" << base::StringOr(skill, "latest", "")
              << "  " << base::StringOr(skill, "description", "").substr(0, 72) << "\n";
  }
  return 0;
}

int Show(const AevatarSession& session, const SkillOptions& options) {
  const size_t at = options.ref.find('@');
  const std::string path = at == std::string::npos ? "/api/skills/" + options.ref
                                                   : "/api/skills/" + options.ref.substr(0, at) +
                                                         "/versions/" + options.ref.substr(at + 1);
  auto r = CallAevatar(session, "GET", path);
  if (r.status != 200) return PrintProblem(r);
  if (options.json) return PrintRaw(r.body);
  const json shown = ParsedOrNull(r.body);
  if (at == std::string::npos) {
    std::cout << base::StringOr(shown, "name", "") << " (latest "
              << base::StringOr(shown, "latest", "") << ")\n";
    for (const json& v : base::ArrayOrEmpty(shown, "versions")) {
      std::cout << "  " << base::StringOr(v, "version", "") << "  "
                << base::StringOr(v, "digest", "") << "  " << base::StringOr(v, "publisher", "")
                << "  " << base::StringOr(v, "published_at", "") << "\n";
    }
    return 0;
  }
  std::cout << base::StringOr(shown, "name", "") << "@" << base::StringOr(shown, "version", "")
            << " (" << base::StringOr(shown, "digest", "") << ")\n"
            << base::StringOr(shown, "description", "") << "\n";
  for (const json& w : base::ArrayOrEmpty(shown, "workflows")) {
    std::cout << "  workflow " << base::StringOr(w, "workflow_id", "") << " ("
              << base::StringOr(w, "file", "") << ")\n";
  }
  return 0;
}

int Use(const AevatarSession& session, const SkillOptions& options) {
  json body = {{"skill", options.ref}, {"mount_workflows", options.mount_workflows}};
  if (!options.digest.empty()) body["digest"] = options.digest;
  auto r = CallAevatar(session, "POST", "/api/skills/use", body.dump());
  if (r.status != 200 && r.status != 202) return PrintProblem(r);
  json answer = ParsedOrNull(r.body);
  if (!options.mount_workflows) {
    if (options.json) return PrintRaw(r.body);
    std::cout << base::StringOr(answer, "name", "") << "@" << base::StringOr(answer, "version", "")
              << " (" << base::StringOr(answer, "digest", "") << "), not mounted\n";
    return 0;
  }
  // Mounting may complete after the command is accepted: read its state.
  const auto until = std::chrono::steady_clock::now() + kMountWait;
  while (!base::BoolOr(answer, "done", true) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    auto poll = CallAevatar(session, "GET", base::StringOr(answer, "status_url", ""));
    if (poll.status != 200) return PrintProblem(poll);
    answer = ParsedOrNull(poll.body);
  }
  if (options.json) {
    std::cout << answer.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    PrintMount(answer);
  }
  return base::StringOr(answer, "state", "") == "mounted" ? 0 : 1;
}

}  // namespace

bool SkillCommands::parsed() const {
  return publish->parsed() || list->parsed() || show->parsed() || use->parsed();
}

SkillCommands AddSkillCommand(CLI::App& app, SkillOptions& options) {
  CLI::App* skill = app.add_subcommand("skill", "Publish, list, show and use skills");
  skill->require_subcommand(1);
  skill->add_option("--url", options.url, "aevatar URL (default: the session's)");
  skill->footer(
      "Example:\n"
      "  aevatar skill publish skills/aevatar-codex-exec-workflow-sample\n"
      "  aevatar skill use aevatar-codex-exec-workflow-sample@1.0.0 --mount-workflows\n"
      "  aevatar workflow run codex-exec-check --wait stream");
  SkillCommands commands;
  commands.publish = skill->add_subcommand(
      "publish", "Publish a skill directory (skill.yaml + assets/*.yaml); versions are immutable");
  commands.publish->add_option("dir", options.dir, "The skill's directory")->required();
  commands.publish->footer(
      "Example: aevatar skill publish skills/aevatar-code-execute-durable-check");
  commands.list = skill->add_subcommand("list", "The published skills and their latest versions");
  commands.list->footer("Example: aevatar skill list --json");
  commands.show = skill->add_subcommand("show", "A skill's versions, or one version's workflows");
  commands.show->add_option("skill", options.ref, "NAME or NAME@VERSION")->required();
  commands.show->footer("Example: aevatar skill show aevatar-codex-exec-workflow-sample@1.0.0");
  commands.use = skill->add_subcommand(
      "use", "use_skill: fetch a skill, or mount its workflows as your own saved workflows");
  commands.use->add_option("skill", options.ref, "NAME (the latest) or NAME@VERSION")->required();
  commands.use->add_flag("--mount-workflows", options.mount_workflows,
                         "Save (and admit) each of its workflows for you");
  commands.use->add_option("--digest", options.digest,
                           "Refuse unless the version's digest is this sha256:… (a pin)");
  commands.use->footer(
      "Example: aevatar skill use aevatar-codex-exec-workflow-sample --mount-workflows");
  for (CLI::App* sub : {commands.publish, commands.list, commands.show, commands.use}) {
    sub->add_flag("--json", options.json, "Print the server's JSON answer");
  }
  return commands;
}

int RunSkillCommand(const SkillCommands& commands, const SkillOptions& options) {
  auto session = LoadSession(options.url);
  if (!session.ok()) return SkillFail(std::string(session.status().message()));
  if (commands.publish->parsed()) return Publish(*session, options);
  if (commands.list->parsed()) return List(*session, options);
  if (commands.show->parsed()) return Show(*session, options);
  return Use(*session, options);
}

}  // namespace aevatar::cli
