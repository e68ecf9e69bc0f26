#include "cli/aevatar_workflow_command.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "CLI/CLI.hpp"
#include "base/json_read.h"
#include "cli/aevatar_session.h"
#include "cli/read_file.h"
#include "cli/server_replies.h"

namespace aevatar::cli {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

int WorkflowFail(const std::string& message, int code = 1) {
  std::cerr << "aevatar workflow: " << message << "\n";
  return code;
}

void PrintRun(const json& run) {
  std::cout << "run " << base::StringOr(run, "run_id", "") << " ("
            << base::StringOr(run, "workflow_id", "") << "): " << base::StringOr(run, "status", "");
  if (std::string outcome = base::StringOr(run, "outcome_code", ""); !outcome.empty()) {
    std::cout << " [" << outcome << "]";
  }
  std::cout << "\n";
  for (const json& step : base::ArrayOrEmpty(run, "steps")) {
    std::cout << "  step " << base::StringOr(step, "id", "") << ": "
              << base::StringOr(step, "status", "");
    if (std::string outcome = base::StringOr(step, "outcome_code", ""); !outcome.empty()) {
      std::cout << " [" << outcome << "]";
    }
    if (int64_t elapsed = base::IntOr(step, "elapsed_ms", -1); elapsed >= 0) {
      std::cout << " " << elapsed << " ms";
    }
    std::cout << "\n";
    const json& output = base::ObjectOrEmpty(step, "output");
    if (!base::StringOr(output, "target", "").empty()) {  // codex_exec
      std::cout << "    " << base::StringOr(output, "target", "") << " "
                << base::StringOr(output, "status", "") << ", exit code "
                << base::IntOr(output, "exit_code", -1) << ", diagnostic id "
                << base::StringOr(output, "diagnostic_id", "") << "\n"
                << "    output: " << base::StringOr(output, "output", "") << "\n";
    } else if (output.contains("timed_out")) {  // private_ssh: NyxID's raw SSH response
      std::cout << "    exit code " << base::IntOr(output, "exit_code", -1) << ", timed out "
                << (base::BoolOr(output, "timed_out", false) ? "yes" : "no") << "\n"
                << "    stdout: " << base::StringOr(output, "stdout", "");
    } else if (!output.empty()) {
      std::cout << "    stdout: " << base::StringOr(output, "stdout", "");
      if (std::string err = base::StringOr(output, "stderr", ""); !err.empty()) {
        std::cout << "    stderr: " << err;
      }
    }
  }
}

// Follows a server-sent event stream, printing live progress lines.
int FollowStream(const AevatarSession& session, const json& body) {
  http::ClientRequest request;
  request.method = "POST";
  request.url = session.url + "/api/workflow-runs";
  request.body = body.dump();
  request.timeout = std::chrono::hours(2);
  request.headers.Set("Content-Type", "application/json");
  request.headers.Set("Authorization", "Bearer " + session.token);
  const Clock::time_point start = Clock::now();
  std::string buffer;
  std::string final_status;
  int status = 0;
  auto response = http::FetchStreaming(
      request, [&](const http::ClientResponse& head) { status = head.status; },
      [&](std::string_view chunk) {
        buffer.append(chunk);
        for (size_t end; (end = buffer.find("\n\n")) != std::string::npos;) {
          std::string event = buffer.substr(0, end);
          buffer.erase(0, end + 2);
          size_t data_at = event.find("data: ");
          if (data_at == std::string::npos) continue;
          const json data = ParsedOrNull(std::string_view(event).substr(data_at + 6));
          const auto elapsed =
              std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count();
          if (event.rfind("event: run.end", 0) == 0) {
            final_status = base::StringOr(data, "status", "");
            PrintRun(data);
            continue;
          }
          const json& fields = base::ObjectOrEmpty(data, "data");
          std::cout << "[" << elapsed << "s] " << base::StringOr(data, "type", "");
          if (std::string step = base::StringOr(fields, "step_id", ""); !step.empty()) {
            std::cout << " step=" << step;
          }
          if (auto it = fields.find("status"); it != fields.end()) {
            std::cout << " status=" << it->dump(-1, ' ', false, json::error_handler_t::replace);
          }
          if (std::string approval = base::StringOr(fields, "approval_id", ""); !approval.empty()) {
            std::cout << " approval=" << approval;
            if (base::StringOr(data, "type", "") == "step.approval_required") {
              std::cout << " (a person decides: aevatar approvals approve|deny " << approval
                        << ", or the page /ui)";
            }
          }
          std::cout << std::endl;
        }
        return true;
      });
  if (!response.ok()) return WorkflowFail(std::string(response.status().message()));
  if (status != 200) return PrintProblem(*response);
  return final_status == "succeeded" ? 0 : 1;
}

}  // namespace

WorkflowCommands AddWorkflowCommand(CLI::App& app, WorkflowOptions& options) {
  CLI::App* workflow = app.add_subcommand("workflow", "Save, run, stop and show workflows");
  workflow->require_subcommand(1);
  workflow->add_option("--url", options.url, "aevatar URL (default: the session's)");
  WorkflowCommands commands;
  commands.save = workflow->add_subcommand("save", "Save (and admit) a workflow YAML file");
  commands.save->add_option("file", options.file, "Workflow YAML")->required();
  commands.run = workflow->add_subcommand("run", "Run a saved workflow or a YAML file");
  commands.run->add_option("workflow_id", options.workflow_id, "Saved workflow id");
  commands.run->add_option("--file", options.file, "Run this YAML as a draft");
  commands.run->add_option("--input", options.inputs, "K=V input (repeatable)");
  commands.run->add_option("--wait", options.wait, "none (default) or stream");
  commands.stop = workflow->add_subcommand("stop", "Stop a run (cancels its operation)");
  commands.stop->add_option("run_id", options.run_id, "Run id")->required();
  commands.show = workflow->add_subcommand("show", "Show a run's steps and outcomes");
  commands.show->add_option("run_id", options.run_id, "Run id")->required();
  return commands;
}

int RunWorkflowCommand(const WorkflowCommands& commands, const WorkflowOptions& options) {
  auto session = LoadSession(options.url);
  if (!session.ok()) return WorkflowFail(std::string(session.status().message()));
  if (commands.save->parsed()) {
    std::string yaml;
    if (!ReadWholeFile(options.file, yaml)) return WorkflowFail("cannot read " + options.file, 2);
    auto r = CallAevatar(*session, "POST", "/api/workflows", json{{"workflow_yaml", yaml}}.dump());
    if (r.status != 201) return PrintProblem(r);
    const json saved = ParsedOrNull(r.body);
    std::cout << "saved " << base::StringOr(saved, "workflow_id", "") << " ("
              << base::StringOr(saved, "digest", "") << "), admitted on route "
              << base::StringOr(base::ObjectOrEmpty(saved, "admission"), "slug", "") << "\n";
    return 0;
  }
  if (commands.run->parsed()) {
    json body = {{"inputs", json::object()}, {"wait", options.wait}};
    if (!options.file.empty()) {
      std::string yaml;
      if (!ReadWholeFile(options.file, yaml)) return WorkflowFail("cannot read " + options.file, 2);
      body["workflow_yaml"] = yaml;
    } else if (!options.workflow_id.empty()) {
      body["workflow_id"] = options.workflow_id;
    } else {
      return WorkflowFail("give a workflow id or --file FILE", 2);
    }
    for (const std::string& pair : options.inputs) {
      size_t eq = pair.find('=');
      if (eq == std::string::npos) return WorkflowFail("--input wants K=V", 2);
      body["inputs"][pair.substr(0, eq)] = pair.substr(eq + 1);
    }
    if (options.wait == "stream") return FollowStream(*session, body);
    auto r = CallAevatar(*session, "POST", "/api/workflow-runs", body.dump());
    if (r.status != 202) return PrintProblem(r);
    std::cout << base::StringOr(ParsedOrNull(r.body), "run_id", "") << "\n";
    return 0;
  }
  if (commands.stop->parsed()) {
    auto r = CallAevatar(*session, "POST", "/api/workflow-runs/" + options.run_id + "/stop", "{}");
    if (r.status != 202) return PrintProblem(r);
    std::cout << "stop requested; cancellation deadline "
              << base::IntOr(ParsedOrNull(r.body), "stop_deadline_unix_ms", 0) << " (unix ms)\n";
    return 0;
  }
  auto r = CallAevatar(*session, "GET", "/api/workflow-runs/" + options.run_id);
  if (r.status != 200) return PrintProblem(r);
  const json run = ParsedOrNull(r.body);
  PrintRun(run);
  return base::StringOr(run, "status", "") == "succeeded" ? 0 : 1;
}

}  // namespace aevatar::cli
