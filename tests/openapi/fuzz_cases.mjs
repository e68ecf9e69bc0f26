// The requests the OpenAPI fuzzer sends for one operation: cases generated
// from the operation's own schemas by json-schema-faker (seeded, so a seed
// replays the same cases), the even ones well-formed, the odd ones broken in
// one place (a field of the wrong type, a body that is not JSON, a missing
// required field), since bad input must be a typed 4xx, never a 5xx.

// A deterministic PRNG (mulberry32) for the choices made here.
export function Random(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n) => Math.floor(next() * n), pick: (list) => list[Math.floor(next() * list.length)] };
}

// `schema` with every local "#/..." $ref replaced by what it names (the
// documents have no recursive schemas).
export function Dereference(value, document, depth = 0) {
  if (depth > 32) throw new Error("$ref nesting too deep");
  if (Array.isArray(value)) return value.map((item) => Dereference(item, document, depth + 1));
  if (value === null || typeof value !== "object") return value;
  if (typeof value.$ref === "string" && value.$ref.startsWith("#/")) {
    let target = document;
    for (const part of value.$ref.slice(2).split("/")) target = target?.[part];
    if (target === undefined) throw new Error(`unresolved $ref ${value.$ref}`);
    return Dereference(target, document, depth + 1);
  }
  const out = {};
  for (const [key, item] of Object.entries(value)) out[key] = Dereference(item, document, depth + 1);
  return out;
}

// Values of the wrong JSON type for anything: what a broken case puts in a field.
const kWrongValues = [12345, -1, 1.5, true, null, [], ["x"], {}, { nested: { deeper: [1] } }, "", "\u0000\u202e", "x".repeat(5000)];

// Bodies no JSON serializer would write: truncated, not UTF-8, numbers
// beyond double and int64, duplicate keys, nesting deeper than any parser limit.
const kRawBodies = ["{", "{\"a\":", "[1,", "nul", "\u00ff\u00fe", "{\"timeout_secs\": 1e999}",
  "{\"timeout_secs\": 99999999999999999999999}", "{\"timeout_secs\": -0.0}", "{\"a\": 1, \"a\": 2}",
  "[".repeat(10000), "{\"a\":".repeat(3000) + "1" + "}".repeat(3000), "\"\\ud800\""];

// Parameter values of the wrong shape: not numbers, traversal, controls, huge.
const kWrongParams = ["abc", "-1", "1e309", "99999999999999999999", "0x10", "..", "%00", "a/b", "\u00e9\u4e2d", " ", "x".repeat(3000)];

function Generate(generateSync, schema, seed) {
  return generateSync(schema, { seed, maxLength: 64, maxItems: 3, optionalsProbability: 0.5 });
}

// One request of `operation` (dereferenced), case number `index`.
//   {path_params, query, headers, body (string or undefined), broken}
export function MakeCase(generateSync, operation, pathItemParams, seed, index) {
  const random = Random(seed * 7919 + index);
  const broken = index % 2 === 1;
  const params = [...(pathItemParams ?? []), ...(operation.parameters ?? [])];
  const request = { path_params: {}, query: {}, headers: {}, body: undefined, broken };
  for (const param of params) {
    if (param.in === "header" && !param.required && random.next() < 0.5) continue;
    if (param.in === "query" && !param.required && random.next() < 0.5) continue;
    let value = Generate(generateSync, param.schema ?? { type: "string" }, seed + index);
    value = typeof value === "string" ? value : JSON.stringify(value);
    if (broken && random.next() < 0.5) value = random.pick(kWrongParams);
    if (param.in === "path" && value === "") value = "x";
    if (param.in === "header") value = value.replace(/[^\x20-\x7e]/g, "").slice(0, 200) || "x";
    const target = { path: request.path_params, query: request.query, header: request.headers }[param.in];
    if (target) target[param.name] = value;
  }
  const content = operation.requestBody?.content ?? {};
  const schema = content["application/json"]?.schema;
  if (schema) {
    let body = Generate(generateSync, schema, seed + index);
    if (broken) body = Break(body, random);
    request.body = typeof body === "string" && body.startsWith("\u0001raw:") ? body.slice(5) : JSON.stringify(body);
  } else if (Object.keys(content).length > 0 && broken) {
    request.body = JSON.stringify(random.pick(kWrongValues));
  }
  return request;
}

// Number and nesting tokens JSON.stringify never writes, put in a real field.
const kRawValues = ["1e999", "-1e999", "99999999999999999999999", "-0.0", "1.5e3", "[".repeat(5000) + "]".repeat(5000)];

// `body` broken in one place.
function Break(body, random) {
  const choice = random.int(6);
  const isObject = body !== null && typeof body === "object" && !Array.isArray(body);
  if (choice === 0 || !isObject) return random.pick(kWrongValues);  // not the right kind of body
  if (choice === 1) return "\u0001raw:" + random.pick(kRawBodies);  // not JSON we would write
  const keys = Object.keys(body);
  const copy = { ...body };
  if (choice === 2 && keys.length > 0) {
    delete copy[random.pick(keys)];
    return copy;
  }
  if (choice === 3 && keys.length > 0) {
    copy[random.pick(keys)] = random.pick(kWrongValues);
    return copy;
  }
  if (choice === 4 && keys.length > 0) {
    copy[random.pick(keys)] = "__raw_value__";
    return "\u0001raw:" + JSON.stringify(copy).replace('"__raw_value__"', random.pick(kRawValues));
  }
  copy[random.pick(["unexpected", "__proto__x", "constructor"])] = random.pick(kWrongValues);
  return copy;
}
