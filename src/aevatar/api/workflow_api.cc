// The workflow routes of aevatar's HTTP API.
#include <chrono>
#include <thread>

#include "aevatar/admission/admission_proof.h"
#include "aevatar/admission/route_admission.h"
#include "aevatar/api/api_support.h"
#include "aevatar/api/run_listing.h"
#include "aevatar/api/trigger_runs.h"
#include "aevatar/api/workflow_admission.h"
#include "aevatar/audit/audit_log.h"
#include "aevatar/runtime/run_turns.h"
#include "aevatar/runtime/workflow_runtime.h"
#include "aevatar/runtime/workflow_store.h"
#include "aevatar/workflow/workflow_definition.h"
#include "aevatar/workflow/workflow_template.h"
#include "base/api_error.h"
#include "base/clock.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

// Streams of a run's events end at the latest after this long.
constexpr auto kMaxStream = std::chrono::minutes(30);

absl::StatusOr<json> JsonBody(const http::Request& request) {
  auto body = base::ParseJsonObject(request.body);
  if (!body.ok()) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "MALFORMED_JSON",
                          "the body must be a JSON object");
  }
  return body;
}

// A request member of the wrong type: 400 INVALID_FIELD_TYPE, naming the
// field (base/json_read.h messages never quote the value).
absl::Status BadField(const absl::Status& read) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, "INVALID_FIELD_TYPE",
                        std::string(read.message()));
}

// POST /api/workflows: {workflow_yaml}.
absl::StatusOr<std::string> WorkflowYamlOf(const json& body) {
  auto yaml = base::RequiredString(body, "workflow_yaml");
  if (!yaml.ok()) return BadField(yaml.status());
  return yaml;
}

// POST /api/workflow-runs: {workflow_yaml | workflow_id, inputs?, wait?}.
struct RunRequest {
  std::optional<std::string> workflow_yaml;  // a draft run
  std::string workflow_id;                   // else a saved workflow
  json inputs = json::object();
  std::string wait = "none";
};

absl::StatusOr<RunRequest> ParseRunRequest(const json& body) {
  RunRequest request;
  auto yaml = base::OptionalString(body, "workflow_yaml");
  if (!yaml.ok()) return BadField(yaml.status());
  request.workflow_yaml = *yaml;
  auto id = base::OptionalString(body, "workflow_id");
  if (!id.ok()) return BadField(id.status());
  request.workflow_id = id->value_or("");
  auto wait = base::OptionalString(body, "wait");
  if (!wait.ok()) return BadField(wait.status());
  request.wait = wait->value_or("none");
  if (body.contains("inputs") && !body["inputs"].is_null()) {
    auto inputs = base::RequiredObject(body, "inputs");
    if (!inputs.ok()) return BadField(inputs.status());
    request.inputs = **inputs;
  }
  return request;
}

// The proof as callers may see it: no route identity.
json ProofSummary(const json& proof) {
  return {{"version", proof.value("version", "")},
          {"capability", proof.value("capability", "")},
          {"slug", proof.value("slug", "")},
          {"catalog_service_id", proof.value("catalog_service_id", "")}};
}

absl::StatusOr<RunRecord> OwnedRun(const HttpApiDeps& deps, const http::Request& request,
                                   const Caller& caller) {
  auto run = deps.workflows->GetRun(request.path_params.at("id"));
  if (run.ok() && run->owner != caller.user_id) {
    return base::ApiError(absl::StatusCode::kNotFound, "RUN_NOT_FOUND",
                          "no such workflow run for this caller");
  }
  return run;
}

json RunReadModel(const RunRecord& run) {
  const json& state = run.state;
  json steps = json::array();
  for (const json& step : state["steps"]) {
    json view = {{"id", step.value("id", "")},
                 {"tool", step.value("tool", "")},
                 {"status", step.value("status", "")}};
    if (step.contains("outcome_code")) view["outcome_code"] = step["outcome_code"];
    // A private_ssh step waiting for (or past) its owner's approval.
    if (step.contains("approval_id")) view["approval_id"] = step["approval_id"];
    if (step.contains("diagnostic_id")) view["diagnostic_id"] = step["diagnostic_id"];
    if (step.contains("output")) {
      const json& output = step["output"];
      view["output"] = {{"stdout", output.value("stdout", "")},
                        {"stderr", output.value("stderr", "")},
                        {"exit_code", output.value("exit_code", json(nullptr))}};
      // A codex_exec step's result fields (managed_sandbox), for `expect`
      // readers and the CLI: status, target, output, diagnostic_id.
      for (const char* field : {"status", "target", "output", "diagnostic_id", "elapsed_ms"}) {
        if (output.contains("target") && output.contains(field)) {
          view["output"][field] = output[field];
        }
      }
      // A private_ssh step's result is NyxID's raw SSH response.
      if (output.contains("timed_out")) view["output"]["timed_out"] = output["timed_out"];
    }
    if (step.contains("expectation_failures")) {
      view["expectation_failures"] = step["expectation_failures"];
    }
    if (step.contains("started_at_ms")) {
      const int64_t end = step.value("finished_at_ms", base::NowUnixMs());
      view["elapsed_ms"] = end - step.value("started_at_ms", end);
    }
    steps.push_back(view);
  }
  json model = {{"run_id", run.run_id}, {"workflow_id", run.workflow_id},
                {"status", run.phase},  {"done", IsTerminalPhase(run.phase)},
                {"steps", steps},       {"created_at", base::FormatUtcMillis(run.created_at_ms)}};
  if (state.contains("outcome_code")) model["outcome_code"] = state["outcome_code"];
  if (state.contains("diagnostic_id")) model["diagnostic_id"] = state["diagnostic_id"];
  if (state.contains("finished_at_ms")) {
    model["finished_at"] = base::FormatUtcMillis(state.value("finished_at_ms", int64_t{0}));
  }
  if (state["stop"].is_object()) {
    model["stop_deadline_unix_ms"] = state["stop"].value("deadline_unix_ms", int64_t{0});
  }
  return model;
}

json EventJson(const RunEvent& event) {
  return {{"seq", event.seq},
          {"type", event.type},
          {"at", base::FormatUtcMillis(event.at_ms)},
          {"data", event.data}};
}

// Server-sent events of a run after event `after_seq` until it ends (or the
// client leaves). Each event's `id:` is its sequence number, so a client
// whose connection broke reconnects to the events route with that number as
// Last-Event-ID and misses nothing. The run's id is in the X-Run-Id header,
// before any event.
http::Response StreamRun(const HttpApiDeps& deps, const std::string& run_id, int64_t after_seq) {
  http::Response response;
  response.headers.Set("Content-Type", "text/event-stream");
  response.headers.Set("Cache-Control", "no-cache");
  response.headers.Set("X-Run-Id", run_id);
  WorkflowStore* store = deps.workflows;
  response.stream = [store, run_id, after_seq](const http::ChunkWriter& write) {
    int64_t after = after_seq;
    const auto until = std::chrono::steady_clock::now() + kMaxStream;
    while (std::chrono::steady_clock::now() < until) {
      auto events = store->EventsAfter(run_id, after);
      if (!events.ok()) return;
      for (const RunEvent& event : *events) {
        after = event.seq;
        if (!write("event: " + event.type + "\nid: " + std::to_string(event.seq) +
                   "\ndata: " + EventJson(event).dump() + "\n\n")) {
          return;
        }
      }
      auto run = store->GetRun(run_id);
      if (!run.ok()) return;
      if (IsTerminalPhase(run->phase) && events->empty()) {
        write("event: run.end\ndata: " + RunReadModel(*run).dump() + "\n\n");
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  };
  return response;
}

http::Response HandleSaveWorkflow(const HttpApiDeps& deps, http::Request& request,
                                  RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto body = JsonBody(request);
  if (!body.ok()) return Problem(body.status(), note);
  auto yaml = WorkflowYamlOf(*body);
  if (!yaml.ok()) return Problem(yaml.status(), note);
  auto definition = ParseWorkflowYaml(*yaml);
  if (!definition.ok()) return Problem(definition.status(), note);
  json triggers;
  auto saved = SaveAdmittedWorkflow(deps, *caller, *definition, note, &triggers);
  if (!saved.ok()) return Problem(saved.status(), note);
  json answer = {{"workflow_id", saved->workflow_id},
                 {"digest", saved->digest},
                 {"admission", ProofSummary(saved->admission_proof)}};
  // A new webhook's secret is in this answer: no cache may keep it.
  if (triggers.is_array() && !triggers.empty()) answer["triggers"] = std::move(triggers);
  return NoStore(Json(201, answer));
}

http::Response HandleBindWorkflow(const HttpApiDeps& deps, http::Request& request,
                                  RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto saved = deps.workflows->GetWorkflow(caller->user_id, request.path_params.at("id"));
  if (!saved.ok()) return Problem(saved.status(), note);
  auto admission = AdmitWorkflow(deps, *caller, note, /*converge=*/true);
  if (!admission.ok()) return Problem(admission.status(), note);
  saved->admission_proof = admission->proof;
  saved->authorization_catalog = admission->catalog;
  if (auto st = deps.workflows->SaveWorkflow(*saved); !st.ok()) return Problem(st, note);
  return Json(200,
              {{"workflow_id", saved->workflow_id}, {"admission", ProofSummary(admission->proof)}});
}

http::Response HandleStartRun(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto body = JsonBody(request);
  if (!body.ok()) return Problem(body.status(), note);
  auto run_request = ParseRunRequest(*body);
  if (!run_request.ok()) return Problem(run_request.status(), note);
  if (run_request->workflow_yaml && caller->RestrictedAgentKey()) {
    return Problem(AgentKeyRestricted("a restricted Agent Key starts runs of saved workflows only; "
                                      "a draft run is authoring"),
                   note);
  }
  absl::StatusOr<WorkflowDefinition> definition;
  absl::StatusOr<WorkflowAdmission> admission;
  if (run_request->workflow_yaml) {  // a draft run: admitted (and converged) now
    definition = ParseWorkflowYaml(*run_request->workflow_yaml);
    if (!definition.ok()) return Problem(definition.status(), note);
    admission = AdmitWorkflow(deps, *caller, note, /*converge=*/true);
  } else {
    auto saved = deps.workflows->GetWorkflow(caller->user_id, run_request->workflow_id);
    if (!saved.ok()) return Problem(saved.status(), note);
    definition = WorkflowFromJson(saved->definition);
    if (!definition.ok()) return Problem(definition.status(), note);
    admission = AdmissionForSavedPlan(deps, *caller, *saved, note);
  }
  if (!admission.ok()) return Problem(admission.status(), note);
  auto inputs = BindInputs(*definition, run_request->inputs);
  if (!inputs.ok()) return Problem(inputs.status(), note);
  auto run_id =
      deps.runtime->StartRun(*caller, *definition, *inputs, admission->proof, admission->catalog);
  if (!run_id.ok()) return Problem(run_id.status(), note);
  if (run_request->wait == "stream") return StreamRun(deps, *run_id, 0);
  return Json(202, {{"run_id", *run_id},
                    {"status_url", "/api/workflow-runs/" + *run_id},
                    {"events_url", "/api/workflow-runs/" + *run_id + "/events"}});
}

http::Response HandleGetRun(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto run = OwnedRun(deps, request, *caller);
  if (!run.ok()) return Problem(run.status(), note);
  return Json(200, RunReadModel(*run));
}

// GET /api/workflow-runs[?status=&workflow_id=&limit=&cursor=]: the
// caller's runs, newest first, a page at a time; `next_cursor` (absent on
// the last page) asks for the next one.
http::Response HandleListRuns(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto query = RunListQueryOf(caller->user_id, request.QueryParam("status"),
                              request.QueryParam("workflow_id"), request.QueryParam("limit"),
                              request.QueryParam("cursor"));
  if (!query.ok()) return Problem(query.status(), note);
  auto listed = deps.workflows->ListRuns(*query);
  if (!listed.ok()) return Problem(listed.status(), note);
  const bool more = static_cast<int>(listed->size()) == query->limit;
  if (more) listed->pop_back();
  json runs = json::array();
  for (const RunRecord& run : *listed) runs.push_back(RunReadModel(run));
  json page = {{"runs", runs}};
  if (more && !listed->empty()) {
    page["next_cursor"] = EncodeRunCursor({listed->back().created_at_ms, listed->back().run_id});
  }
  return Json(200, page);
}

http::Response HandleRunEvents(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto run = OwnedRun(deps, request, *caller);
  if (!run.ok()) return Problem(run.status(), note);
  auto after = LastEventIdOf(request.headers.Get("Last-Event-ID"));
  if (!after.ok()) return Problem(after.status(), note);
  if (request.headers.Get("Accept").value_or("").find("text/event-stream") != std::string::npos) {
    return StreamRun(deps, run->run_id, *after);
  }
  auto events = deps.workflows->EventsAfter(run->run_id, *after);
  if (!events.ok()) return Problem(events.status(), note);
  json list = json::array();
  for (const RunEvent& event : *events) list.push_back(EventJson(event));
  return Json(200, {{"run_id", run->run_id}, {"events", list}});
}

http::Response HandleStopRun(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto deadline = deps.runtime->RequestStop(request.path_params.at("id"), caller->user_id);
  if (!deadline.ok()) return Problem(deadline.status(), note);
  return Json(202,
              {{"run_id", request.path_params.at("id")}, {"stop_deadline_unix_ms", *deadline}});
}

http::Response HandleAudit(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  request.path_params["id"] = request.QueryParam("run_id").value_or("");
  auto run = OwnedRun(deps, request, *caller);
  if (!run.ok()) return Problem(run.status(), note);
  auto records = deps.audit->ForRun(run->run_id);
  if (!records.ok()) return Problem(records.status(), note);
  json list = json::array();
  for (const AuditRecord& record : *records) {
    list.push_back({{"record_id", record.record_id},
                    {"kind", record.kind},
                    {"run_id", record.run_id},
                    {"workflow_id", record.workflow_id},
                    {"step_id", record.step_id},
                    {"call_id", record.call_id},
                    {"correlation_id", record.correlation_id},
                    {"fact", record.fact},
                    {"content_hash", record.content_hash},
                    {"recorded_at", base::FormatUtcMillis(record.recorded_at_ms)}});
  }
  return Json(200, {{"run_id", run->run_id}, {"records", list}});
}

}  // namespace

void AddWorkflowRoutes(const AddRoute& add) {
  add("POST", "/api/workflows", HandleSaveWorkflow);
  add("POST", "/api/workflows/{id}/bind", HandleBindWorkflow);
  // A saved workflow's run: its steps' calls check a restricted key (NyxID's
  // proxy and SSH route, ManagedCodex::Execute); a draft run is refused.
  add("POST", "/api/workflow-runs", HandleStartRun, CallerScope::kExecution);
  add("GET", "/api/workflow-runs", HandleListRuns);
  add("GET", "/api/workflow-runs/{id}", HandleGetRun);
  add("GET", "/api/workflow-runs/{id}/events", HandleRunEvents);
  add("POST", "/api/workflow-runs/{id}/stop", HandleStopRun);
  add("GET", "/api/audit", HandleAudit);
}

}  // namespace aevatar::orchestrator
