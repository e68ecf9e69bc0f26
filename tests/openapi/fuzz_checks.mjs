// What one answer must satisfy against its operation in the OpenAPI document
// (dereferenced): never 500, and no other 5xx the document does not declare;
// a status the operation declares; a Content-Type it declares for that
// status; problem+json with a typed `code` and a `diagnostic_id`; a JSON
// body valid against the declared schema (ajv, JSON Schema 2020-12, the
// dialect of OpenAPI 3.1).

const kCompiled = new WeakMap();  // schema object -> ajv validator

// The declared response for `status`: exact, then "4XX"-style, then default.
function DeclaredResponse(operation, status) {
  const responses = operation.responses ?? {};
  return responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
}

function MediaType(contentType) {
  return (contentType ?? "").split(";")[0].trim().toLowerCase();
}

// Returns the list of violations (strings; empty when the answer conforms).
export function CheckAnswer(ajv, operation, status, contentType, text) {
  const violations = [];
  const declared = DeclaredResponse(operation, status);
  if (status === 500) violations.push("500: an internal error");
  if (!declared) {
    violations.push(`status ${status} is not declared for this operation`);
    return violations;
  }
  const media = MediaType(contentType);
  let parsed;
  if (media === "application/json" || media === "application/problem+json") {
    try {
      parsed = JSON.parse(text);
    } catch {
      violations.push(`${media} body is not JSON: ${JSON.stringify(text.slice(0, 120))}`);
      return violations;
    }
  }
  if (media === "application/problem+json") {
    if (typeof parsed?.code !== "string" || parsed.code === "") violations.push("problem+json without a code");
    if (typeof parsed?.diagnostic_id !== "string" || parsed.diagnostic_id === "") {
      violations.push("problem+json without a diagnostic_id");
    }
  }
  const content = declared.content ?? {};
  if (Object.keys(content).length === 0) {
    if (text.length > 0 && status !== 101) violations.push(`status ${status} declares no body but has one (${media})`);
    return violations;
  }
  const entry = content[media] ?? content["*/*"];
  if (!entry) {
    violations.push(`Content-Type ${media || "(none)"} is not declared for ${status} (declared: ${Object.keys(content).join(", ")})`);
    return violations;
  }
  if (parsed !== undefined && entry.schema) {
    let validate = kCompiled.get(entry.schema);
    if (!validate) kCompiled.set(entry.schema, (validate = ajv.compile(entry.schema)));
    if (!validate(parsed)) {
      const first = validate.errors.slice(0, 3).map((e) => `${e.instancePath || "/"} ${e.message}`);
      violations.push(`body does not match the declared schema: ${first.join("; ")}`);
    }
  }
  return violations;
}
