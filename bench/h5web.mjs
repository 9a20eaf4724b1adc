#!/usr/bin/env node
// h5web's viewer on a remote NetCDF-4 file (issue 45 item 3): shardfetch/h5web (by range) vs
// @h5web/h5wasm (the file fetched whole into H5WasmBufferProvider), the same @h5web/app 16.0.1
// (@h5web/h5wasm's newest, 16.0.1, wants exactly it), in headless Chromium over a simulated link.
// `node bench/h5web.mjs [options]`:
//
//   --reps N        fresh pages per provider (default 3, at least 3)
//   --var NAME      the variable h5web opens (default t2m: 48 × 721 × 1440 float32, one chunk a step)
//   --link MS:MBPS  the link (default 40:200: 40 ms per answer, 200 Mbit/s shared; tests/server.mjs)
//   --out FILE      results file (default bench/results/<date>-h5web.json; never overwritten)
//   --no-save       print only
//
// The file: bench/data-hdf5/climate.nc (about 270 MB, netCDF4-python), bench/hdf5.mjs's, written by
// bench/generate_netcdf.py when missing (venv $BENCH_HDF5_VENV, default /tmp/venv-hdf5). The page
// (bench/h5web/app.js, bundled by esbuild with its pinned packages, bench/h5web/package-lock.json,
// installed by `npm ci` here when missing) opens h5web at `/<var>`: h5web shows the heatmap of
// time step 0 ("0,:,:"). Measured per fresh browser context: ms from navigation to two frames
// after the heatmap's colour bar shows its domain (h5web renders it with the values), and the
// requests and bytes the data server saw. Both providers' domains must agree (a second reader).
// Page and libraries are served locally (no link), the data by another server (the link, CORS).
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

import { startServer } from "../tests/server.mjs";
import { commit, machine, median, requestSummary, saveResults, williams } from "./results.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "../tests/js/chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const dataDir = path.join(here, "data-hdf5");
const app = path.join(here, "h5web");
const PROVIDERS = ["shardfetch", "h5wasm"];
const say = (m) => console.log(`[h5web] ${m}`);

function parseArgs(argv) {
  const o = { reps: 3, variable: "t2m", link: { latencyMs: 40, mbps: 200 }, out: null, save: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i] ?? (() => { throw new Error(`missing value for ${a}`); })();
    if (a === "--reps") o.reps = Number(next());
    else if (a === "--var") o.variable = next();
    else if (a === "--link") {
      const [ms, mbps] = next().split(":").map(Number);
      if (!(ms >= 0) || !(mbps > 0)) throw new Error("--link wants MS:MBPS, e.g. 40:200");
      o.link = { latencyMs: ms, mbps };
    } else if (a === "--out") o.out = path.resolve(next());
    else if (a === "--no-save") o.save = false;
    else throw new Error(`unknown argument ${a} (see the header of bench/h5web.mjs)`);
  }
  if (!Number.isInteger(o.reps) || o.reps < 3) throw new Error("--reps must be an integer >= 3");
  return o;
}

const sh = (cmd, args, cwd = repo) => execFileSync(cmd, args, { stdio: "inherit", cwd });

function ensureData() {
  const info = path.join(dataDir, "climate.json");
  if (!fs.existsSync(info)) {
    const venv = process.env.BENCH_HDF5_VENV ?? "/tmp/venv-hdf5";
    const py = path.join(venv, "bin/python");
    if (!fs.existsSync(py)) sh("python3", ["-m", "venv", venv]);
    sh(py, ["-m", "pip", "install", "--quiet", "-r", path.join(here, "requirements-hdf5.txt")]);
    say("writing bench/data-hdf5/climate.nc (about a minute)");
    sh(py, [path.join(here, "generate_netcdf.py")]);
  }
  return JSON.parse(fs.readFileSync(info, "utf8"));
}

/** bench/h5web/dist: the page bundled with h5web, both providers and the built package. */
function buildPage() {
  if (!fs.existsSync(path.join(app, "node_modules/@h5web/h5wasm"))) sh("npm", ["ci", "--no-audit", "--no-fund"], app);
  const pkg = path.join(repo, "pkg");
  if (!fs.existsSync(path.join(pkg, "h5web.js"))) throw new Error("pkg/h5web.js missing: build the package first (npm run build)");
  const link = path.join(app, "node_modules/shardfetch");
  fs.rmSync(link, { recursive: true, force: true });
  fs.symlinkSync(path.relative(path.dirname(link), pkg), link, "dir");
  const dist = path.join(app, "dist");
  fs.rmSync(dist, { recursive: true, force: true });
  sh(path.join(app, "node_modules/.bin/esbuild"), ["app.js", "--bundle", "--format=esm", "--minify", "--outdir=dist", "--define:process.env.NODE_ENV=\"production\"", "--log-level=warning"], app);
  for (const f of ["worker.js", "warm.js"]) fs.copyFileSync(path.join(pkg, f), path.join(dist, f));
  fs.cpSync(path.join(pkg, "wasm"), path.join(dist, "wasm"), { recursive: true });
  fs.copyFileSync(path.join(app, "index.html"), path.join(dist, "index.html"));
  const version = (name) => JSON.parse(fs.readFileSync(path.join(app, "node_modules", name, "package.json"), "utf8")).version;
  return { dist, versions: Object.fromEntries(["@h5web/app", "@h5web/h5wasm", "h5wasm", "react"].map((n) => [n, version(n)])) };
}

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  const built = commit();
  const info = ensureData();
  const v = info.variables[opt.variable];
  if (!v) throw new Error(`--var: one of ${Object.keys(info.variables).join(", ")}`);
  const { dist, versions } = buildPage();
  const least = v.chunkRanges[0].reduce((b, [, n]) => b + n, 0);
  say(`${info.file}: ${(info.bytes / 1e6).toFixed(1)} MB, ${opt.variable} ${v.shape.join("×")}; ${Object.entries(versions).map(([k, x]) => `${k} ${x}`).join(", ")}`);

  const pageServer = await startServer({ root: { "/": dist } });
  const dataServer = await startServer({ root: dataDir, link: opt.link });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  const url = `${dataServer.url}/${info.file}`;
  const samples = [];
  const orders = williams(PROVIDERS.length);
  let browserVersion;
  try {
    browserVersion = browser.version();
    for (let rep = 0; rep < opt.reps; rep++) {
      for (const provider of orders[rep % orders.length].map((i) => PROVIDERS[i])) {
        const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
        const page = await context.newPage();
        const errors = [];
        page.on("pageerror", (e) => errors.push(e.message));
        dataServer.log.length = 0;
        const q = new URLSearchParams({ url, path: `/${opt.variable}`, provider });
        await page.goto(`${pageServer.url}/index.html?${q}`);
        let r;
        try {
          await page.waitForFunction(() => window.__drawn || window.__error, null, { timeout: 180_000 });
          r = await page.evaluate(() => ({ ms: window.__drawn, domain: window.__domain, error: window.__error }));
        } catch (e) {
          r = { error: String(e.message ?? e).split("\n")[0] };
        }
        if (errors.length && !r.error) r.error = errors[0];
        const sample = { rep, provider, ...requestSummary(dataServer.log), ...r };
        samples.push(sample);
        say(`rep ${rep + 1}/${opt.reps} ${provider}: ${r.error ? `FAILED: ${r.error}` : `${r.ms.toFixed(0)} ms`}, ${sample.requests} req, ${(sample.bytes / 1e6).toFixed(2)} MB, domain ${JSON.stringify(r.domain)}`);
        await context.close();
      }
    }
  } finally {
    await browser.close();
    await pageServer.close();
    await dataServer.close();
  }

  const ok = samples.filter((s) => !s.error);
  const domains = new Set(ok.map((s) => JSON.stringify(s.domain)));
  const agree = domains.size === 1;
  if (!agree) say(`WARNING: the providers' heatmap domains differ: ${[...domains].join(" vs ")}`);
  const rows = PROVIDERS.map((provider) => {
    const s = ok.filter((x) => x.provider === provider);
    const failed = samples.filter((x) => x.provider === provider && x.error).length;
    if (!s.length) return { provider, n: 0, failed };
    const ms = s.map((x) => x.ms);
    return { provider, n: s.length, failed, medianMs: median(ms), minMs: Math.min(...ms), maxMs: Math.max(...ms), requests: median(s.map((x) => x.requests)), bytes: median(s.map((x) => x.bytes)), domain: s[0].domain };
  });
  const f = (x) => (x == null ? "–" : x.toFixed(0));
  const mb = (b) => (b >= 1e6 ? `${(b / 1e6).toFixed(1)} MB` : `${(b / 1e3).toFixed(0)} kB`);
  const lines = ["| provider | first heatmap on screen, median ms (min–max) | requests | moved |", "|---|---:|---:|---:|"];
  for (const r of rows) lines.push(r.n ? `| ${r.provider} | ${f(r.medianMs)} (${f(r.minMs)}–${f(r.maxMs)}) | ${r.requests} | ${mb(r.bytes)} |` : `| ${r.provider} | failed ${r.failed}× | | |`);
  lines.push(`| the step's stored bytes (the least any reader moves) | | | ${mb(least)} |`);
  console.log(`\n${lines.join("\n")}\n\ndomains agree: ${agree} (${[...domains].join(" vs ")})\n`);

  const result = {
    date: new Date().toISOString(),
    command: `node bench/h5web.mjs ${process.argv.slice(2).join(" ")}`.trim(),
    commit: built,
    durationS: Math.round((Date.now() - t0) / 1000),
    machine: machine(browserVersion),
    versions,
    link: `${opt.link.latencyMs} ms per answer, ${opt.link.mbps} Mbit/s shared (tests/server.mjs)`,
    file: { name: info.file, bytes: info.bytes, variable: opt.variable, shape: v.shape, stepStoredBytes: least },
    domainsAgree: agree,
    rows,
    samples,
  };
  if (opt.save) say(`saved ${path.relative(repo, saveResults(result, { out: opt.out, name: "h5web" }))}`);
  if (!agree || ok.length < samples.length) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
