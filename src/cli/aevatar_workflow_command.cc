#include "cli/aevatar_workflow_command.h"

#include <chrono>
#include <iostream>

#include "CLI/CLI.hpp"
#include "base/json_read.h"
#include "cli/aevatar_session.h"
#include "cli/read_file.h"
#include "cli/run_event_stream.h"
#include "cli/server_replies.h"
#include "cli/workflow_run_view.h"
#include "http/message.h"

namespace aevatar::cli {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

int WorkflowFail(const std::string& message, int code = 1) {
  std::cerr << "aevatar workflow: " << message << "\n";
  return code;
}

// Follows a run's events (starting it with `start_body` when `run_id` is
// empty): the run id first, then one line per event, then the run.
int FollowRun(const AevatarSession& session, const std::string& run_id,
              const std::string& start_body, bool as_json) {
  const Clock::time_point start = Clock::now();
  RunStreamSink sink;
  sink.on_run_id = [as_json](const std::string& id) {
    if (as_json) {
      std::cout << json{{"run_id", id}}.dump() << std::endl;
    } else {
      std::cout << id << std::endl;
    }
  };
  sink.on_event = [&](const SseEvent& event, const json& data) {
    if (as_json) {
      std::cout << json{{"event", event.type}, {"id", event.id}, {"data", data}}.dump()
                << std::endl;
      return;
    }
    PrintRunEvent(std::cout, data,
                  std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count());
  };
  sink.on_end = [as_json](const json& run) {
    if (as_json) {
      std::cout << json{{"event", "run.end"}, {"run", run}}.dump() << std::endl;
    } else {
      PrintRun(std::cout, run);
    }
  };
  const RunStreamResult result = FollowRunEvents(session, run_id, start_body, sink);
  if (!result.ended) {
    std::cerr << result.error;
    return 1;
  }
  return result.run_status == "succeeded" ? 0 : 1;
}

int ListRuns(const AevatarSession& session, const WorkflowOptions& options) {
  std::string query;
  const auto add = [&query](const char* name, const std::string& value) {
    if (value.empty()) return;
    query += (query.empty() ? "?" : "&") + std::string(name) + "=" + http::PercentEncode(value);
  };
  add("status", options.status);
  add("workflow_id", options.list_workflow);
  add("limit", options.limit > 0 ? std::to_string(options.limit) : "");
  add("cursor", options.cursor);
  auto r = CallAevatar(session, "GET", "/api/workflow-runs" + query);
  if (r.status != 200) return PrintProblem(r);
  const json page = ParsedOrNull(r.body);
  if (options.json) {
    std::cout << page.dump() << "\n";
    return 0;
  }
  const json& runs = base::ArrayOrEmpty(page, "runs");
  if (runs.empty()) std::cout << "no workflow runs\n";
  for (const json& run : runs) PrintRunRow(std::cout, run);
  if (std::string next = base::StringOr(page, "next_cursor", ""); !next.empty()) {
    std::cerr << "more: aevatar workflow list --cursor " << next << "\n";
  }
  return 0;
}

// A saved workflow's schedules and webhooks (GET /api/workflows/{id}/triggers).
// The text form leaves webhook secrets off the terminal; --json prints the
// server's answer, secrets included, for whoever signs deliveries.
int ListTriggers(const AevatarSession& session, const WorkflowOptions& options) {
  auto r = CallAevatar(session, "GET",
                       "/api/workflows/" + http::PercentEncode(options.workflow_id) + "/triggers");
  if (r.status != 200) return PrintProblem(r);
  const json answer = ParsedOrNull(r.body);
  if (options.json) {
    std::cout << answer.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    return 0;
  }
  const json& triggers = base::ArrayOrEmpty(answer, "triggers");
  if (triggers.empty()) std::cout << "no triggers\n";
  for (const json& trigger : triggers) {
    if (base::StringOr(trigger, "kind", "") == "cron") {
      std::cout << "cron     " << base::StringOr(trigger, "cron", "") << "\n";
    } else {
      std::cout << "webhook  " << base::StringOr(trigger, "hook_id", "") << "  POST "
                << base::StringOr(trigger, "url", "") << "  (secret: --json)\n";
    }
  }
  return 0;
}

// The body of POST /api/workflow-runs from the options, or a usage error.
absl::StatusOr<json> RunBody(const WorkflowOptions& options) {
  json body = {{"inputs", json::object()}, {"wait", options.wait}};
  if (!options.file.empty()) {
    std::string yaml;
    if (!ReadWholeFile(options.file, yaml)) {
      return absl::InvalidArgumentError("cannot read " + options.file);
    }
    body["workflow_yaml"] = yaml;
  } else if (!options.workflow_id.empty()) {
    body["workflow_id"] = options.workflow_id;
  } else {
    return absl::InvalidArgumentError("give a workflow id or --file FILE");
  }
  for (const std::string& pair : options.inputs) {
    size_t eq = pair.find('=');
    if (eq == std::string::npos) return absl::InvalidArgumentError("--input wants K=V");
    body["inputs"][pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  return body;
}

int StartRun(const AevatarSession& session, const WorkflowOptions& options) {
  auto body = RunBody(options);
  if (!body.ok()) return WorkflowFail(std::string(body.status().message()), 2);
  if (options.wait == "stream") return FollowRun(session, "", body->dump(), options.json);
  auto r = CallAevatar(session, "POST", "/api/workflow-runs", body->dump());
  if (r.status != 202) return PrintProblem(r);
  const json started = ParsedOrNull(r.body);
  std::cout << (options.json ? started.dump() : base::StringOr(started, "run_id", "")) << "\n";
  return 0;
}

CLI::App* Example(CLI::App* command, const std::string& example) {
  command->footer("Example:\n  " + example);
  return command;
}

}  // namespace

bool WorkflowCommands::parsed() const {
  for (const CLI::App* command : {save, run, stop, show, list, watch, triggers}) {
    if (command != nullptr && command->parsed()) return true;
  }
  return false;
}

WorkflowCommands AddWorkflowCommand(CLI::App& app, WorkflowOptions& options) {
  CLI::App* workflow = app.add_subcommand("workflow", "Save, run, find, watch, stop and show runs");
  workflow->require_subcommand(1);
  workflow->add_option("--url", options.url, "aevatar URL (default: the session's)");
  Example(workflow, "aevatar workflow list --status failed");
  WorkflowCommands commands;
  commands.save = Example(workflow->add_subcommand("save", "Save (and admit) a workflow YAML file"),
                          "aevatar workflow save skills/hello/assets/hello.yaml");
  commands.save->add_option("file", options.file, "Workflow YAML")->required();
  commands.run =
      Example(workflow->add_subcommand("run",
                                       "Run a saved workflow or a YAML file; prints the run id "
                                       "first"),
              "aevatar workflow run hello --input name=world --wait stream");
  commands.run->add_option("workflow_id", options.workflow_id, "Saved workflow id");
  commands.run->add_option("--file", options.file, "Run this YAML as a draft");
  commands.run->add_option("--input", options.inputs, "K=V input (repeatable)");
  commands.run
      ->add_option("--wait", options.wait,
                   "none (default: print the run id) or stream (follow its events, resuming "
                   "after a broken connection)")
      ->check(CLI::IsMember({"none", "stream"}));
  commands.stop = Example(workflow->add_subcommand("stop", "Stop a run (cancels its operation)"),
                          "aevatar workflow stop run_0123abcd");
  commands.stop->add_option("run_id", options.run_id, "Run id")->required();
  commands.show = Example(workflow->add_subcommand("show", "Show a run's steps and outcomes"),
                          "aevatar workflow show run_0123abcd --json");
  commands.show->add_option("run_id", options.run_id, "Run id")->required();
  commands.list = Example(workflow->add_subcommand("list", "Your runs, newest first"),
                          "aevatar workflow list --workflow hello --status succeeded --limit 10");
  commands.list->add_option("--status", options.status,
                            "Only runs in this status: running, finalizing_audit, succeeded, "
                            "failed or stopped");
  commands.list->add_option("--workflow", options.list_workflow, "Only runs of this workflow id");
  commands.list->add_option("--limit", options.limit, "At most this many runs (1-100)")
      ->check(CLI::Range(1, 100));
  commands.list->add_option("--cursor", options.cursor,
                            "The next page: the cursor the previous page printed");
  commands.watch = Example(
      workflow->add_subcommand("watch", "Follow a run's events to its end (from the start)"),
      "aevatar workflow watch run_0123abcd");
  commands.watch->add_option("run_id", options.run_id, "Run id")->required();
  commands.triggers =
      Example(workflow->add_subcommand("triggers", "A saved workflow's schedules and webhooks"),
              "aevatar workflow triggers nightly-report --json");
  commands.triggers->add_option("workflow_id", options.workflow_id, "Saved workflow id")
      ->required();
  for (CLI::App* command : {commands.save, commands.run, commands.stop, commands.show,
                            commands.list, commands.watch, commands.triggers}) {
    command->add_flag("--json", options.json, "Print the server's JSON");
  }
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
    if (options.json) {
      std::cout << saved.dump() << "\n";
      return 0;
    }
    std::cout << "saved " << base::StringOr(saved, "workflow_id", "") << " ("
              << base::StringOr(saved, "digest", "") << "), admitted on route "
              << base::StringOr(base::ObjectOrEmpty(saved, "admission"), "slug", "") << "\n";
    return 0;
  }
  if (commands.run->parsed()) return StartRun(*session, options);
  if (commands.list->parsed()) return ListRuns(*session, options);
  if (commands.triggers->parsed()) return ListTriggers(*session, options);
  if (commands.watch->parsed()) return FollowRun(*session, options.run_id, "", options.json);
  const std::string path = "/api/workflow-runs/" + http::PercentEncode(options.run_id);
  if (commands.stop->parsed()) {
    auto r = CallAevatar(*session, "POST", path + "/stop", "{}");
    if (r.status != 202) return PrintProblem(r);
    const json stopped = ParsedOrNull(r.body);
    if (options.json) {
      std::cout << stopped.dump() << "\n";
      return 0;
    }
    std::cout << "stop requested; cancellation deadline "
              << base::IntOr(stopped, "stop_deadline_unix_ms", 0) << " (unix ms)\n";
    return 0;
  }
  auto r = CallAevatar(*session, "GET", path);
  if (r.status != 200) return PrintProblem(r);
  const json run = ParsedOrNull(r.body);
  if (options.json) {
    std::cout << run.dump() << "\n";
  } else {
    PrintRun(std::cout, run);
  }
  return base::StringOr(run, "status", "") == "succeeded" ? 0 : 1;
}

}  // namespace aevatar::cli
