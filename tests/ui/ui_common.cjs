// What the /ui browser tests share: Debian's chromium through playwright-core,
// and logging in as a person does.
"use strict";

const { chromium } = require(process.env.PLAYWRIGHT_CORE || "playwright-core");

async function launchBrowser() {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
}

// Fills the login form and waits for the approvals view.
async function logIn(page, username, password) {
  await page.fill("#username", username);
  await page.fill("#password", password);
  await page.click("#login-form button[type=submit]");
}

// Waits until the `.state` of the article `selector` reads `state`.
async function waitForState(page, selector, state, timeout = 15000) {
  await page.waitForFunction(
    ([selector, state]) => {
      const node = document.querySelector(`${selector} .state`);
      return node && node.textContent === state;
    },
    [selector, state],
    { timeout },
  );
}

// Runs a script's `main` and prints its one JSON line: {"ok": false,
// "error"} (exit 1) when it throws; `main` prints {"ok": true} itself.
function run(main) {
  main().catch((error) => {
    console.log(JSON.stringify({ ok: false, error: String(error && error.message ? error.message : error) }));
    process.exit(1);
  });
}

module.exports = { launchBrowser, logIn, waitForState, run };
