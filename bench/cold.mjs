#!/usr/bin/env node
// Cold start in parts: fresh browser context, import, optional wait, openArray, first getChunk.
// `node bench/cold.mjs [--wait MS] [--reps N] [--datasets a,b] [--libs shardfetch,zarrita-tuned]
//  [--pkg DIR] [--flags "--js-flags=..."]` after `npm run bench` has generated the data and the
// zarrita bundle. --wait 300 lets shardfetch's module finish compiling first (as in the
// benchmark's `cold` workload, which imports both libraries before timing); --wait 0 opens at once.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../tests/server.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "../tests/js/chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const reps = Number(arg("reps", "9"));
const wait = Number(arg("wait", "300"));
const datasets = arg("datasets", "u16_gzip,f32_raw,u16_zstd").split(",");
const libs = arg("libs", "shardfetch,zarrita-tuned").split(",");
const flags = arg("flags", "").split(" ").filter(Boolean);
const pkg = path.resolve(arg("pkg", path.join(here, "..", "pkg")));

const page = await startServer({ root: { "/": path.join(here, ".."), "/altpkg": pkg } });
const data = await startServer({ root: path.join(here, "data") });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...flags] });
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const range = (v) => `${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)}`;
console.log(`| dataset | library | open ms | first chunk ms | total ms (median, range) |`);
console.log(`|---|---|---:|---:|---:|`);
for (const d of datasets) {
  for (const lib of libs) {
    const rows = [];
    for (let i = 0; i < reps; i++) {
      const ctx = await browser.newContext();
      const p = await ctx.newPage();
      await p.goto(`${page.url}/bench/cold.html?lib=${lib}&pkg=/altpkg&wait=${wait}&data=${data.url}/${d}`);
      await p.waitForFunction(() => window.result, null, { timeout: 30000 });
      rows.push(await p.evaluate(() => window.result));
      await ctx.close();
    }
    const col = (k) => rows.map((r) => r[k]);
    console.log(
      `| ${d} | ${lib} | ${median(col("open")).toFixed(1)} | ${median(col("first")).toFixed(1)} | ${median(col("total")).toFixed(1)} (${range(col("total"))}) |`,
    );
  }
}
await browser.close();
await page.close();
await data.close();
