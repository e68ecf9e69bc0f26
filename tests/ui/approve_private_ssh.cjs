// A person approves a private_ssh codex_exec call on the /ui page: logs in
// with the NyxID account, reads the exact call (service, principal, prompt),
// approves it, and watches the waiting workflow run finish. Run by
// tests/integration/private_ssh_canary_test.cc.
//
//   node approve_private_ssh.cjs CONFIG_JSON
//   CONFIG_JSON: {"url", "username", "password", "artifacts", "approval_id",
//                 "run_id", "service", "principal", "prompt"}
// Prints one JSON line: {"ok": true} or {"ok": false, "error": "..."}.
"use strict";

const path = require("path");
const { launchBrowser, logIn, run, waitForState } = require("./ui_common.cjs");

const config = JSON.parse(process.argv[2]);

async function main() {
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(config.url + "/ui");
    await logIn(page, config.username, config.password);
    const approval = `article[data-id="${config.approval_id}"]`;
    await page.waitForSelector(approval);
    const text = await page.locator(approval).textContent();
    for (const part of [config.service, config.principal, "private_ssh"]) {
      if (!text.includes(part)) throw new Error("the approval does not show " + part);
    }
    const prompt = await page.locator(`${approval} pre.prompt`).textContent();
    if (prompt !== config.prompt) throw new Error("the page shows another prompt: " + prompt);
    await waitForState(page, `article.run[data-id="${config.run_id}"]`, "running");
    await page.screenshot({ path: path.join(config.artifacts, "ui-private-ssh-pending.png"), fullPage: true });

    await page.click(`${approval} button.approve`);
    // Approved, then used by the run that waited for it.
    await page.waitForFunction(
      (selector) => {
        const node = document.querySelector(`${selector} .state`);
        return node && (node.textContent === "approved" || node.textContent === "used");
      },
      approval,
      { timeout: 15000 },
    );
    // The run was waiting for this: it goes on by itself.
    await waitForState(page, `article.run[data-id="${config.run_id}"]`, "succeeded", 120000);
    await page.screenshot({ path: path.join(config.artifacts, "ui-private-ssh-run.png"), fullPage: true });
    console.log(JSON.stringify({ ok: true }));
  } finally {
    await browser.close();
  }
}

run(main);
