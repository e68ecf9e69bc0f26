// Drives the /ui approvals page in headless Chromium (Debian's chromium,
// playwright-core from npm) as a person would: logs in with the NyxID
// account, reads the exact call, approves one approval and denies another.
// Run by tests/integration/approvals_page_test.cc, which plants the
// approvals and checks the store afterwards.
//
// It also reads the caller's finished workflow run and its events.
//
//   node approvals_page.cjs CONFIG_JSON
//   CONFIG_JSON: {"url", "username", "password", "artifacts", "approve_id",
//                 "deny_id", "hostile_id", "prompt", "hostile_prompt", "run_id"}
// Prints one JSON line: {"ok": true} or {"ok": false, "error": "..."}.
"use strict";

const path = require("path");
const { launchBrowser, logIn, run, waitForState: waitForArticleState } = require("./ui_common.cjs");

const config = JSON.parse(process.argv[2]);

async function stateOf(page, id) {
  return page.locator(`article[data-id="${id}"] .state`).textContent();
}

async function waitForState(page, id, state) {
  await waitForArticleState(page, `article[data-id="${id}"]`, state);
}

async function main() {
  const browser = await launchBrowser();
  const violations = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    page.on("dialog", (dialog) => {
      violations.push("a dialog opened: " + dialog.message());
      dialog.dismiss();
    });
    await page.goto(config.url + "/ui");
    await page.screenshot({ path: path.join(config.artifacts, "ui-login.png") });

    // A wrong password is refused and shows why.
    await logIn(page, config.username, "not-the-password");
    await page.waitForFunction(() => document.getElementById("error").textContent === "LOGIN_FAILED");

    await logIn(page, config.username, config.password);
    await page.waitForSelector(`article[data-id="${config.approve_id}"]`);

    // The exact call is shown, as text.
    const prompt = await page.locator(`article[data-id="${config.approve_id}"] pre.prompt`).textContent();
    if (prompt !== config.prompt) throw new Error("the page shows another prompt: " + prompt);
    const hostile = await page.locator(`article[data-id="${config.hostile_id}"] pre.prompt`).textContent();
    if (hostile !== config.hostile_prompt) throw new Error("the hostile prompt was not shown as text");
    if ((await page.locator("article img, article script").count()) !== 0) {
      throw new Error("server text became markup");
    }
    if ((await stateOf(page, config.approve_id)) !== "pending") throw new Error("not pending");
    await page.screenshot({ path: path.join(config.artifacts, "ui-approvals-pending.png"), fullPage: true });

    await page.click(`article[data-id="${config.approve_id}"] button.approve`);
    await waitForState(page, config.approve_id, "approved");
    await page.click(`article[data-id="${config.deny_id}"] button.deny`);
    await waitForState(page, config.deny_id, "denied");
    if ((await page.locator(`article[data-id="${config.approve_id}"] button`).count()) !== 0) {
      throw new Error("a decided approval still offers buttons");
    }
    await page.screenshot({ path: path.join(config.artifacts, "ui-approvals-decided.png"), fullPage: true });

    // The workflow run, its steps, and its events streamed into the page.
    const run = page.locator(`article.run[data-id="${config.run_id}"]`);
    await run.waitFor();
    await waitForArticleState(page, `article.run[data-id="${config.run_id}"]`, "succeeded", 30000);
    if ((await run.locator("tr.step td").nth(2).textContent()) !== "succeeded") {
      throw new Error("its step is not shown as succeeded");
    }
    await run.locator("button.watch").click();
    await page.waitForSelector('#events li[data-type="run.end"]', { timeout: 15000 });
    const types = await page.locator("#events li").evaluateAll((items) => items.map((i) => i.dataset.type));
    if (types[0] !== "run.started") throw new Error("events begin with " + types[0]);
    await page.screenshot({ path: path.join(config.artifacts, "ui-runs.png"), fullPage: true });

    // After logging out, the token is gone from the page.
    await page.click("#logout");
    const left = await page.evaluate(() => sessionStorage.length);
    if (left !== 0) throw new Error("the token outlived the logout");
    if (violations.length > 0) throw new Error(violations.join("; "));
    console.log(JSON.stringify({ ok: true }));
  } finally {
    await browser.close();
  }
}

run(main);
