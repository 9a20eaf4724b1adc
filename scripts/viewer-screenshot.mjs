#!/usr/bin/env node
// Screenshot of the demo viewer on the embedded sample, for the README:
//   node scripts/viewer-screenshot.mjs [out.png] [extra query, e.g. "cmap=fire&zoom=2"]
// Serves the repository like `npm start` (one origin), opens www/ in headless Chromium, waits
// until every visible tile is drawn, hovers a point (the cursor readout) and saves the page.
import path from "node:path";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../tests/server.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.resolve(process.argv[2] ?? path.join(repo, "docs/viewer.png"));
const extra = new URLSearchParams(process.argv[3] ?? "cx=560&cy=430&zoom=1.6&at=z:12&cmap=grey");

if (!fs.existsSync(path.join(repo, "pkg/index.js"))) {
  console.error("pkg/index.js missing: run `npm run build` first");
  process.exit(1);
}
const server = await startServer({ root: { "/": repo } });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--force-color-profile=srgb"],
  headless: true,
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const q = new URLSearchParams({ url: `${server.url}/www/sample/cells.ome.zarr`, ...Object.fromEntries(extra) });
  await page.goto(`${server.url}/www/?${q}`);
  await page.waitForFunction(() => window.viewerApp?.state === "ready", null, { timeout: 60_000 });
  await page.evaluate(() => window.viewerApp.viewer.whenIdle());
  const box = await page.locator("#canvas").boundingBox();
  await page.mouse.move(box.x + box.width * 0.55, box.y + box.height * 0.4);
  await page.evaluate(() => window.viewerApp.viewer.whenIdle());
  await new Promise((r) => setTimeout(r, 300)); // let the throttled overlay catch up
  fs.mkdirSync(path.dirname(out), { recursive: true });
  await page.screenshot({ path: out });
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
} finally {
  await browser.close();
  await server.close();
}
