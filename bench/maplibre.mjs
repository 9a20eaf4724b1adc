#!/usr/bin/env node
// MapLibre GL JS 6.20 drawing one COG through shardfetch/maplibre and through
// @geomatico/maplibre-cog-protocol 0.9.3 (geotiff.js with its Pool and 64 KiB blocks), side by side
// in one headless Chromium run (issue 45 item 2).
//
//   node bench/maplibre.mjs [--reps N] [--link MS:MBPS] [--out FILE] [--no-save]
//
//   --reps N      measurements per library (default 3), in Williams order
//   --link MS:MBPS  the data's link (default 40:200: 40 ms per answer, 200 Mbit/s shared;
//                 tests/server.mjs); the page and the libraries come from loopback
//   --out FILE    results file (default bench/results/<date>-maplibre.json; never overwritten)
//   --no-save     print only
//
// Workload, each repetition in a fresh browser context (no HTTP cache): a 1024 × 768 map opened at
// zoom 10 on the image's centre (its overview at zoom 10), timed from navigation to MapLibre's
// first `idle` (every visible tile drawn); then the pan sequence: a jump to zoom 12 (full
// resolution) and 8 pans of 384 px (4 east, 4 south), each timed to `idle`. Requests and bytes
// from the data server's log. Both colour-map one band (shardfetch: viridis 0–3000; geomatico:
// BrewerSpectral9 0–3000 continuous); each run's last screen must be drawn (non-black pixels).
//
// The COG: bench/generate_maplibre.py (4096² uint16 at zoom 12, GoogleMapsCompatible, DEFLATE +
// PREDICTOR=2, 256² tiles, overviews to zoom 8; 19 MB) into bench/data-maplibre, run in the venv
// $BENCH_MAPLIBRE_VENV (default /tmp/venv-maplibre, from tests/fixtures/requirements-maplibre.txt)
// when missing. The app is tests/maplibre's (its node_modules: scripts/ensure-tools.sh), bundled
// into bench/.build/maplibre with pkg/ as built.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

import { startServer } from "../tests/server.mjs";
import { commit, machine, median, requestSummary, saveResults, williams } from "./results.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "../tests/js/chromium.mjs";
import { decodePng } from "../tests/js/png.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const app = path.join(repo, "tests/maplibre");
const build = path.join(here, ".build/maplibre");
const dataDir = path.join(here, "data-maplibre");
const LIBS = ["shardfetch", "geomatico"];
const say = (m) => console.log(`[maplibre] ${m}`);

const opt = { reps: 3, link: { latencyMs: 40, mbps: 200 }, out: null, save: true };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--reps") opt.reps = Number(argv[++i]);
  else if (a === "--link") {
    const [ms, mbps] = argv[++i].split(":").map(Number);
    if (!(ms >= 0) || !(mbps > 0)) throw new Error("--link wants MS:MBPS, e.g. 40:200");
    opt.link = { latencyMs: ms, mbps };
  } else if (a === "--out") opt.out = argv[++i];
  else if (a === "--no-save") opt.save = false;
  else throw new Error(`unknown option ${a}`);
}

// --- the COG and the app ----------------------------------------------------------------------

if (!fs.existsSync(path.join(dataDir, "u16_mercator.json"))) {
  const py = path.join(process.env.BENCH_MAPLIBRE_VENV ?? "/tmp/venv-maplibre", "bin/python");
  if (!fs.existsSync(py)) {
    say(`creating the venv for bench/generate_maplibre.py (${path.dirname(path.dirname(py))})`);
    execFileSync("python3", ["-m", "venv", path.dirname(path.dirname(py))], { stdio: "inherit" });
    execFileSync(py, ["-m", "pip", "install", "-q", "-r", path.join(repo, "tests/fixtures/requirements-maplibre.txt")], { stdio: "inherit" });
  }
  execFileSync(py, [path.join(here, "generate_maplibre.py"), "--out", dataDir], { stdio: "inherit" });
}
const meta = JSON.parse(fs.readFileSync(path.join(dataDir, "u16_mercator.json"), "utf8"));

if (!fs.existsSync(path.join(app, "node_modules/maplibre-gl"))) throw new Error("tests/maplibre has no node_modules: bash scripts/ensure-tools.sh");
{
  const link = path.join(app, "node_modules/shardfetch");
  fs.rmSync(link, { recursive: true, force: true });
  fs.symlinkSync(path.relative(path.dirname(link), path.join(repo, "pkg")), link, "dir");
  fs.rmSync(build, { recursive: true, force: true });
  execFileSync(path.join(app, "node_modules/.bin/esbuild"), ["app.js", "--bundle", "--format=esm", `--outdir=${build}`, "--log-level=warning"], { cwd: app });
  for (const f of ["worker.js", "warm.js"]) fs.copyFileSync(path.join(link, f), path.join(build, f));
  fs.cpSync(path.join(link, "wasm"), path.join(build, "wasm"), { recursive: true });
  for (const f of ["maplibre-gl-worker.mjs", "maplibre-gl.css"]) fs.copyFileSync(path.join(app, "node_modules/maplibre-gl/dist", f), path.join(build, f));
  fs.copyFileSync(path.join(app, "index.html"), path.join(build, "index.html"));
}

// --- the runs ---------------------------------------------------------------------------------

const page = await startServer({ root: { "/app": build } });
const data = await startServer({ root: { "/data": dataDir }, link: opt.link });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
const url = `${data.url}/data/${meta.file}`;
// The image's centre in world pixels of zoom 10 (it spans 1024 px there).
const z0 = 10;
const s0 = 2 ** (z0 - meta.zoom);
const [cx, cy] = [(meta.tile[0] * 256 + meta.size / 2) * s0, (meta.tile[1] * 256 + meta.size / 2) * s0];
const PANS = [...Array(4).fill({ dx: 384, dy: 0 }), ...Array(4).fill({ dx: 0, dy: 384 })];

async function run(lib) {
  const ctx = await browser.newContext({ viewport: { width: 1024, height: 768 } });
  const tab = await ctx.newPage();
  const problems = [];
  tab.on("pageerror", (e) => problems.push(String(e)));
  try {
    data.log.length = 0;
    const q = new URLSearchParams({ lib, url, z: z0, cx, cy, w: 1024, h: 768, query: "colormap=viridis&min=0&max=3000", geomatico: "#color:BrewerSpectral9,0,3000,c" });
    const t0 = performance.now(); // the data server's clock (this process)
    await tab.goto(`${page.url}/app/index.html?${q}`);
    await tab.waitForFunction(() => window.__drawn || window.__error, null, { timeout: 120000, polling: 20 });
    const err = await tab.evaluate(() => window.__error);
    if (err) throw new Error(`${lib}: ${JSON.stringify(err)}`);
    // From navigation: the page's first and last data request (the libraries' start-up before).
    const ts = data.log.map((e) => e.t - t0);
    const first = { ms: await tab.evaluate(() => window.__drawnAt), firstRequestMs: Math.min(...ts), lastRequestMs: Math.max(...ts), ...requestSummary(data.log) };
    data.log.length = 0;
    const steps = [];
    for (const step of [{ z: meta.zoom }, ...PANS]) steps.push(await tab.evaluate((s) => { const t = performance.now(); return window.__step(s).then(() => performance.now() - t); }, step));
    const pan = { ms: steps.reduce((a, b) => a + b, 0), steps: steps.map((x) => Math.round(x)), ...requestSummary(data.log) };
    const shot = decodePng(await tab.screenshot());
    let lit = 0;
    for (let i = 0; i < shot.rgba.length; i += 4) if (shot.rgba[i] + shot.rgba[i + 1] + shot.rgba[i + 2] > 0) lit++;
    if (lit < 0.9 * shot.width * shot.height) throw new Error(`${lib}: the last screen is ${lit} of ${shot.width * shot.height} pixels drawn`);
    if (problems.length) throw new Error(`${lib}: ${problems.join(" | ")}`);
    return { first, pan };
  } finally {
    await ctx.close();
  }
}

say(`${meta.file} (${(meta.bytes / 1e6).toFixed(1)} MB) over ${opt.link.latencyMs} ms / ${opt.link.mbps} Mbit/s; ${opt.reps} reps`);
await run("shardfetch"); // warm the page server's and the OS's file caches: not counted
const order = williams(LIBS.length);
const runs = Object.fromEntries(LIBS.map((l) => [l, []]));
for (let r = 0; r < opt.reps; r++) {
  for (const k of order[r % order.length]) {
    const lib = LIBS[k];
    const m = await run(lib);
    runs[lib].push(m);
    say(`${lib} rep ${r + 1}: first render ${m.first.ms.toFixed(0)} ms (data requests from ${m.first.firstRequestMs.toFixed(0)} to ${m.first.lastRequestMs.toFixed(0)} ms; ${m.first.requests} requests, ${(m.first.bytes / 1e6).toFixed(2)} MB); pans ${m.pan.ms.toFixed(0)} ms (${m.pan.requests} requests, ${(m.pan.bytes / 1e6).toFixed(2)} MB)`);
  }
}
const summary = Object.fromEntries(LIBS.map((l) => {
  const rs = runs[l];
  const pick = (f) => median(rs.map(f));
  return [l, { firstMs: pick((m) => m.first.ms), firstRequestMs: pick((m) => m.first.firstRequestMs), firstRequests: pick((m) => m.first.requests), firstBytes: pick((m) => m.first.bytes),
    panMs: pick((m) => m.pan.ms), panRequests: pick((m) => m.pan.requests), panBytes: pick((m) => m.pan.bytes) }];
}));
console.table(summary);
const result = {
  bench: "maplibre", commit: commit(), machine: machine(browser.version()), date: new Date().toISOString(),
  command: `node bench/maplibre.mjs ${argv.join(" ")}`.trim(),
  link: `${opt.link.latencyMs} ms per answer, ${opt.link.mbps} Mbit/s shared (tests/server.mjs); the page from loopback`,
  data: meta, libraries: { shardfetch: "pkg/ (shardfetch/maplibre)", geomatico: "@geomatico/maplibre-cog-protocol 0.9.3 (geotiff.js 3, Pool, 64 KiB blocks)", maplibre: "maplibre-gl 6.20.0" },
  summary, runs,
};
if (opt.save) say(`saved ${saveResults(result, { out: opt.out, name: "maplibre", round: true })}`);
await browser.close();
await page.close();
await data.close();
