#!/usr/bin/env node
// shardfetch/openlayers vs ol/source/GeoTIFF (geotiff.js) in OpenLayers 10.11, the same map page
// (tests/ol/app.js: a 1024×768 WebGLTile map), the same COG, over a simulated link (issue 45).
//
//   node bench/openlayers.mjs [--reps N] [--datasets a,b] [--link MS:MBPS|loopback] [--out FILE] [--no-save]
//
//   --reps N       measurements per dataset × source (default 3), each in a fresh browser context
//   --datasets     subset of u16_deflate,u16_zstd,u8_jpeg (bench/generate_tiff.py; default u16_deflate,u8_jpeg)
//   --link         the data server's link (tests/server.mjs; default 40:200: 40 ms per answer,
//                  200 Mbit/s shared); the page and the libraries come over loopback
//
// Measured: the first render (from the source's creation to OpenLayers' `rendercomplete` of the
// first view: level 2 of the 4096² COG filling the map) and then a pan/zoom sequence of 8 views
// (levels 2 → 0 and beyond, pans of a few hundred pixels, one zoom out), each awaited to its
// `rendercomplete`; requests and bytes counted at the data server. The two sources' last
// screens are compared (within one grey level) so a fast wrong answer cannot pass.
// Needs tests/ol's dependencies (scripts/ensure-tools.sh), pkg/ built, and bench/data-tiff
// (`node bench/tiff.mjs` prepares it, or bench/generate_tiff.py).
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../tests/server.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "../tests/js/chromium.mjs";
import { decodePng } from "../tests/js/png.mjs";
import { commit, machine, median, requestSummary, saveResults } from "./results.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const app = path.join(repo, "tests/ol");
const dist = path.join(here, ".build/ol");
const dataDir = path.join(here, "data-tiff");
const say = (m) => console.log(`[openlayers] ${m}`);

const o = { reps: 3, datasets: ["u16_deflate", "u8_jpeg"], link: "40:200", out: undefined, save: true };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--reps") o.reps = Number(argv[++i]);
  else if (a === "--datasets") o.datasets = argv[++i].split(",");
  else if (a === "--link") o.link = argv[++i];
  else if (a === "--out") o.out = argv[++i];
  else if (a === "--no-save") o.save = false;
  else throw new Error(`unknown argument ${a}`);
}
const link = o.link === "loopback" ? undefined : (([ms, mbps]) => ({ latencyMs: ms, mbps }))(o.link.split(":").map(Number));

// The page: tests/ol/app.js bundled as the test bundles it.
fs.rmSync(dist, { recursive: true, force: true });
const linkDir = path.join(app, "node_modules/shardfetch");
fs.rmSync(linkDir, { recursive: true, force: true });
fs.symlinkSync(path.relative(path.dirname(linkDir), path.join(repo, "pkg")), linkDir, "dir");
execFileSync(path.join(app, "node_modules/.bin/esbuild"), ["app.js", "--bundle", "--format=esm", `--outdir=${dist}`, "--preserve-symlinks", "--log-level=warning"], { cwd: app });
for (const f of ["worker.js", "warm.js"]) fs.copyFileSync(path.join(linkDir, f), path.join(dist, f));
fs.cpSync(path.join(linkDir, "wasm"), path.join(dist, "wasm"), { recursive: true });
fs.copyFileSync(path.join(app, "index.html"), path.join(dist, "index.html"));

const SIZE = [1024, 768];
// Views as offsets from the image's centre (metres; the COGs have 10 m pixels) and resolutions.
const FIRST = 40;
const SEQUENCE = [
  { offset: [0, 0], resolution: 20 },
  { offset: [4000, 0], resolution: 20 },
  { offset: [4000, -3000], resolution: 10 },
  { offset: [-2000, -3000], resolution: 10 },
  { offset: [-2000, 2000], resolution: 10 },
  { offset: [-2000, 2000], resolution: 5 },
  { offset: [6000, 6000], resolution: 10 },
  { offset: [0, 0], resolution: 80 },
];

const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, "--force-color-profile=srgb"], headless: true });
const page = await startServer({ root: { "/app": dist } });
const data = await startServer({ root: { "/data": dataDir }, link });
const runs = [];
try {
  for (const name of o.datasets) {
    const file = path.join(dataDir, `${name}.tif`);
    if (!fs.existsSync(file)) throw new Error(`${file} missing: node bench/tiff.mjs (or bench/generate_tiff.py) writes it`);
    const shots = {};
    for (let rep = 0; rep < o.reps; rep++) {
      for (const which of rep % 2 ? ["ol", "sf"] : ["sf", "ol"]) {
        const ctx = await browser.newContext({ viewport: { width: SIZE[0], height: SIZE[1] } });
        const tab = await ctx.newPage();
        const cfg = { which, sources: [{ url: `${data.url}/data/${name}.tif`, min: 0, max: name.startsWith("u16") ? 65535 : 255 }], size: SIZE, resolution: FIRST };
        data.log.length = 0;
        await tab.goto(`${page.url}/app/index.html?${new URLSearchParams({ cfg: JSON.stringify(cfg) })}`);
        await tab.waitForFunction(() => window.__drawn || window.__error, null, { timeout: 300000 });
        const err = await tab.evaluate(() => window.__error);
        if (err) throw new Error(`${which} ${name}: ${JSON.stringify(err)}`);
        const first = await tab.evaluate(() => window.__drawn.ms);
        const firstReq = requestSummary(data.log);
        const steps = [];
        for (const view of SEQUENCE) steps.push(await tab.evaluate((v) => window.__goto(v), view));
        const all = requestSummary(data.log);
        if (rep === 0) shots[which] = decodePng(await tab.locator("#map").screenshot());
        await ctx.close();
        const r = { dataset: name, source: which, rep, firstMs: first, firstRequests: firstReq.requests, firstBytes: firstReq.bytes, sequenceMs: steps.reduce((a, b) => a + b, 0), stepsMs: steps, requests: all.requests, bytes: all.bytes };
        runs.push(r);
        say(`${name} ${which} #${rep}: first ${first.toFixed(0)} ms (${firstReq.requests} req, ${(firstReq.bytes / 1e6).toFixed(2)} MB); sequence ${r.sequenceMs.toFixed(0)} ms; in all ${all.requests} req, ${(all.bytes / 1e6).toFixed(2)} MB`);
      }
    }
    let off = 0;
    for (let i = 0; i < shots.sf.rgba.length; i += 4) {
      for (let k = 0; k < 3; k++) if (Math.abs(shots.sf.rgba[i + k] - shots.ol.rgba[i + k]) > 1) off++;
    }
    if (off > 0) throw new Error(`${name}: the last screens differ (${off} samples by more than one level)`);
    say(`${name}: the last screens agree`);
  }
} finally {
  await browser.close();
  await page.close();
  await data.close();
}

const rows = [];
for (const name of o.datasets) {
  const row = (which) => {
    const rs = runs.filter((r) => r.dataset === name && r.source === which);
    return { first: median(rs.map((r) => r.firstMs)), seq: median(rs.map((r) => r.sequenceMs)), fr: rs[0].firstRequests, fb: rs[0].firstBytes, req: rs[0].requests, bytes: rs[0].bytes };
  };
  const sf = row("sf");
  const ol = row("ol");
  const f = (x) => Math.round(x).toLocaleString("en");
  const mb = (b) => (b / 1e6).toFixed(2);
  rows.push(`| ${name} | first render | ${f(sf.first)} / ${sf.fr} / ${mb(sf.fb)} | ${f(ol.first)} / ${ol.fr} / ${mb(ol.fb)} | ${(ol.first / sf.first).toFixed(2)}× |`);
  rows.push(`| ${name} | then 8 pans and zooms | ${f(sf.seq)} / ${sf.req - sf.fr} / ${mb(sf.bytes - sf.fb)} | ${f(ol.seq)} / ${ol.req - ol.fr} / ${mb(ol.bytes - ol.fb)} | ${(ol.seq / sf.seq).toFixed(2)}× |`);
}
console.log("\n| dataset | workload | shardfetch/openlayers | ol/source/GeoTIFF | ÷ |\n|---|---|---|---|---:|\n" + rows.join("\n"));
if (o.save) {
  const out = saveResults({ bench: "openlayers", commit: commit(), machine: machine(browser.version()), link: link ?? "loopback", reps: o.reps, sequence: SEQUENCE, runs }, { out: o.out, name: "openlayers", round: true });
  say(`saved ${path.relative(repo, out)}`);
}
