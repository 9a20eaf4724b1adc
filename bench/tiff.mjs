#!/usr/bin/env node
// shardfetch vs geotiff.js (3.0.5) on Cloud-Optimized GeoTIFFs, side by side in one headless
// Chromium run (issue 34 item 7).
//
//   node bench/tiff.mjs [--reps N] [--out FILE] [--no-save]
//
//   --reps N          measurements per dataset × workload × library (default 4; at least 3)
//   --datasets a,b    subset of u16_deflate,u16_zstd,u8_jpeg (bench/generate_tiff.py)
//   --workloads a,b   subset of full,tiles,windows,cold,revisit (revisit: not by default)
//   --libs a,b        subset of shardfetch, geotiff (fromUrl defaults), geotiff-pool (+ its Pool),
//                     geotiff-blocked (fromUrl with blockSize 64 KiB), geotiff-blocked-pool;
//                     geotiff-blocked-nostore(-pool) (fromCustomClient: a fetch client with cache
//                     "no-store", as shardfetch's; see tiff-page.mjs); also shardfetch-noworkers.
//                     Default: all but shardfetch-noworkers
//   --links a,b       links to measure over, each MS:MBPS (tests/server.mjs: one round trip per
//                     answer, bodies sharing MBPS Mbit/s) or loopback (default 40:200,loopback)
//   --inflight N      tile reads in flight in the tile sweep (default 16, as bench/run.mjs)
//   --out FILE        results file (default bench/results/<date>-tiff.json; never overwritten)
//   --pkg DIR         the shardfetch package to measure (default pkg/; an A/B: another build's)
//   --no-save         print only
//
// Workloads, each in a fresh browser context (no HTTP cache, no compiled code, no pool), timed
// from the library's import to the last pixel: full (level 0 whole), tiles (every tile of level 0,
// each its own read), windows (20 views of 1024×768 across levels 0–2 as a viewer pans and zooms),
// cold (the first tile). revisit: cold again on a returning visit — a browser with a profile on
// disk (as a user's; a fresh context keeps no code cache), the page visited once (its first
// tile read), left for 2.5 s (V8 caches a wasm module's compiled code after 2 s without new
// compilations) and closed, then the same page opened anew and timed. Every result is checked against the generator's checksums (JPEG: within
// its tolerance of GDAL's decoded values). Requests and bytes come from the data server's log.
//
// Prepares what is missing: the COGs (bench/generate_tiff.py in the venv $BENCH_TIFF_VENV, default
// /tmp/venv-tiff, created from bench/requirements-tiff.txt), geotiff.js bundled by esbuild into
// bench/.build/geotiff.js (from node_modules/geotiff or bench/.build/peers, else $GEOTIFF_DIR, default
// /tmp/peers/geotiff-3.0.5/package, its dependencies installed there when missing). shardfetch is
// pkg/ as built (`npm run build` first), copied to bench/.build/tiff-pkg for the run.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import crypto from "node:crypto";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

import { startServer } from "../tests/server.mjs";
import { peer } from "./peers.mjs";
import { commit, machine, median, requestSummary, saveResults, williams } from "./results.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "../tests/js/chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const dataDir = path.join(here, "data-tiff");
const buildDir = path.join(here, ".build");
const ARGS = [...CHROMIUM_ARGS, "--js-flags=--expose-gc"];
const DATASETS = ["u16_deflate", "u16_zstd", "u8_jpeg"];
const WORKLOADS = ["full", "tiles", "windows", "cold"];
const ALL_WORKLOADS = [...WORKLOADS, "revisit"];
const LIBS = ["shardfetch", "geotiff", "geotiff-pool", "geotiff-blocked", "geotiff-blocked-pool", "geotiff-blocked-nostore", "geotiff-blocked-nostore-pool"];
const ALL_LIBS = [...LIBS, "shardfetch-noworkers"];
const say = (m) => console.log(`[tiff] ${m}`);

// --- options -----------------------------------------------------------------------------------

function parseLink(s) {
  if (s === "loopback") return { name: "loopback", link: undefined };
  const [ms, mbps] = s.split(":").map(Number);
  if (!(ms >= 0) || !(mbps > 0)) throw new Error(`--links wants MS:MBPS or loopback, not ${s}`);
  return { name: `${ms}ms/${mbps}Mbit`, latencyMs: ms, mbps, link: { latencyMs: ms, mbps } };
}

function parseArgs(argv) {
  const o = { reps: 4, datasets: DATASETS, workloads: WORKLOADS, libs: LIBS, links: ["40:200", "loopback"], inflight: 16, out: null, save: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i] ?? (() => { throw new Error(`missing value for ${a}`); })();
    if (a === "--reps") o.reps = Number(next());
    else if (a === "--datasets") o.datasets = next().split(",");
    else if (a === "--workloads") o.workloads = next().split(",");
    else if (a === "--libs") o.libs = next().split(",");
    else if (a === "--links") o.links = next().split(",");
    else if (a === "--inflight") o.inflight = Number(next());
    else if (a === "--out") o.out = path.resolve(next());
    else if (a === "--no-save") o.save = false;
    else if (a === "--pkg") o.pkg = path.resolve(next());
    else throw new Error(`unknown argument ${a} (see the header of bench/tiff.mjs)`);
  }
  if (!Number.isInteger(o.reps) || o.reps < 3) throw new Error("--reps must be an integer >= 3");
  if (!Number.isInteger(o.inflight) || o.inflight < 1) throw new Error("--inflight must be a positive integer");
  for (const d of o.datasets) if (!DATASETS.includes(d)) throw new Error(`unknown dataset ${d}`);
  for (const w of o.workloads) if (!ALL_WORKLOADS.includes(w)) throw new Error(`unknown workload ${w}`);
  for (const l of o.libs) if (!ALL_LIBS.includes(l)) throw new Error(`unknown library ${l}`);
  if (o.out && fs.existsSync(o.out)) throw new Error(`${o.out} exists (results are never overwritten)`);
  o.links = o.links.map(parseLink);
  return o;
}

// --- preparation -------------------------------------------------------------------------------

function sh(cmd, args, opts = {}) {
  execFileSync(cmd, args, { stdio: "inherit", cwd: repo, ...opts });
}

function ensureData() {
  if (DATASETS.every((d) => fs.existsSync(path.join(dataDir, `${d}.json`)))) return;
  const venv = process.env.BENCH_TIFF_VENV ?? "/tmp/venv-tiff";
  const py = path.join(venv, "bin/python");
  if (!fs.existsSync(py)) {
    say(`creating the venv ${venv}`);
    sh("python3", ["-m", "venv", venv]);
  }
  say("pip install -r bench/requirements-tiff.txt");
  sh(py, ["-m", "pip", "install", "--quiet", "-r", path.join(here, "requirements-tiff.txt")]);
  say("writing bench/data-tiff (about a minute)");
  sh(py, [path.join(here, "generate_tiff.py")]);
}

/**
 * geotiff.js's package directory: the repository's node_modules, bench/.build/peers (bench/peers.mjs:
 * installed there on first use), or the unpacked tarball at $GEOTIFF_DIR.
 */
function geotiffDir() {
  for (const base of [path.join(repo, "node_modules"), path.join(buildDir, "peers/node_modules")]) {
    if (fs.existsSync(path.join(base, "geotiff/package.json"))) return path.join(base, "geotiff");
  }
  // Not found: installed into bench/.build/peers (pinned), unless $GEOTIFF_DIR names another.
  if (!process.env.GEOTIFF_DIR) return peer("geotiff", "3.0.5");
  const dir = process.env.GEOTIFF_DIR;
  if (!fs.existsSync(path.join(dir, "package.json"))) throw new Error(`geotiff.js not found at $GEOTIFF_DIR ${dir}`);
  if (!fs.existsSync(path.join(dir, "node_modules/pako"))) {
    say(`npm install --omit=dev in ${dir} (geotiff.js's dependencies)`);
    sh("npm", ["install", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: dir });
  }
  return dir;
}

/** bench/.build/geotiff.js, rebundled when the entry or the package changed. Returns versions. */
function ensureGeotiffBundle() {
  const dir = geotiffDir();
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  if (pkg.version !== "3.0.5") say(`WARNING: geotiff.js ${pkg.version}, not 3.0.5`);
  const depVersion = (d) => {
    for (const base of [path.join(dir, "node_modules"), path.join(dir, ".."), path.join(repo, "node_modules")]) {
      const f = path.join(base, d, "package.json");
      if (fs.existsSync(f)) return JSON.parse(fs.readFileSync(f, "utf8")).version;
    }
    return null;
  };
  const versions = { geotiff: pkg.version, from: dir, dependencies: Object.fromEntries(Object.keys(pkg.dependencies ?? {}).map((d) => [d, depVersion(d)])) };
  const out = path.join(buildDir, "geotiff.js");
  const stamp = path.join(buildDir, "geotiff.stamp.json");
  const entry = path.join(here, "geotiff-entry.js");
  const want = JSON.stringify({ ...versions, entry: fs.statSync(entry).mtimeMs });
  if (fs.existsSync(out) && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === want) return versions;
  say(`bundling geotiff.js ${pkg.version} (${path.relative(repo, dir) || dir}) with esbuild → bench/.build/geotiff.js`);
  fs.mkdirSync(buildDir, { recursive: true });
  sh(path.join(repo, "node_modules/.bin/esbuild"), [
    entry,
    "--bundle",
    "--format=esm",
    "--platform=browser",
    "--target=es2022",
    "--minify",
    // Outside the repository's node_modules: named by path (its dependencies resolve beside it).
    ...(dir === path.join(repo, "node_modules/geotiff") ? [] : [`--alias:geotiff=${dir}`]),
    `--outfile=${out}`,
    "--log-level=warning",
  ]);
  fs.writeFileSync(stamp, want);
  return versions;
}

/** pkg/ copied aside, so that a rebuild during the run does not mix two builds. */
function snapshotPkg(src = path.join(repo, "pkg")) {
  if (!fs.existsSync(path.join(src, "index.js"))) throw new Error("pkg/index.js missing: build shardfetch first (npm run build)");
  const dst = path.join(buildDir, "tiff-pkg");
  fs.rmSync(dst, { recursive: true, force: true });
  fs.cpSync(src, dst, { recursive: true });
  const wasm = fs.readFileSync(path.join(dst, "wasm/shardfetch_bg.wasm"));
  const { version } = JSON.parse(fs.readFileSync(path.join(dst, "package.json"), "utf8"));
  return { dir: dst, version, wasmSha256: crypto.createHash("sha256").update(wasm).digest("hex").slice(0, 16), builtAt: fs.statSync(path.join(src, "index.js")).mtime.toISOString() };
}

// --- main --------------------------------------------------------------------------------------

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  ensureData();
  const geotiffVersions = ensureGeotiffBundle();
  const pkg = snapshotPkg(opt.pkg);
  // The checkout measured ("+dirty": tracked files differ), taken with the snapshot (pkg/ may
  // be rebuilt meanwhile).
  const built = commit();
  const infos = Object.fromEntries(opt.datasets.map((d) => [d, JSON.parse(fs.readFileSync(path.join(dataDir, `${d}.json`), "utf8"))]));

  const pageServer = await startServer({ root: { "/": repo, "/sfpkg": pkg.dir } });
  const dataServers = [];
  for (const l of opt.links) dataServers.push({ ...l, server: await startServer({ root: { "/data-tiff": dataDir }, link: l.link }) });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  const pageUrl = `${pageServer.url}/bench/tiff.html?pkg=${encodeURIComponent(`${pageServer.url}/sfpkg`)}`;
  const failures = [];
  const errors = [];

  /** One measurement in a fresh context (revisit: a fresh profile, visited once before). */
  async function measure(ds, lib, dataset, workload) {
    const info = infos[dataset];
    const profile = workload === "revisit" ? fs.mkdtempSync(path.join(os.tmpdir(), "tiff-bench-profile-")) : null;
    const context = profile ? await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, headless: true }) : await browser.newContext();
    try {
      if (profile) {
        const first = await context.newPage();
        await first.goto(pageUrl);
        await first.waitForFunction(() => window.__benchReady || window.__benchError, null, { timeout: 60_000 });
        await first.evaluate((spec) => window.bench.run(spec), { lib, workload: "cold", url: `${ds.server.url}/data-tiff/${info.file}`, info });
        await first.evaluate(() => window.bench.finish());
        await new Promise((r) => setTimeout(r, 2500));
        await first.close();
      }
      const page = await context.newPage();
      page.on("pageerror", (e) => failures.push(`pageerror: ${e.message}`));
      page.on("console", (m) => {
        if (m.type() === "error") console.error(`[page] ${m.text()}`);
      });
      await page.goto(pageUrl);
      await page.waitForFunction(() => window.__benchReady || window.__benchError, null, { timeout: 60_000 });
      const err = await page.evaluate(() => window.__benchError);
      if (err) throw new Error(err);
      await page.evaluate(() => window.gc?.());
      ds.server.log.length = 0;
      try {
        await page.evaluate((spec) => window.bench.run(spec), { lib, workload: workload === "revisit" ? "cold" : workload, url: `${ds.server.url}/data-tiff/${info.file}`, info, inflight: opt.inflight });
      } catch (e) {
        const error = String(e.message ?? e).split("\n")[0].replace(/^page\.evaluate: /, "");
        return { ms: NaN, error, ok: false, ...requestSummary(ds.server.log) };
      }
      const log = requestSummary(ds.server.log);
      const r = await page.evaluate(() => window.bench.finish());
      return { ...r, ...log };
    } finally {
      await context.close();
      if (profile) fs.rmSync(profile, { recursive: true, force: true });
    }
  }

  const samples = [];
  const orders = williams(opt.libs.length);
  const total = opt.links.length * opt.datasets.length * opt.workloads.length * opt.libs.length * opt.reps;
  let done = 0;
  try {
    for (const ds of dataServers) {
      for (const dataset of opt.datasets) {
        for (const workload of opt.workloads) {
          for (let rep = 0; rep < opt.reps; rep++) {
            for (const lib of orders[rep % orders.length].map((i) => opt.libs[i])) {
              const r = await measure(ds, lib, dataset, workload);
              if (r.error) {
                errors.push(`${ds.name} ${dataset} ${workload} ${lib} rep ${rep}: ${r.error}`);
                if (lib.startsWith("shardfetch")) failures.push(`${ds.name} ${dataset} ${workload} ${lib}: ${r.error}`);
              } else if (!r.ok) {
                failures.push(`${ds.name} ${dataset} ${workload} ${lib}: wrong data (maxDiff ${r.maxDiff ?? "–"}, got ${JSON.stringify(r.got)?.slice(0, 200)}, want ${JSON.stringify(r.want)?.slice(0, 200)})`);
              }
              const { got, want, ...keep } = r;
              samples.push({ link: ds.name, dataset, workload, lib, rep, ...keep });
              const status = r.error ? `  FAILED: ${r.error}` : r.ok ? (r.exact ? "" : `  (max |Δ| ${r.maxDiff})`) : "  WRONG DATA";
              say(`${String(++done).padStart(4)}/${total} ${ds.name} ${dataset} ${workload} ${lib}: ${r.ms.toFixed(1)} ms, ${r.requests} req, ${(r.bytes / 1e6).toFixed(2)} MB${status}`);
            }
          }
        }
      }
    }
  } finally {
    var browserVersion = browser.version();
    await browser.close();
    await pageServer.close();
    for (const ds of dataServers) await ds.server.close();
  }

  // --- summary ---------------------------------------------------------------------------------
  const rows = [];
  for (const ds of dataServers) {
    for (const dataset of opt.datasets) {
      for (const workload of opt.workloads) {
        for (const lib of opt.libs) {
          const all = samples.filter((x) => x.link === ds.name && x.dataset === dataset && x.workload === workload && x.lib === lib);
          const s = all.filter((x) => !x.error);
          const row = { link: ds.name, dataset, workload, lib, n: s.length, failed: all.length - s.length };
          if (s.length === 0) {
            rows.push({ ...row, error: all[0]?.error });
            continue;
          }
          const ms = s.map((x) => x.ms);
          rows.push({
            ...row,
            medianMs: median(ms),
            minMs: Math.min(...ms),
            maxMs: Math.max(...ms),
            importMs: median(s.map((x) => x.importMs)),
            requests: median(s.map((x) => x.requests)),
            preflights: median(s.map((x) => x.preflights)),
            bytes: median(s.map((x) => x.bytes)),
            outBytes: s[0].outBytes,
            longTaskMs: median(s.map((x) => x.longTaskMs)),
            maxDiff: s[0].maxDiff === undefined ? undefined : Math.max(...s.map((x) => x.maxDiff)),
            allCorrect: s.every((x) => x.ok),
            allExact: s.every((x) => x.exact),
          });
        }
      }
    }
  }
  // The comparison: shardfetch against geotiff.js's fastest correct configuration by median:
  // through fromUrl (the figure), and through the no-store client when measured.
  const comparison = [];
  const pick = (r) => r && { lib: r.lib, ms: r.medianMs, requests: r.requests, bytes: r.bytes, ok: r.allCorrect, maxDiff: r.maxDiff };
  const fastest = (rs) => rs.filter((r) => r.allCorrect).sort((a, b) => a.medianMs - b.medianMs)[0];
  for (const ds of dataServers) {
    for (const dataset of opt.datasets) {
      for (const workload of opt.workloads) {
        const at = rows.filter((r) => r.link === ds.name && r.dataset === dataset && r.workload === workload && r.n > 0);
        const sf = at.find((r) => r.lib === "shardfetch");
        const gt = fastest(at.filter((r) => r.lib.startsWith("geotiff") && !r.lib.includes("nostore")));
        const ns = fastest(at.filter((r) => r.lib.includes("nostore")));
        if (!sf || !(gt || ns)) continue;
        comparison.push({ link: ds.name, dataset, workload, shardfetch: pick(sf), ...(gt ? { geotiff: pick(gt), speedup: gt.medianMs / sf.medianMs } : {}), ...(ns ? { geotiffNoStore: pick(ns), speedupNoStore: ns.medianMs / sf.medianMs } : {}) });
      }
    }
  }

  const f = (x, d = 1) => (x == null || Number.isNaN(x) ? "–" : x.toFixed(d));
  const mb = (b) => f(b / 1e6, 2);
  const lines = ["| link | dataset | workload | library | median ms (min–max) | import ms | requests | MB | long tasks ms | ok |", "|---|---|---|---|---|---|---|---|---|---|"];
  for (const r of rows) {
    if (r.n === 0) lines.push(`| ${r.link} | ${r.dataset} | ${r.workload} | ${r.lib} | failed ${r.failed}× (${r.error}) | | | | | ✗ |`);
    else lines.push(`| ${r.link} | ${r.dataset} | ${r.workload} | ${r.lib} | ${f(r.medianMs)} (${f(r.minMs)}–${f(r.maxMs)}) | ${f(r.importMs)} | ${r.requests}${r.preflights ? ` (+${r.preflights} preflights)` : ""} | ${mb(r.bytes)} | ${f(r.longTaskMs, 0)} | ${r.allCorrect ? "✓" : "✗"}${r.maxDiff !== undefined ? ` (max Δ ${r.maxDiff})` : ""}${r.failed ? ` (${r.failed} failed)` : ""} |`);
  }
  console.log(`\n${lines.join("\n")}\n`);
  const noStore = comparison.some((c) => c.geotiffNoStore);
  const cell = (x) => `${f(x.ms, 0)} / ${x.requests} / ${mb(x.bytes)}`;
  const times = (x) => (x ? `${f(x, 2)}×` : "–");
  const cmp = [
    `| link | dataset | workload | shardfetch ms / req / MB | geotiff.js (fromUrl) best ms / req / MB (configuration) | ÷ shardfetch |${noStore ? " geotiff.js no-store client best | ÷ shardfetch |" : ""}`,
    `|---|---|---|---|---|---|${noStore ? "---|---|" : ""}`,
  ];
  for (const c of comparison) {
    const ns = noStore ? ` ${c.geotiffNoStore ? `${cell(c.geotiffNoStore)} (${c.geotiffNoStore.lib})` : "–"} | ${times(c.speedupNoStore)} |` : "";
    const gt = c.geotiff ? `${cell(c.geotiff)} (${c.geotiff.lib})` : "–";
    cmp.push(`| ${c.link} | ${c.dataset} | ${c.workload} | ${cell(c.shardfetch)} | ${gt} | ${times(c.speedup)} |${ns}`);
  }
  console.log(`${cmp.join("\n")}\n`);

  const result = {
    date: new Date().toISOString(),
    command: `node bench/tiff.mjs ${process.argv.slice(2).join(" ")}`.trim(),
    commit: built,
    durationS: Math.round((Date.now() - t0) / 1000),
    machine: machine(browserVersion),
    versions: { shardfetch: { version: pkg.version, wasmSha256: pkg.wasmSha256, builtAt: pkg.builtAt }, geotiff: geotiffVersions, generator: JSON.parse(fs.readFileSync(path.join(dataDir, "generator.json"), "utf8")).versions },
    method: {
      reps: opt.reps,
      order: "Williams design over the libraries (bench/run.mjs): each after each other equally often",
      fresh: "a new browser context per measurement (no HTTP cache, no compiled code, no worker pool); the page loads no library until the run",
      timing: "from the library's dynamic import (page origin, loopback) to the last pixel; importMs is the import alone",
      tiles: `every tile of level 0, one read each, ${opt.inflight} in flight (shardfetch getChunk on child "0"; geotiff.js readRasters of the tile's window)`,
      windows: "20 views of 1024×768 (smaller at levels under it) across levels 0–2, one after another (shardfetch get on child \"<level>\"; geotiff.js getImage(level).readRasters({ window }))",
      cold: "open + the first tile of level 0",
      revisit: "cold on a returning visit: a profile on disk, the page visited once (2.5 s) and closed, then opened anew",
      libs: Object.fromEntries(Object.entries({
        shardfetch: "open(url) → group; openArray(\"<level>\"); defaults (decoding workers)",
        geotiff: "fromUrl(url) with its defaults (3.x: no block cache), readRasters without a pool",
        "geotiff-pool": "as geotiff, readRasters({ pool: new Pool() }) (navigator.hardwareConcurrency workers)",
        "geotiff-blocked": "fromUrl(url, { blockSize: 65536 }) (a BlockedSource: 64 KiB blocks, cacheSize 100), no pool",
        "geotiff-blocked-pool": "as geotiff-blocked, with its Pool",
        "geotiff-blocked-nostore": "as geotiff-blocked through fromCustomClient: a fetch client with cache \"no-store\" (Chrome's HTTP cache otherwise lets one range request of a URL through at a time)",
        "geotiff-blocked-nostore-pool": "as geotiff-blocked-nostore, with its Pool",
        "shardfetch-noworkers": "shardfetch with { workers: false }",
      }).filter(([k]) => opt.libs.includes(k))),
      requests: "GET + HEAD answered by the data server (its request log); CORS preflights apart",
      links: Object.fromEntries(dataServers.map((d) => [d.name, d.link ? `${d.latencyMs} ms per answer, ${d.mbps} Mbit/s shared (tests/server.mjs, HTTP/1.1)` : "loopback, no pacing"])),
      correctness: "lossless: the generator's checksums (GDAL's decoded values = the source); JPEG: every pixel within the tolerance of GDAL's decoded levels",
      comparison: "geotiff.js's figure is its fastest correct fromUrl configuration by median (geotiffNoStore: the no-store client's, when measured); speedup = geotiff ms ÷ shardfetch ms (> 1: shardfetch faster)",
    },
    datasets: Object.fromEntries(Object.entries(infos).map(([k, v]) => [k, { note: v.note, dtype: v.dtype, shape: v.shape, tileShape: v.tileShape, levels: v.levels, creation: v.creation, fileBytes: v.fileBytes, decodedBytes: v.decodedBytes, tolerance: v.tolerance }])),
    comparison,
    rows,
    samples,
    errors,
    failures,
  };
  if (opt.save) say(`results: ${path.relative(repo, saveResults(result, { out: opt.out, name: "tiff" }))}`);

  if (failures.length) {
    console.error(`\n${failures.length} failure(s):\n${failures.join("\n")}`);
    process.exit(1);
  }
}

await main();
