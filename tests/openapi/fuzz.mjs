// The OpenAPI fuzzer: every operation of each running service's
// GET /openapi.json is called with seeded, schema-generated requests (half of
// them broken on purpose) under a real credential, and every answer is
// checked against the document (fuzz_checks.mjs). It stands in for
// schemathesis, which CI cannot install here (no PyPI); the generator is
// json-schema-faker and the validator ajv, both pinned by scripts/setup under
// /opt/aevatar/test-node.
//
//   node fuzz.mjs CONFIG_JSON
//   CONFIG_JSON: {"seed", "examples", "budget_secs", "nyxid_url", "username", "password",
//                 "services": [{"name", "document_url", "base_url", "via_slug"?, "skip": ["METHOD /path"]}]}
// A service's requests go to base_url + path, with the caller's NyxID access
// token as the bearer; `via_slug` sends them through NyxID's proxy route of
// that slug (base_url is then the proxy prefix) with its _nyxid_via. Prints
// each violation with the seed and case that reproduce it, then one JSON
// line {"ok", "seed", "services": [{name, cases, violations, statuses}]}.
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

import { CheckAnswer } from "./fuzz_checks.mjs";
import { Dereference, MakeCase } from "./fuzz_cases.mjs";

const kModules = process.env.AEVATAR_TEST_NODE_MODULES ?? "/opt/aevatar/test-node/node_modules";
const require = createRequire(join(kModules, "noop.js"));
const Ajv2020 = require("ajv/dist/2020").default;
const { generateSync } = await import(pathToFileURL(join(kModules, "json-schema-faker/dist/index.js")).href);

const config = JSON.parse(process.argv[2]);
const seed = Number(process.env.AEVATAR_FUZZ_SEED ?? config.seed ?? 14);
const examples = Number(config.examples ?? 10);
const budgetMs = Number(config.budget_secs ?? 60) * 1000;
const kMethods = ["get", "put", "post", "delete", "patch", "options"];

async function Send(method, url, headers, body) {
  const response = await fetch(url, { method, headers, body, redirect: "manual", signal: AbortSignal.timeout(60_000) });
  return { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() };
}

async function Login() {
  const answer = await Send("POST", `${config.nyxid_url}/api/v1/auth/login`, { "Content-Type": "application/json" },
    JSON.stringify({ username: config.username, password: config.password }));
  const token = JSON.parse(answer.text).access_token;
  if (!token) throw new Error(`login failed: ${answer.status}`);
  return token;
}

// The id of the caller's route with `slug` (for the proxy's _nyxid_via).
async function RouteId(token, slug) {
  const answer = await Send("GET", `${config.nyxid_url}/api/v1/user-services`, { Authorization: `Bearer ${token}` });
  const route = (JSON.parse(answer.text).user_services ?? []).find((s) => s.slug === slug);
  if (!route) throw new Error(`no route ${slug}`);
  return route.id;
}

function UrlOf(service, path, request, via) {
  let filled = path.replace(/\{([^}]+)\}/g, (_, name) => encodeURIComponent(request.path_params[name] ?? "x"));
  const query = new URLSearchParams(request.query);
  if (via) query.set("_nyxid_via", via);
  const text = query.toString();
  return service.base_url + filled + (text ? `?${text}` : "");
}

async function FuzzService(service, token, ajv) {
  const served = await Send("GET", service.document_url, {});
  if (served.status !== 200) throw new Error(`${service.document_url}: ${served.status}`);
  const document = JSON.parse(served.text);
  const resolved = Dereference(document, document);
  const via = service.via_slug ? await RouteId(token, service.via_slug) : undefined;
  const summary = { name: service.name, cases: 0, violations: 0, statuses: {} };
  const deadline = Date.now() + budgetMs;
  const skip = new Set(service.skip ?? []);
  const operations = [];
  for (const path of Object.keys(resolved.paths).sort()) {
    for (const method of kMethods) {
      if (resolved.paths[path][method] && !skip.has(`${method.toUpperCase()} ${path}`)) operations.push([path, method]);
    }
  }
  // Case-major order: every operation gets its first cases before the budget can run out.
  for (let index = 0; index < examples && Date.now() < deadline; ++index) {
    for (const [path, method] of operations) {
      if (Date.now() >= deadline) break;
      const item = resolved.paths[path];
      const operation = item[method];
      const request = MakeCase(generateSync, operation, item.parameters, seed, index);
      const headers = { ...request.headers, Authorization: `Bearer ${token}` };
      if (request.body !== undefined) headers["Content-Type"] = "application/json";
      // Some broken cases are broken in the envelope instead: no credential,
      // a garbage one, or a body under another media type. Through a proxy
      // the credential is the proxy's to refuse, in the proxy's document.
      const ownCredential = !service.via_slug;
      if (ownCredential && request.broken && index % 8 === 3) delete headers.Authorization;
      if (ownCredential && request.broken && index % 8 === 5) headers.Authorization = "Bearer \u00ff.e30.";
      if (request.broken && index % 8 === 7 && request.body !== undefined) headers["Content-Type"] = "text/plain";
      const url = UrlOf(service, path, request, via);
      let answer;
      try {
        answer = await Send(method.toUpperCase(), url, headers, request.body);
      } catch (error) {
        answer = { status: 0, contentType: "", text: "" };
        Report(service, method, path, index, request, [`no answer: ${error.message}`]);
        ++summary.violations;
        continue;
      }
      ++summary.cases;
      summary.statuses[answer.status] = (summary.statuses[answer.status] ?? 0) + 1;
      const violations = CheckAnswer(ajv, operation, answer.status, answer.contentType, answer.text);
      if (violations.length > 0) {
        ++summary.violations;
        Report(service, method, path, index, request, violations, answer);
      }
    }
  }
  summary.budget_reached = Date.now() >= deadline;
  return summary;
}

// One violation, with what reproduces it (never the credential).
function Report(service, method, path, index, request, violations, answer) {
  console.log(JSON.stringify({
    violation: violations, service: service.name, operation: `${method.toUpperCase()} ${path}`,
    seed, case: index, path_params: request.path_params, query: request.query,
    body: request.body?.slice(0, 300), status: answer?.status, answer: answer?.text.slice(0, 300),
  }));
}

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const token = await Login();
const results = [];
for (const service of config.services) results.push(await FuzzService(service, token, ajv));
const ok = results.every((r) => r.violations === 0 && r.cases > 0);
console.log(JSON.stringify({ ok, seed, services: results }));
process.exit(ok ? 0 : 1);
