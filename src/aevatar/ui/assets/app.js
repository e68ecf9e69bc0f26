// The approvals page (and the caller's workflow runs). The access token lives in sessionStorage and goes out
// only as the Authorization header of same-origin API calls: no cookie, so
// no request forged by another site carries it. Every text from the server
// is set with textContent, never parsed as HTML.
"use strict";

const TOKEN_KEY = "aevatar.access_token";
const REFRESH_MS = 5000;
let refreshTimer = null;

function $(id) {
  return document.getElementById(id);
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

async function api(method, path) {
  const response = await fetch(path, {
    method,
    headers: { Authorization: "Bearer " + token() },
    cache: "no-store",
  });
  let body = null;
  try {
    body = await response.json();
  } catch (e) {
    body = null;
  }
  if (response.status === 401) {
    logout();
    throw new Error("Your session ended; log in again.");
  }
  if (!response.ok) {
    const code = body && typeof body.code === "string" ? body.code : "HTTP " + response.status;
    const id = body && typeof body.diagnostic_id === "string" ? " (" + body.diagnostic_id + ")" : "";
    throw new Error(code + id);
  }
  return body;
}

function row(list, name, value) {
  list.append(el("dt", "", name));
  const dd = el("dd");
  if (value instanceof Node) dd.append(value);
  else dd.textContent = String(value);
  list.append(dd);
}

function renderApproval(approval) {
  const card = el("article", "approval");
  card.dataset.id = approval.id;
  const title = el("h3", "", approval.tool + " " + approval.id);
  title.append(el("span", "state state-" + approval.state, approval.state));
  card.append(title);

  const call = approval.call && typeof approval.call === "object" ? approval.call : {};
  const target = call.target && typeof call.target === "object" ? call.target : {};
  const details = target[target.kind] && typeof target[target.kind] === "object" ? target[target.kind] : {};
  const list = el("dl");
  row(list, "target", String(target.kind || ""));
  if (details.service !== undefined) row(list, "service", details.service);
  if (details.principal !== undefined) row(list, "principal", details.principal);
  if (call.timeout_secs !== undefined) row(list, "timeout", call.timeout_secs + " s");
  row(list, "prompt", el("pre", "prompt", call.prompt === undefined ? "" : call.prompt));
  row(list, "call digest", approval.call_digest);
  row(list, "expires", new Date(approval.expires_at_ms).toLocaleString());
  card.append(list);

  if (approval.state === "pending") {
    const actions = el("div", "actions");
    for (const [label, verb] of [["Approve", "approve"], ["Deny", "deny"]]) {
      const button = el("button", verb, label);
      button.type = "button";
      button.addEventListener("click", () => decide(approval.id, verb));
      actions.append(button);
    }
    card.append(actions);
  }
  return card;
}

function renderRun(run) {
  const card = el("article", "run");
  card.dataset.id = run.run_id;
  const title = el("h3", "", String(run.workflow_id) + " " + String(run.run_id));
  title.append(el("span", "state state-" + run.status, run.status));
  card.append(title);
  card.append(el("p", "hint", "started " + String(run.created_at || "")));
  const table = el("table");
  const head = el("tr");
  for (const name of ["step", "tool", "status", "outcome"]) head.append(el("th", "", name));
  table.append(head);
  for (const step of Array.isArray(run.steps) ? run.steps : []) {
    const line = el("tr", "step");
    for (const value of [step.id, step.tool, step.status, step.outcome_code || ""]) {
      line.append(el("td", "", value === undefined ? "" : value));
    }
    table.append(line);
  }
  card.append(table);
  const watch = el("button", "watch", "Events");
  watch.type = "button";
  watch.addEventListener("click", () => watchEvents(run.run_id));
  card.append(watch);
  return card;
}

// The run's events as they happen: the events route streams server-sent
// events; fetch (unlike EventSource) can send the Authorization header.
let watching = null;
async function watchEvents(runId) {
  if (watching) watching.abort();
  watching = new AbortController();
  $("events-view").hidden = false;
  $("events-title").textContent = "Events of " + runId;
  const list = $("events");
  list.replaceChildren();
  try {
    const response = await fetch("/api/workflow-runs/" + encodeURIComponent(runId) + "/events", {
      headers: { Authorization: "Bearer " + token(), Accept: "text/event-stream" },
      signal: watching.signal,
      cache: "no-store",
    });
    if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let type = "";
        let data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) type = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        const item = el("li", "event", type);
        item.dataset.type = type;
        item.title = data;
        list.append(item);
      }
    }
  } catch (e) {
    if (e.name !== "AbortError") showError(e.message);
  }
}

// What each list showed last: a list is rebuilt only when its data changed,
// and approvals are shown oldest first, so a new request appears below the
// ones being read and never moves a button under the pointer.
const shown = { approvals: "", runs: "" };

function replaceList(name, container, items, empty, render) {
  const text = JSON.stringify(items);
  if (text === shown[name]) return;
  shown[name] = text;
  container.replaceChildren();
  if (items.length === 0) container.append(el("p", "hint", empty));
  for (const item of items) container.append(render(item));
}

async function refresh() {
  try {
    const body = await api("GET", "/api/approvals");
    const approvals = body && Array.isArray(body.approvals) ? body.approvals.slice().reverse() : [];
    replaceList("approvals", $("approvals"), approvals, "No approvals.", renderApproval);
    let runs = [];
    try {
      const listed = await api("GET", "/api/workflow-runs");
      runs = listed && Array.isArray(listed.runs) ? listed.runs : [];
    } catch (e) {
      if (!/^NOT_FOUND/.test(e.message)) throw e;  // this aevatar runs no workflows
    }
    replaceList("runs", $("runs"), runs, "No workflow runs.", renderRun);
    showError("");
  } catch (e) {
    showError(e.message);
  }
}

async function decide(id, verb) {
  try {
    await api("POST", "/api/approvals/" + encodeURIComponent(id) + "/" + verb);
  } catch (e) {
    showError(e.message);
    return;
  }
  await refresh();
}

function showApprovals() {
  $("login-view").hidden = true;
  $("approvals-view").hidden = false;
  $("runs-view").hidden = false;
  $("logout").hidden = false;
  refresh();
  clearInterval(refreshTimer);
  refreshTimer = setInterval(refresh, REFRESH_MS);
}

function logout() {
  sessionStorage.removeItem(TOKEN_KEY);
  shown.approvals = shown.runs = "";
  clearInterval(refreshTimer);
  if (watching) watching.abort();
  $("approvals-view").hidden = true;
  $("runs-view").hidden = true;
  $("logout").hidden = true;
  $("login-view").hidden = false;
}

async function login(event) {
  event.preventDefault();
  const username = $("username").value;
  const password = $("password").value;
  $("password").value = "";
  try {
    const response = await fetch("/ui/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ username, password }),
      cache: "no-store",
    });
    const body = await response.json().catch(() => null);
    if (!response.ok || !body || typeof body.access_token !== "string") {
      throw new Error(body && typeof body.code === "string" ? body.code : "login failed");
    }
    sessionStorage.setItem(TOKEN_KEY, body.access_token);
    showError("");
    showApprovals();
  } catch (e) {
    showError(e.message);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("login-form").addEventListener("submit", login);
  $("logout").addEventListener("click", logout);
  if (token()) showApprovals();
  else logout();
});
