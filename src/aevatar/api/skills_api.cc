// The skill registry routes of aevatar's HTTP API (docs/skills.md): publish,
// list and show skills, and `use_skill` with mount_workflows, which saves
// each of a skill's workflows for the caller through the same admission as
// POST /api/workflows (SaveAdmittedWorkflow).
#include "absl/strings/str_cat.h"
#include "aevatar/api/api_support.h"
#include "aevatar/api/workflow_admission.h"
#include "aevatar/skills/skill_bundle.h"
#include "aevatar/skills/skill_requests.h"
#include "aevatar/skills/skill_rows.h"
#include "aevatar/skills/skill_store.h"
#include "aevatar/workflow/workflow_definition.h"
#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

// A stored version, checked again: its bundle hashes to the digest it was
// published with (else 500 SKILL_STORE_CORRUPT: a row altered in the
// database) and still validates (else 409 SKILL_NO_LONGER_VALID naming the
// rule's code: the rules grew stricter since it was published).
absl::StatusOr<SkillVersion> VerifiedVersion(const HttpApiDeps& deps, const std::string& name,
                                             const std::string& version) {
  auto stored = deps.skills->GetVersion(name, version);
  if (!stored.ok()) return stored.status();
  // A reserved name a user claimed before names were reserved is not used.
  if (IsReservedSkillName(name) && stored->publisher != kBundledPublisher) {
    return SkillNameReserved(name);
  }
  if (SkillDigest(stored->bundle) != stored->digest) {
    return base::ApiError(absl::StatusCode::kDataLoss, "SKILL_STORE_CORRUPT",
                          "the stored skill no longer matches its digest", 500);
  }
  auto checked = ValidateSkillBundle(stored->bundle);
  if (!checked.ok()) {
    return base::ApiError(
        absl::StatusCode::kFailedPrecondition, "SKILL_NO_LONGER_VALID",
        absl::StrCat(name, "@", version, " no longer validates (", base::ApiCode(checked.status()),
                     ": ", checked.status().message(), "); publish a new version"),
        409);
  }
  checked->publisher = stored->publisher;
  checked->published_at_ms = stored->published_at_ms;
  return checked;
}

// NAME[@VERSION] -> the exact stored version (the latest when none is named).
absl::StatusOr<SkillVersion> Resolve(const HttpApiDeps& deps, const SkillRef& ref) {
  if (ref.version) return VerifiedVersion(deps, ref.name, *ref.version);
  auto versions = deps.skills->ListVersions(ref.name);
  if (!versions.ok()) return versions.status();
  std::vector<std::string> texts;
  for (const SkillVersion& v : *versions) texts.push_back(v.version);
  auto latest = LatestVersion(texts);
  if (!latest) return SkillNotFound(ref.name, "");
  return VerifiedVersion(deps, ref.name, *latest);
}

// Who published a version, as a caller may see it: never another user's id.
std::string PublisherOf(const SkillVersion& v, const Caller& caller) {
  if (v.publisher == kBundledPublisher) return "bundled";
  return v.publisher == caller.user_id ? "you" : "another user";
}

json VersionSummary(const SkillVersion& v, const Caller& caller) {
  return {{"name", v.name},
          {"version", v.version},
          {"description", v.description},
          {"digest", v.digest},
          {"publisher", PublisherOf(v, caller)},
          {"published_at", base::FormatUtcMillis(v.published_at_ms)}};
}

json WorkflowsJson(const SkillVersion& v) {
  json list = json::array();
  for (const SkillWorkflow& w : v.workflows) {
    list.push_back(
        {{"file", "assets/" + w.file}, {"workflow_id", w.workflow_id}, {"digest", w.digest}});
  }
  return list;
}

// A version with its files: what the spec's inline fallback submits.
json VersionDetail(const SkillVersion& v, const Caller& caller) {
  json detail = VersionSummary(v, caller);
  detail["workflows"] = WorkflowsJson(v);
  detail["skill_yaml"] = v.bundle.manifest_yaml;
  json assets = json::object();
  for (const auto& [file, yaml] : v.bundle.assets) assets[file] = yaml;
  detail["assets"] = assets;
  return detail;
}

json MountJson(const SkillMount& m) {
  json model = {{"mount_id", m.mount_id},
                {"skill", m.name + "@" + m.version},
                {"name", m.name},
                {"version", m.version},
                {"digest", m.digest},
                {"state", m.state},
                {"done", m.state != "mounting"},
                {"workflows", m.workflows},
                {"created_at", base::FormatUtcMillis(m.created_at_ms)},
                {"updated_at", base::FormatUtcMillis(m.updated_at_ms)},
                {"status_url", "/api/skills/mounts/" + m.mount_id}};
  if (m.state == "failed") {
    model["error"] = {
        {"code", m.error_code}, {"detail", m.error_detail}, {"diagnostic_id", m.diagnostic_id}};
  }
  return model;
}

// A mount's state that could not be stored: a typed 5xx (503 when the store
// is unavailable, so a retry may succeed), whatever the store's own code.
absl::Status MountNotRecorded(const absl::Status& error) {
  const bool transient = absl::IsUnavailable(error);
  return base::ApiError(transient ? absl::StatusCode::kUnavailable : absl::StatusCode::kInternal,
                        "SKILL_MOUNT_NOT_RECORDED",
                        "the mount's state could not be stored; use the skill again",
                        transient ? 503 : 500);
}

// Mounts `skill`'s workflows for `caller`, recording each step in the mount
// so a reader sees how far it got; a workflow that cannot be saved fails the
// mount with its typed error (the ones before it stay saved). An error
// (SKILL_MOUNT_NOT_RECORDED) when its start or its end state could not be
// recorded.
absl::StatusOr<SkillMount> Mount(const HttpApiDeps& deps, const Caller& caller,
                                 const SkillVersion& skill, RequestNote& note) {
  SkillMount mount;
  mount.mount_id = base::RandomId("mnt_");
  mount.owner = caller.user_id;
  mount.name = skill.name;
  mount.version = skill.version;
  mount.digest = skill.digest;
  mount.state = "mounting";
  mount.diagnostic_id = note.diagnostic_id;
  mount.created_at_ms = mount.updated_at_ms = base::NowUnixMs();
  for (const SkillWorkflow& w : skill.workflows) {
    mount.workflows.push_back({{"workflow_id", w.workflow_id},
                               {"file", "assets/" + w.file},
                               {"digest", w.digest},
                               {"state", "pending"}});
  }
  auto record = [&](std::string state, const absl::Status& error) {
    mount.state = std::move(state);
    if (!error.ok()) {
      mount.error_code = base::ApiCode(error);
      mount.error_detail = std::string(error.message());
    }
    mount.updated_at_ms = base::NowUnixMs();
    absl::Status stored = deps.skills->PutMount(mount);
    return stored.ok() ? stored : MountNotRecorded(stored);
  };
  if (absl::Status st = record("mounting", absl::OkStatus()); !st.ok()) return st;
  for (size_t i = 0; i < skill.workflows.size(); ++i) {
    const SkillWorkflow& w = skill.workflows[i];
    auto definition = ParseWorkflowYaml(skill.bundle.assets.at(w.file));
    // A second guard behind publish: a mount never installs the
    // publisher's triggers on the mounter's Agent Key.
    if (definition.ok() && !definition->triggers.empty()) {
      definition = SkillTriggersForbidden(w.file);
    }
    absl::StatusOr<SavedWorkflow> saved =
        definition.ok() ? SaveAdmittedWorkflow(deps, caller, *definition, note)
                        : absl::StatusOr<SavedWorkflow>(definition.status());
    if (!saved.ok()) {
      mount.workflows[i]["state"] = "failed";
      note.code = base::ApiCode(saved.status());
      // A mount left at `mounting` would be polled forever: an unrecorded
      // end state is the caller's error, not a 202.
      if (absl::Status st = record("failed", saved.status()); !st.ok()) return st;
      return mount;
    }
    mount.workflows[i]["state"] = "mounted";
    mount.workflows[i]["admission_slug"] = saved->admission_proof.value("slug", "");
  }
  if (absl::Status st = record("mounted", absl::OkStatus()); !st.ok()) return st;
  return mount;
}

http::Response HandlePublish(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto bundle = ParsePublishRequest(request.body);
  if (!bundle.ok()) return Problem(bundle.status(), note);
  auto skill = ValidateSkillBundle(*bundle);
  if (!skill.ok()) return Problem(skill.status(), note);
  skill->publisher = caller->user_id;
  skill->published_at_ms = base::NowUnixMs();
  auto outcome = deps.skills->Publish(*skill);
  if (!outcome.ok()) return Problem(outcome.status(), note);
  const bool created = *outcome == PublishOutcome::kCreated;
  json body = VersionSummary(*skill, *caller);
  body["created"] = created;
  body["workflows"] = WorkflowsJson(*skill);
  if (!created) body.erase("published_at");  // the stored time stays the first one's
  return Json(created ? 201 : 200, body);
}

http::Response HandleList(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto versions = deps.skills->ListVersions("");
  if (!versions.ok()) return Problem(versions.status(), note);
  json skills = json::array();
  for (size_t i = 0; i < versions->size();) {
    const std::string& name = (*versions)[i].name;
    json entry = {{"name", name}, {"versions", json::array()}};
    std::vector<std::string> texts;
    for (; i < versions->size() && (*versions)[i].name == name; ++i) {
      texts.push_back((*versions)[i].version);
      entry["versions"].push_back((*versions)[i].version);
      entry["description"] = (*versions)[i].description;
    }
    entry["latest"] = LatestVersion(texts).value_or("");
    skills.push_back(entry);
  }
  return Json(200, {{"skills", skills}});
}

http::Response HandleShow(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto ref = ParseSkillRef(request.path_params.at("name"));
  if (!ref.ok()) return Problem(ref.status(), note);
  auto versions = deps.skills->ListVersions(ref->name);
  if (!versions.ok()) return Problem(versions.status(), note);
  if (versions->empty()) return Problem(SkillNotFound(ref->name, ""), note);
  json list = json::array();
  std::vector<std::string> texts;
  for (const SkillVersion& v : *versions) {
    list.push_back(VersionSummary(v, *caller));
    texts.push_back(v.version);
  }
  return Json(
      200,
      {{"name", ref->name}, {"latest", LatestVersion(texts).value_or("")}, {"versions", list}});
}

http::Response HandleShowVersion(const HttpApiDeps& deps, http::Request& request,
                                 RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto ref =
      ParseSkillRef(request.path_params.at("name") + "@" + request.path_params.at("version"));
  if (!ref.ok()) return Problem(ref.status(), note);
  auto skill = Resolve(deps, *ref);
  if (!skill.ok()) return Problem(skill.status(), note);
  return Json(200, VersionDetail(*skill, *caller));
}

http::Response HandleUse(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto use = ParseUseSkillRequest(request.body);
  if (!use.ok()) return Problem(use.status(), note);
  auto skill = Resolve(deps, use->ref);
  if (!skill.ok()) return Problem(skill.status(), note);
  if (use->digest && *use->digest != skill->digest) {
    return Problem(base::ApiError(absl::StatusCode::kFailedPrecondition, "SKILL_DIGEST_MISMATCH",
                                  skill->name + "@" + skill->version + " has digest " +
                                      skill->digest + ", not the pinned one"),
                   note);
  }
  if (!use->mount_workflows) {
    json body = VersionDetail(*skill, *caller);
    body["mounted"] = false;
    return Json(200, body);
  }
  auto mount = Mount(deps, *caller, *skill, note);
  if (!mount.ok()) return Problem(mount.status(), note);
  return Json(202, MountJson(*mount));
}

http::Response HandleGetMount(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto mount = deps.skills->GetMount(request.path_params.at("id"));
  if (mount.ok() && mount->owner != caller->user_id) return Problem(MountNotFound(), note);
  if (!mount.ok()) return Problem(mount.status(), note);
  return Json(200, MountJson(*mount));
}

}  // namespace

void AddSkillRoutes(const AddRoute& add) {
  add("POST", "/api/skills", HandlePublish);
  add("GET", "/api/skills", HandleList);
  add("GET", "/api/skills/{name}", HandleShow);
  add("GET", "/api/skills/{name}/versions/{version}", HandleShowVersion);
  add("POST", "/api/skills/use", HandleUse);
  add("GET", "/api/skills/mounts/{id}", HandleGetMount);
}

}  // namespace aevatar::orchestrator
