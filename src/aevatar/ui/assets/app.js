// The approvals page. The access token lives in sessionStorage and goes out
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

async function refresh() {
  try {
    const body = await api("GET", "/api/approvals");
    const approvals = body && Array.isArray(body.approvals) ? body.approvals : [];
    const container = $("approvals");
    container.replaceChildren();
    if (approvals.length === 0) container.append(el("p", "hint", "No approvals."));
    for (const approval of approvals) container.append(renderApproval(approval));
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
  $("logout").hidden = false;
  refresh();
  clearInterval(refreshTimer);
  refreshTimer = setInterval(refresh, REFRESH_MS);
}

function logout() {
  sessionStorage.removeItem(TOKEN_KEY);
  clearInterval(refreshTimer);
  $("approvals-view").hidden = true;
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
