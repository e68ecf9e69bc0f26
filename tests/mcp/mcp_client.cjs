// aevatar's MCP server driven by the official MCP SDK client
// (@modelcontextprotocol/sdk, pinned in scripts/setup), over both
// transports: `aevatar mcp` on stdio and POST /mcp (Streamable HTTP).
// Run by tests/integration/mcp_server_test.cc with a full stack:
//   MCP_SDK=<sdk dir> node mcp_client.cjs '<config json>'
// config: {url, token (an access token, for HTTP), agent_key (for stdio),
// aevatar (the binary), marker (the cancelled sleep's length), chrono_pid
// (chrono-sandbox's process: a managed Codex run's sandbox is its child)}.
// Prints {"ok": true, ...} on success; any failed check throws (exit code 1)
// with what differed.
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const sdk = process.env.MCP_SDK;
const { Client } = require(path.join(sdk, 'dist/cjs/client/index.js'));
const { StdioClientTransport } = require(path.join(sdk, 'dist/cjs/client/stdio.js'));
const { StreamableHTTPClientTransport } = require(path.join(sdk, 'dist/cjs/client/streamableHttp.js'));

const config = JSON.parse(process.argv[2]);
const kLongCall = { timeout: 600000, resetTimeoutOnProgress: true };

function newClient() {
  return new Client({ name: 'aevatar-mcp-test', version: '1.0.0' });
}

async function connectStdio() {
  const client = newClient();
  // The Agent Key comes from the environment.
  const env = { ...process.env, AEVATAR_URL: config.url, AEVATAR_AGENT_KEY: config.agent_key };
  await client.connect(new StdioClientTransport({
    command: config.aevatar, args: ['mcp'], env, stderr: 'inherit',
  }));
  return client;
}

async function connectHttp() {
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(new URL(config.url + '/mcp'), {
    requestInit: { headers: { Authorization: 'Bearer ' + config.token } },
  }));
  return client;
}

async function httpTools() {
  const reply = await fetch(config.url + '/api/tools', {
    headers: { Authorization: 'Bearer ' + config.token },
  });
  assert.equal(reply.status, 200);
  return (await reply.json()).tools;
}

// initialize + tools/list: the same names, descriptions and schemas as GET /api/tools.
async function checkToolList(client) {
  assert.equal(client.getServerVersion().name, 'aevatar');
  assert.ok(client.getServerCapabilities().tools, 'the server offers tools');
  const listed = (await client.listTools()).tools;
  const expected = await httpTools();
  assert.deepEqual(listed.map((t) => t.name).sort(), ['code_execute', 'codex_exec']);
  for (const tool of expected) {
    const mine = listed.find((t) => t.name === tool.name);
    assert.ok(mine, tool.name + ' is listed');
    assert.equal(mine.description, tool.description);
    assert.deepEqual(mine.inputSchema, tool.input_schema);
  }
  assert.match(client.getInstructions(), /code_execute/);
}

const kPrograms = [
  ['python', 'import sys\nprint("PY-" + str(6 * 7), sys.version_info[0])', /^PY-42 3$/m],
  ['javascript', 'console.log("JS-" + [1, 2, 3].map((x) => x * 2).join(","))', /^JS-2,4,6$/m],
  ['typescript', 'const n: number = 5;\nconsole.log(`TS-${n * n}`);', /^TS-25$/m],
  ['bash', 'echo "SH-$((40 + 2))"', /^SH-42$/m],
];

async function checkLanguages(client) {
  for (const [language, source, expected] of kPrograms) {
    const result = await client.callTool(
      { name: 'code_execute', arguments: { language, source, timeout_secs: 120 } },
      undefined, kLongCall);
    assert.equal(result.isError, false, language + ': ' + JSON.stringify(result));
    assert.equal(result.structuredContent.exit_code, 0, language);
    assert.match(result.structuredContent.stdout, expected, language);
    assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  }
}

async function checkTypedErrors(client) {
  const bad = await client.callTool({
    name: 'code_execute', arguments: { language: 'cobol', source: 'DISPLAY 1' },
  });
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent.code, 'UNSUPPORTED_LANGUAGE');
  assert.match(bad.structuredContent.diagnostic_id, /\S/);
  assert.match(bad.content[0].text, /UNSUPPORTED_LANGUAGE/);
  // Wrong-typed protocol params are a JSON-RPC error, never a crash.
  await assert.rejects(
    client.callTool({ name: 'code_execute', arguments: 'not an object' }),
    (error) => error.code === -32602 && /arguments/.test(error.message));
  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }),
    (error) => error.code === -32602);
}

async function checkCodex(client) {
  const progress = [];
  const result = await client.callTool({
    name: 'codex_exec',
    arguments: { target: { kind: 'managed_sandbox' }, workspace: { kind: 'empty_git' },
      prompt: 'Reply with exactly CODEX_EXEC_READY', timeout_secs: 180 },
  }, undefined, { ...kLongCall, onprogress: (p) => progress.push(p) });
  assert.equal(result.isError, false, JSON.stringify(result));
  assert.equal(result.structuredContent.status, 'succeeded');
  assert.equal(result.structuredContent.output, 'CODEX_EXEC_READY');
  return progress.length;
}

// The processes whose command line holds `marker` (the sandboxed program
// runs on this host under its own namespaces).
function processesWith(marker) {
  const found = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ');
      if (cmdline.includes(marker) && !cmdline.includes('mcp_client.cjs')) found.push(pid);
    } catch (_) { /* exited meanwhile */ }
  }
  return found;
}

async function until(what, predicate, ms) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for ' + what);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

// A long sleep, cancelled by the client once it runs: the program must go.
async function checkCancellation(client) {
  const progress = [];
  const controller = new AbortController();
  const call = client.callTool({
    name: 'code_execute',
    arguments: { language: 'bash', source: `sleep ${config.marker}`, timeout_secs: 600 },
  }, undefined, { ...kLongCall, signal: controller.signal, onprogress: (p) => progress.push(p) });
  call.catch(() => {});
  await until('the program to run', () => processesWith(config.marker).length > 0, 120000);
  await until('a progress notification', () => progress.length > 0, 60000);
  assert.ok(progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress));
  controller.abort('the test cancels');
  await assert.rejects(call);
  await until('the cancelled program to stop', () => processesWith(config.marker).length === 0,
    120000);
  return progress.length;
}

// Live processes whose parent is `pid`.
function childrenOf(pid) {
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(entry);
    } catch (_) { /* exited meanwhile */ }
  }
  return found;
}

// A managed Codex run whose model call never answers (the double's
// "[double:hang]"), cancelled by the client once its sandbox runs: aevatar
// has chrono-sandbox kill the sandbox, which goes long before the run's 600 s
// (or the double's 120 s hang limit).
async function checkCodexCancellation(client) {
  // Earlier runs' sandboxes are gone first, so the children below are this run's.
  await until('chrono-sandbox to be idle', () => childrenOf(config.chrono_pid).length === 0, 60000);
  const controller = new AbortController();
  const call = client.callTool({
    name: 'codex_exec',
    arguments: { target: { kind: 'managed_sandbox' }, workspace: { kind: 'empty_git' },
      prompt: '[double:hang] think', timeout_secs: 600 },
  }, undefined, { ...kLongCall, signal: controller.signal });
  call.catch(() => {});
  await until('the Codex run\'s sandbox to run', () => childrenOf(config.chrono_pid).length > 0,
    180000);
  controller.abort('the test cancels');
  await assert.rejects(call);
  await until('the cancelled Codex run to stop', () => childrenOf(config.chrono_pid).length === 0,
    60000);
}

async function main() {
  const stdio = await connectStdio();
  const http = await connectHttp();
  await checkToolList(stdio);
  await checkToolList(http);
  await checkLanguages(stdio);
  await checkTypedErrors(http);
  await checkTypedErrors(stdio);
  const codexProgress = await checkCodex(http);
  const cancelProgress = await checkCancellation(stdio);
  await checkCodexCancellation(http);
  // The session still serves after a cancelled call.
  const after = await stdio.callTool({
    name: 'code_execute', arguments: { language: 'bash', source: 'echo STILL-HERE' },
  });
  assert.match(after.structuredContent.stdout, /STILL-HERE/);
  await stdio.close();
  await http.close();
  console.log(JSON.stringify({ ok: true, codex_progress: codexProgress,
    cancel_progress: cancelProgress }));
}

main().then(() => process.exit(0), (error) => {
  console.error(error && error.stack ? error.stack : error);
  process.exit(1);
});
