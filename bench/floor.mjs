#!/usr/bin/env node
// A read against the link's floor measured, not computed (issue 46 item 2): in headless
// Chromium over a simulated link, each repetition times one shardfetch `get` on an open array,
// then plain `fetch`es of exactly the ranges that read requested (in parallel, bodies read to
// the end, nothing cached): what the same bytes cost on the same link with no decoding at all.
//
//   node bench/floor.mjs --file bench/data-hdf5/climate.nc --path t2m [--steps 8] [--link 40:200]
//                        [--whole] [--workers N|false] [--pkg DIR] [--out FILE]
//
// By default the read is time step t (t = 1…steps) of a leading axis: `get([t, null, …])`;
// `--whole` reads the whole array each time (a COG), the file opened anew (under another query
// string, so nothing read before is kept) before each timed read. The data server is another origin (CORS as in production).
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS } from "../tests/js/chromium.mjs";
import { commit, machine, option } from "./results.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const args = process.argv.slice(2);
const file = path.resolve(option("file", path.join(here, "data-hdf5/climate.nc")));
if (!fs.existsSync(file)) throw new Error(`${file} is missing (bench/hdf5.mjs writes climate.nc; bench/tiff.mjs the COGs)`);
const arrayPath = option("path", undefined);
const steps = Number(option("steps", "8"));
const whole = args.includes("--whole");
const [latencyMs, mbps] = option("link", "40:200").split(":").map(Number);
const pkgDir = path.resolve(option("pkg", path.join(repo, "pkg")));
const workers = option("workers", undefined);

const serve = (argv) =>
  new Promise((ok) => {
    const p = spawn(process.execPath, [path.join(repo, "tests/server.mjs"), ...argv, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    readline.createInterface({ input: p.stdout }).on("line", (l) => l.startsWith("LISTENING") && ok({ url: l.split(" ")[1], close: () => p.kill() }));
  });
const data = await serve(["--root", path.dirname(file), "--latency-ms", String(latencyMs), "--mbps", String(mbps)]);
const page = await serve(["--root", `/pkg=${pkgDir}`, "--root", here]);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
const tab = await (await browser.newContext()).newPage();
await tab.goto(`${page.url}/soak-blank.html`);
const out = await tab.evaluate(
  async ({ url, arrayPath, steps, whole, workers }) => {
    const sf = await import("/pkg/index.js");
    const ranges = [];
    const fetchLogged = (u, init) => {
      ranges.push(new Headers(init?.headers).get("range"));
      return fetch(u, init);
    };
    // Whole reads: the file opened anew each time under another query (nothing kept from the
    // last one), its opening not timed.
    const open = (u) => sf.openArray(u, { ...(arrayPath ? { path: arrayPath } : {}), ...(workers === undefined ? {} : { workers: workers === "false" ? false : Number(workers) }), fetch: fetchLogged });
    let a = await open(url);
    const sel = (t) => (whole ? a.shape.map(() => null) : [t, ...a.shape.slice(1).map(() => null)]);
    await a.get(sel(0));
    const rows = [];
    for (let t = 1; t <= steps; t++) {
      const at = whole ? `${url}?rep=${t}` : url;
      if (whole) a = await open(at);
      ranges.length = 0;
      const s = performance.now();
      await a.get(sel(t));
      const read = performance.now() - s;
      const asked = ranges.filter(Boolean);
      const s2 = performance.now();
      const sizes = await Promise.all(asked.map(async (range) => (await (await fetch(at, { headers: { Range: range }, cache: "no-store" })).arrayBuffer()).byteLength));
      rows.push({ read, plain: performance.now() - s2, requests: ranges.length, bytes: sizes.reduce((x, y) => x + y, 0) });
    }
    return { rows, shape: a.shape, dtype: a.dtype };
  },
  { url: `${data.url}/${path.basename(file)}`, arrayPath, steps, whole, workers },
);
await browser.close();
data.close();
page.close();

const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
const read = median(out.rows.map((r) => r.read));
const plain = median(out.rows.map((r) => r.plain));
const bytes = median(out.rows.map((r) => r.bytes));
const formula = latencyMs + (bytes * 8) / (mbps * 1e3);
const what = `${path.basename(file)}${arrayPath ? ` ${arrayPath}` : ""} (${out.dtype} ${out.shape.join(" × ")}), ${whole ? "whole array" : "one step of the first axis"}`;
console.log(`${what}, link ${latencyMs} ms / ${mbps} Mbit/s, ${steps} reads:`);
console.log(`  shardfetch get ${read.toFixed(1)} ms (${out.rows.map((r) => r.read.toFixed(0)).join(" ")}), ${median(out.rows.map((r) => r.requests))} request(s), ${(bytes / 1e6).toFixed(2)} MB`);
console.log(`  plain fetch of the same ranges ${plain.toFixed(1)} ms (${out.rows.map((r) => r.plain.toFixed(0)).join(" ")}): ${(read / plain).toFixed(2)}× it`);
console.log(`  formula floor (one round trip + bytes at the link's rate) ${formula.toFixed(0)} ms: ${(read / formula).toFixed(2)}× it`);
const outFile = option("out", undefined);
if (outFile) {
  fs.mkdirSync(path.dirname(path.resolve(outFile)), { recursive: true });
  fs.writeFileSync(outFile, JSON.stringify({ date: new Date().toISOString(), command: ["node", "bench/floor.mjs", ...args].join(" "), commit: commit(), machine: machine(), what, link: { latencyMs, mbps }, rows: out.rows, medians: { read, plain, bytes, formula } }, null, 1));
  console.log(`saved ${outFile}`);
}
