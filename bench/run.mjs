#!/usr/bin/env node
// shardfetch vs zarrita.js in one headless Chromium run (issue 6). `npm run bench [-- options]`.
//
//   --reps N          fresh opens per measurement (default 4: one Williams square of the four libraries; at least 3)
//   --datasets a,b    subset of bench/data/* (default: all five)
//   --workloads a,b   subset of full,tiles,windows,cold
//   --libs a,b        subset of shardfetch,shardfetch-noworkers,zarrita,zarrita-tuned; also
//                     shardfetch-gap<N>k (shardfetch with mergeGap N KiB, to choose the default),
//                     shardfetch-workers<N> (N decoding workers whatever the chunk size),
//                     shardfetch-inflight<N> (maxInFlight N; shardfetch-baseline-inflight<N> too)
//   --profile         also profile one extra run per dataset × workload × library: a CPU profile
//                     of the main thread (top self-time functions) and a Chromium trace (busy
//                     time of the main thread, decoding workers, network service); saved in the
//                     results, .cpuprofile files in bench/.build/profiles/
//   --part P          table (the comparison), decoders (decode throughput, in memory) or all (default)
//   --passes N        decoder passes per measurement (default 5)
//   --profile-only    the profiles alone (no timed repetitions)
//   --pkg DIR         a built shardfetch package to use instead of pkg/ (e.g. a profiling build)
//   --baseline DIR    another built package, measured as library shardfetch-baseline in the same
//                     run and order square (a before/after comparison of a change)
//   --out FILE        results file (default bench/results/<date>.json; never overwritten)
//   --no-save         print only
//   --layout zip      read each dataset from a stored zip of it (bench/zip.mjs; zarrita through
//                     its ZipFileStore) instead of its directory
//   --layout ozx      the same stored zips named <dataset>.ozx (RFC-9's layout: the root zarr.json
//                     first), which shardfetch reads with the archive's start beside its end
//   --layout icechunk read each dataset from an Icechunk repository holding it, branch main
//                     (bench/generate_icechunk.py: bench/data-icechunk/<name>.icechunk, the array
//                     at path <name>, its shards byte for byte); shardfetch opens the repository's
//                     root with { store: "icechunk", path }. zarrita.js cannot read Icechunk: its
//                     libraries read the plain layout in the same run (marked "plain" in the table)
//   --link MS:MBPS    serve the data over a simulated link (tests/server.mjs --latency-ms/--mbps):
//                     every answer waits MS (one round trip), all bodies share MBPS Mbit/s; the
//                     table then gives each run against the link floor (bytes ÷ bandwidth +
//                     3 round trips: metadata, index, data)
//   --page-link MS:MBPS serve the page and the libraries over such a link too (as from a CDN:
//                     the cold workload then pays for each round trip of the library's loading)
//   --http2           serve the data over HTTP/2 (TLS, a self-signed certificate Chromium is told
//                     to accept), as CDNs do; otherwise HTTP/1.1, as S3's own endpoints do (a
//                     browser keeps 6 connections per origin there and queues the rest)
//
// What it does: generates the datasets when missing (bench/generate.py in the venv
// $BENCH_VENV, default /tmp/venv-bench, created from bench/requirements.txt) and, for --layout
// icechunk, the repositories when missing (bench/generate_icechunk.py in the venv $BENCH_ICE_VENV,
// default /tmp/venv-bench-ice, created with Python >= 3.12 — $BENCH_ICE_PYTHON, else the first
// python3, python3.1x on the PATH or in ~/.pyenv/versions — from
// tests/fixtures/requirements-icechunk.txt), builds pkg/ when
// missing (after changing the library, `npm run build` first), bundles zarrita with esbuild into bench/.build/, serves the page (repo root) and the
// data (bench/data, bench/data-icechunk) from two local servers (two origins: CORS as in production), and measures.
// Requests and bytes come from the data server's request log, never from a library's counters.
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

import { startServer } from "../tests/server.mjs";
import { commit, machine, median, requestSummary, saveResults, williams } from "./results.mjs";
import { zipStore } from "./zip.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "../tests/js/chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const dataDir = path.join(here, "data");
const iceDir = path.join(here, "data-icechunk");
const buildDir = path.join(here, ".build");
const ARGS = [
  ...CHROMIUM_ARGS,
  // Bench only: a collection before every measurement, so one run's garbage is not billed to the next.
  "--js-flags=--expose-gc",
];
const DATASETS = ["u16_zstd", "u16_gzip", "u8_3d_zstd", "f32_raw", "u16_tiny_zstd"];
/** The decoder measurement: the same image compressed two ways and uncompressed. */
const DECODER_DATASETS = ["u16_zstd", "u16_gzip", "u16_blosc_zstd", "u16_blosc_lz4", "u16_raw"];
const WORKLOADS = ["full", "tiles", "windows", "cold"];
/** A cold page loads one library and opens at once (see page.mjs): import and compile count. */
const COLD_SETTLE_MS = 0;
const LIBS = ["shardfetch", "shardfetch-noworkers", "zarrita", "zarrita-tuned"];

// --- options -----------------------------------------------------------------------------------

function parseArgs(argv) {
  const o = { part: "all", passes: 5, reps: 4, datasets: DATASETS, workloads: WORKLOADS, libs: LIBS, profile: false, pkg: null, baseline: null, out: null, save: true, layout: "plain" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i] ?? (() => { throw new Error(`missing value for ${a}`); })();
    if (a === "--reps") o.reps = Number(next());
    else if (a === "--datasets") o.datasets = next().split(",");
    else if (a === "--workloads") o.workloads = next().split(",");
    else if (a === "--libs") o.libs = next().split(",");
    else if (a === "--profile") o.profile = true;
    else if (a === "--profile-only") o.profile = o.profileOnly = true;
    else if (a === "--part") o.part = next();
    else if (a === "--passes") o.passes = Number(next());
    else if (a === "--pkg") o.pkg = path.resolve(next());
    else if (a === "--baseline") o.baseline = path.resolve(next());
    else if (a === "--out") o.out = path.resolve(next());
    else if (a === "--no-save") o.save = false;
    else if (a === "--layout") o.layout = next();
    else if (a === "--http2") o.http2 = true;
    else if (a === "--link" || a === "--page-link") {
      const [ms, mbps] = next().split(":").map(Number);
      if (!(ms >= 0) || !(mbps > 0)) throw new Error(`${a} wants MS:MBPS, e.g. 40:200`);
      o[a === "--link" ? "link" : "pageLink"] = { latencyMs: ms, mbps };
    }
    else throw new Error(`unknown argument ${a} (see the header of bench/run.mjs)`);
  }
  if (!Number.isInteger(o.reps) || o.reps < 3) throw new Error("--reps must be an integer >= 3");
  if (!["all", "table", "decoders"].includes(o.part)) throw new Error("--part must be table, decoders or all");
  if (!["plain", "zip", "ozx", "icechunk"].includes(o.layout)) throw new Error("--layout must be plain, zip, ozx or icechunk");
  for (const d of o.datasets) if (!DATASETS.includes(d)) throw new Error(`unknown dataset ${d}`);
  for (const w of o.workloads) if (!WORKLOADS.includes(w)) throw new Error(`unknown workload ${w}`);
  for (const l of o.libs) {
    if (l.startsWith("shardfetch-baseline") && !o.baseline) throw new Error("shardfetch-baseline needs --baseline DIR");
    if (!LIBS.includes(l) && l !== "shardfetch-baseline" && !/^shardfetch-(gap\d+k|workers\d+|(baseline-)?inflight\d+)$/.test(l)) throw new Error(`unknown library ${l}`);
  }
  return o;
}

// --- preparation -------------------------------------------------------------------------------

const say = (m) => console.log(`[bench] ${m}`);

function sh(cmd, args, opts = {}) {
  execFileSync(cmd, args, { stdio: "inherit", cwd: repo, ...opts });
}

function ensureData() {
  if ([...DATASETS, ...DECODER_DATASETS].every((d) => fs.existsSync(path.join(dataDir, d, "bench.json")))) return;
  const venv = process.env.BENCH_VENV ?? "/tmp/venv-bench";
  const py = path.join(venv, "bin/python");
  if (!fs.existsSync(py)) {
    say(`creating the venv ${venv}`);
    sh("python3", ["-m", "venv", venv]);
  }
  say("pip install -r bench/requirements.txt");
  sh(py, ["-m", "pip", "install", "--quiet", "-r", path.join(here, "requirements.txt")]);
  say("generating bench/data (about 30 s)");
  sh(py, [path.join(here, "generate.py")]);
}

/** The Icechunk repositories of `datasets` (bench/generate_icechunk.py), written when missing. */
function ensureIcechunk(datasets) {
  const missing = datasets.filter((d) => !fs.existsSync(path.join(iceDir, `${d}.icechunk`)));
  if (missing.length === 0) return;
  const venv = process.env.BENCH_ICE_VENV ?? "/tmp/venv-bench-ice";
  const py = path.join(venv, "bin/python");
  if (!fs.existsSync(py)) {
    // icechunk 2.x needs Python >= 3.12; pyenv's interpreters are tried too (its shims answer
    // only for the versions selected).
    const pyenv = path.join(process.env.PYENV_ROOT ?? path.join(os.homedir(), ".pyenv"), "versions");
    const pyenvs = fs.existsSync(pyenv) ? fs.readdirSync(pyenv).filter((v) => /^3\.\d+\.\d+$/.test(v)).map((v) => path.join(pyenv, v, "bin/python3")) : [];
    const candidates = [process.env.BENCH_ICE_PYTHON, "python3", "python3.12", "python3.13", "python3.14", ...pyenvs].filter(Boolean);
    const python = candidates.find((c) => {
      try {
        execFileSync(c, ["-c", "import sys; sys.exit(sys.version_info < (3, 12))"], { stdio: "ignore" });
        return true;
      } catch {
        return false;
      }
    });
    if (!python) throw new Error(`--layout icechunk needs Python >= 3.12 for the icechunk package: set BENCH_ICE_PYTHON (tried ${candidates.join(", ")})`);
    say(`creating the venv ${venv} (${python})`);
    sh(python, ["-m", "venv", venv]);
  }
  say("pip install -r tests/fixtures/requirements-icechunk.txt");
  sh(py, ["-m", "pip", "install", "--quiet", "-r", path.join(repo, "tests/fixtures/requirements-icechunk.txt")]);
  say(`writing Icechunk repositories of ${missing.join(", ")} into bench/data-icechunk`);
  sh(py, [path.join(here, "generate_icechunk.py"), ...missing]);
}

/** Whether `lib` reads the plain layout in this run (zarrita.js cannot read Icechunk). */
const readsPlain = (layout, lib) => layout === "icechunk" && lib.startsWith("zarrita");

/** The URL `lib` opens for `dataset` and the options it opens it with (shardfetch's only). */
function target(opt, base, lib, dataset) {
  if (opt.layout === "zip") return { url: `${base}/data/${dataset}.zarr.zip` };
  if (opt.layout === "ozx") return { url: `${base}/data/${dataset}.ozx` };
  if (opt.layout === "icechunk" && !readsPlain(opt.layout, lib)) {
    return { url: `${base}/data-icechunk/${dataset}.icechunk`, openOptions: { store: "icechunk", path: dataset } };
  }
  return { url: `${base}/data/${dataset}` };
}

function ensurePkg(pkgDir) {
  if (fs.existsSync(path.join(pkgDir, "index.js"))) return;
  if (pkgDir !== path.join(repo, "pkg")) throw new Error(`${pkgDir}/index.js missing`);
  say("pkg/ missing: npm run build");
  sh("bash", ["scripts/build.sh"]);
}

function ensureZarritaBundle() {
  const out = path.join(buildDir, "zarrita.js");
  const newest = Math.max(...[path.join(repo, "package-lock.json"), path.join(here, "zarrita-entry.js")].map((f) => fs.statSync(f).mtimeMs));
  if (fs.existsSync(out) && fs.statSync(out).mtimeMs > newest) return;
  say("bundling zarrita with esbuild → bench/.build/zarrita.js");
  fs.mkdirSync(buildDir, { recursive: true });
  sh(path.join(repo, "node_modules/.bin/esbuild"), [
    path.join(here, "zarrita-entry.js"),
    "--bundle",
    "--format=esm",
    "--target=es2022",
    "--minify",
    // unzipit (under zarrita's zip store) imports worker_threads on Node only: left to the runtime.
    "--external:worker_threads",
    `--outfile=${out}`,
    "--log-level=warning",
  ]);
}

// --- statistics --------------------------------------------------------------------------------

/** Bytes sent more than once (the same byte of the same object read again). */
function rereadBytes(entries) {
  const spans = new Map();
  let total = 0;
  for (const e of entries) {
    if (e.method !== "GET" || !e.bytes) continue;
    total += e.bytes;
    const m = /^bytes=(\d*)-(\d*)$/.exec(e.range ?? "");
    // Suffix reads (shard indexes): keyed by their length from the end.
    const key = m && m[1] !== "" ? e.path : `${e.path} ${e.range ?? "whole"}`;
    const start = m && m[1] !== "" ? Number(m[1]) : 0;
    if (!spans.has(key)) spans.set(key, []);
    spans.get(key).push([start, start + e.bytes]);
  }
  let unique = 0;
  for (const xs of spans.values()) unique += unionLength(xs);
  return total - unique;
}

/** Total length covered by intervals `[start, end)` (sorts `xs`). */
function unionLength(xs) {
  xs.sort((a, b) => a[0] - b[0]);
  let total = 0;
  let [a, b] = xs[0];
  for (const [c, d] of xs.slice(1)) {
    if (c > b) {
      total += b - a;
      [a, b] = [c, d];
    } else b = Math.max(b, d);
  }
  return total + (b - a);
}

function logSummary(entries) {
  return { rereadBytes: rereadBytes(entries), ...requestSummary(entries), gets: entries.filter((e) => e.method === "GET").length };
}

// --- profiles ----------------------------------------------------------------------------------

/** Top self-time functions of a CDP Profiler profile. */
function topSelf(profile, n = 12) {
  const dt = profile.timeDeltas ?? [];
  const self = new Map();
  const byId = new Map(profile.nodes.map((x) => [x.id, x]));
  const samples = profile.samples ?? [];
  let total = 0;
  for (let i = 0; i < samples.length; i++) {
    const node = byId.get(samples[i]);
    const d = (dt[i + 1] ?? 0) / 1000; // ms until the next sample
    total += d;
    const cf = node.callFrame;
    const file = cf.url ? cf.url.replace(/^.*\//, "") : "";
    const key = `${cf.functionName || "(anonymous)"} ${file}`.trim();
    self.set(key, (self.get(key) ?? 0) + d);
  }
  return {
    totalMs: total,
    top: [...self.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([fn, ms]) => ({ fn, ms: Math.round(ms * 10) / 10, pct: Math.round((1000 * ms) / total) / 10 })),
  };
}

/** Trace categories: top-level task slices of every thread. */
const TRACE_CATEGORIES = ["toplevel", "disabled-by-default-devtools.timeline"];

/** Busy ms per thread (union of its top-level task slices) in a Chromium trace, busiest first. */
function threadBusy(trace) {
  const events = trace.traceEvents ?? trace;
  const names = new Map();
  const procs = new Map();
  for (const e of events) {
    if (e.ph === "M" && e.name === "thread_name") names.set(`${e.pid}:${e.tid}`, e.args?.name ?? "?");
    if (e.ph === "M" && e.name === "process_name") procs.set(e.pid, e.args?.name ?? "?");
  }
  const slices = new Map();
  for (const e of events) {
    if (e.ph !== "X" || !e.dur || !/RunTask/.test(e.name)) continue;
    const k = `${e.pid}:${e.tid}`;
    if (!slices.has(k)) slices.set(k, []);
    slices.get(k).push([e.ts, e.ts + e.dur]);
  }
  const out = [];
  for (const [k, xs] of slices) {
    const busy = unionLength(xs);
    const pid = Number(k.split(":")[0]);
    out.push({ thread: names.get(k) ?? k, process: procs.get(pid) ?? String(pid), busyMs: Math.round(busy / 100) / 10 });
  }
  // The page's renderer (main thread, decoding workers) and the network service; WebUI and
  // DevTools plumbing of the tracing itself left out.
  const keep = (x) => x.process === "Renderer" || /NetworkService/.test(x.process);
  return out.sort((x, y) => y.busyMs - x.busyMs).filter((x) => keep(x) && x.busyMs >= 5).slice(0, 6);
}

// --- machine -----------------------------------------------------------------------------------

// --- main --------------------------------------------------------------------------------------

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  const pkgDir = opt.pkg ?? path.join(repo, "pkg");
  ensureData();
  if (opt.layout === "zip" || opt.layout === "ozx") {
    for (const d of opt.datasets) {
      const zip = zipStore(path.join(dataDir, d), path.join(dataDir, `${d}.zarr.zip`));
      if (opt.layout === "ozx" && !fs.existsSync(path.join(dataDir, `${d}.ozx`))) fs.copyFileSync(zip, path.join(dataDir, `${d}.ozx`));
    }
  }
  if (opt.layout === "icechunk" && opt.part !== "decoders") {
    ensureIcechunk(opt.datasets);
    const plain = opt.libs.filter((l) => readsPlain(opt.layout, l));
    if (plain.length) say(`layout icechunk: ${plain.join(", ")} cannot read Icechunk and read the plain layout (bench/data) in this run`);
  }
  ensurePkg(pkgDir);
  ensureZarritaBundle();
  const zarritaVersion = JSON.parse(fs.readFileSync(path.join(repo, "node_modules/zarrita/package.json"), "utf8")).version;
  const infos = Object.fromEntries(
    [...new Set([...opt.datasets, ...DECODER_DATASETS])].map((d) => [d, JSON.parse(fs.readFileSync(path.join(dataDir, d, "bench.json"), "utf8"))]),
  );

  const pageServer = await startServer({ root: { "/": repo, "/altpkg": pkgDir, ...(opt.baseline ? { "/basepkg": opt.baseline } : {}) }, link: opt.pageLink });
  const dataServer = await startServer({ root: { "/data": dataDir, "/data-icechunk": iceDir }, link: opt.link, http2: opt.http2 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: opt.http2 ? [...ARGS, "--ignore-certificate-errors"] : ARGS, headless: true });
  const query = [
    ...(opt.pkg ? [`pkg=${encodeURIComponent(`${pageServer.url}/altpkg`)}`] : []),
    ...(opt.baseline ? [`base=${encodeURIComponent(`${pageServer.url}/basepkg`)}`] : []),
  ];
  const pkgQuery = query.length ? `?${query.join("&")}` : "";
  const pageUrl = `${pageServer.url}/bench/page.html${pkgQuery}`;
  const failures = [];

  /** Which library a cold page loads alone for `lib`. */
  const pageFor = (lib) => (lib.startsWith("shardfetch-baseline") ? "shardfetch-baseline" : lib.startsWith("shardfetch") ? "shardfetch" : "zarrita");

  /** The benchmark page; `only` (a cold start) loads just that library. */
  async function openPage(context, only) {
    const page = await context.newPage();
    page.on("pageerror", (e) => failures.push(`pageerror: ${e.message}`));
    let shown = 0;
    page.on("console", (m) => {
      if (m.type() === "error" && shown++ < 3) console.error(`[page] ${m.text()}${shown === 3 ? " (further page errors not shown)" : ""}`);
    });
    await page.goto(only ? `${pageUrl}${pageUrl.includes("?") ? "&" : "?"}only=${only}&settle=${COLD_SETTLE_MS}` : pageUrl);
    await page.waitForFunction(() => window.__benchReady || window.__benchError, null, { timeout: 60_000 });
    const err = await page.evaluate(() => window.__benchError);
    if (err) throw new Error(err);
    return page;
  }

  /** One measurement; `probe` = { start(), stop() } around the timed part only (profiles). */
  async function measure(page, lib, dataset, workload, probe) {
    const info = infos[dataset];
    await page.evaluate(() => window.gc?.());
    // No answer from the browser's HTTP cache: each measurement reads the data afresh (whole
    // objects are fetched with `cache: "no-cache"` since issue 43; a repetition would be 304s).
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Network.clearBrowserCache");
    await cdp.detach();
    dataServer.log.length = 0;
    if (probe) await probe.start();
    try {
      await page.evaluate((spec) => window.bench.run(spec), {
        lib,
        dataset,
        workload,
        ...target(opt, dataServer.url, lib, dataset),
        info,
      });
    } catch (e) {
      // A library that fails a workload (e.g. too many requests at once) is a result, not a
      // crash of the benchmark; the caller replaces the page (requests may still be pending).
      if (probe) await probe.stop().catch(() => {});
      const error = String(e.message ?? e).split("\n")[0].replace(/^page\.evaluate: /, "");
      return { ms: NaN, error, ok: false, longTaskMs: NaN, outBytes: 0, ...logSummary(dataServer.log) };
    }
    const probed = probe ? await probe.stop() : undefined;
    const log = logSummary(dataServer.log);
    const r = await page.evaluate(() => window.bench.finish());
    r.probed = probed;
    Object.assign(r, log);
    if (!r.ok && !r.error) failures.push(`${dataset} ${workload} ${lib}: wrong data (got ${JSON.stringify(r.got)}, want ${JSON.stringify(r.want)})`);
    return r;
  }

  const samples = []; // one per measurement
  const errors = []; // failed measurements (of any library)
  const profiles = [];
  const t0 = Date.now();
  // The checkout measured, taken as the run starts (the tree may change while it runs).
  const built = commit();
  const total = opt.datasets.length * opt.workloads.length * opt.libs.length * opt.reps;
  let done = 0;
  const progress = (d, w, l, r) => {
    done++;
    const ok = r.error ? `  FAILED: ${r.error}` : r.ok ? "" : "  WRONG DATA";
    say(`${String(done).padStart(4)}/${total} ${d} ${w} ${l}${readsPlain(opt.layout, l) ? " (plain)" : ""}: ${r.ms.toFixed(1)} ms, ${r.requests} req, ${(r.bytes / 2 ** 20).toFixed(2)} MiB, long tasks ${r.longTaskMs.toFixed(0)} ms${ok}`);
  };
  // A run right after a large one of another library is slower whatever the library (the same
  // shardfetch code measured 257 ms after itself, 390-500 ms right after zarrita, with a GC and
  // a 300 ms pause in between), so the order is a Williams design: over n repetitions (2n when
  // n is odd) every library runs right after every other one equally often. A plain rotation
  // had put the default shardfetch after a zarrita run in every repetition.
  const orders = williams(opt.libs.length);
  const rotate = (xs, rep) => orders[rep % orders.length].map((i) => xs[i]);

  const decoderRuns = [];
  try {
    for (const dataset of opt.part === "decoders" ? [] : opt.datasets) {
      let context = await browser.newContext();
      let page = await openPage(context);
      const meta = await page.evaluate(() => ({ importMs: window.bench.importMs, hc: window.bench.hardwareConcurrency, lt: window.bench.longTaskSupported }));
      if (!meta.lt) say("WARNING: this Chromium has no longtask entries");
      for (const workload of opt.workloads) {
        for (let rep = 0; rep < (opt.profileOnly ? 0 : opt.reps); rep++) {
          // Interleaved (see `williams`): a burst of load from other jobs hits every library alike.
          for (const lib of rotate(opt.libs, rep)) {
            let r;
            if (workload === "cold") {
              // A fresh context: no HTTP cache, no compiled wasm, no pool, no index cache.
              const ctx = await browser.newContext();
              const p = await openPage(ctx, pageFor(lib));
              r = await measure(p, lib, dataset, workload);
              r.importMs = await p.evaluate(() => window.bench.importMs);
              // From a fresh page: the library's import (and its module's compile) counts.
              r.openMs = r.ms;
              r.ms += r.importMs[pageFor(lib) === "zarrita" ? "zarrita" : "shardfetch"] ?? 0;
              await ctx.close();
            } else {
              r = await measure(page, lib, dataset, workload);
              if (r.error) {
                await context.close();
                context = await browser.newContext();
                page = await openPage(context);
              }
            }
            if (r.error) {
              errors.push(`${dataset} ${workload} ${lib} rep ${rep}: ${r.error}`);
              if (lib.startsWith("shardfetch")) failures.push(`${dataset} ${workload} ${lib}: ${r.error}`);
            }
            delete r.probed;
            samples.push({ dataset, workload, lib, rep, ...r });
            progress(dataset, workload, lib, r);
          }
        }
        if (opt.profile) {
          for (const lib of opt.libs) {
            // (1) the main thread's CPU profile (CDP Profiler), (2) a Chromium trace of every
            // thread (busy time of the page's main thread, its workers, the network service).
            const only = pageFor(lib);
            const ctx = workload === "cold" ? await browser.newContext() : null;
            const p = ctx ? await openPage(ctx, only) : page;
            const cdp = await p.context().newCDPSession(p);
            await cdp.send("Profiler.enable");
            await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
            const r = await measure(p, lib, dataset, workload, {
              start: () => cdp.send("Profiler.start"),
              stop: async () => (await cdp.send("Profiler.stop")).profile,
            });
            await cdp.detach();
            if (ctx) await ctx.close();
            if (r.error) {
              say(`profile ${dataset} ${workload} ${lib}: ${r.error}`);
              if (!ctx) {
                await context.close();
                context = await browser.newContext();
                page = await openPage(context);
              }
              continue;
            }
            const file = path.join(buildDir, "profiles", `${dataset}-${workload}-${lib}.cpuprofile`);
            fs.mkdirSync(path.dirname(file), { recursive: true });
            fs.writeFileSync(file, JSON.stringify(r.probed));
            const ctx2 = workload === "cold" ? await browser.newContext() : null;
            const p2 = ctx2 ? await openPage(ctx2, only) : page;
            const t = await measure(p2, lib, dataset, workload, {
              start: () => browser.startTracing(undefined, { categories: TRACE_CATEGORIES }),
              stop: async () => threadBusy(JSON.parse((await browser.stopTracing()).toString("utf8"))),
            });
            if (ctx2) await ctx2.close();
            if (t.error) {
              if (!ctx2) {
                await context.close();
                context = await browser.newContext();
                page = await openPage(context);
              }
              continue;
            }
            profiles.push({ dataset, workload, lib, ms: r.ms, file: path.relative(repo, file), ...topSelf(r.probed), tracedMs: t.ms, threads: t.probed });
          }
        }
      }
      await context.close();
    }
    if (opt.part !== "table") {
      // One page, one dataset after another; nothing touches the network while timing.
      const context = await browser.newContext();
      const page = await openPage(context);
      for (const dataset of DECODER_DATASETS) {
        say(`decoders: ${dataset} (${opt.passes} passes)`);
        const r = await page.evaluate((spec) => window.bench.decoders(spec), {
          info: infos[dataset],
          url: `${dataServer.url}/data/${dataset}`,
          passes: opt.passes,
        });
        decoderRuns.push(r);
      }
      await context.close();
    }
  } finally {
    var browserVersion = browser.version();
    await browser.close();
    await pageServer.close();
    await dataServer.close();
  }

  // --- summary ---------------------------------------------------------------------------------
  const rows = [];
  /** The layout `lib` read: --layout's, or plain for zarrita in --layout icechunk. */
  const layoutOf = (lib) => (readsPlain(opt.layout, lib) ? "plain" : opt.layout);
  const libCell = (r) => `${r.lib}${r.layout !== opt.layout ? ` (${r.layout})` : ""}`;
  for (const dataset of opt.datasets) {
    for (const workload of opt.workloads) {
      for (const lib of opt.libs) {
        const all = samples.filter((x) => x.dataset === dataset && x.workload === workload && x.lib === lib);
        if (all.length === 0) continue;
        const s = all.filter((x) => !x.error);
        if (s.length === 0) {
          rows.push({ dataset, workload, lib, layout: layoutOf(lib), n: 0, failed: all.length, error: all[0].error, requests: median(all.map((x) => x.requests)), bytes: median(all.map((x) => x.bytes)) });
          continue;
        }
        const ms = median(s.map((x) => x.ms));
        rows.push({
          dataset,
          workload,
          lib,
          layout: layoutOf(lib),
          n: s.length,
          failed: all.length - s.length,
          medianMs: ms,
          minMs: Math.min(...s.map((x) => x.ms)),
          maxMs: Math.max(...s.map((x) => x.ms)),
          outBytes: s[0].outBytes,
          mbps: s[0].outBytes / 2 ** 20 / (ms / 1000),
          requests: median(s.map((x) => x.requests)),
          heads: median(s.map((x) => x.heads)),
          preflights: median(s.map((x) => x.preflights)),
          bytes: median(s.map((x) => x.bytes)),
          rereadBytes: median(s.map((x) => x.rereadBytes)),
          importMs: workload === "cold" ? median(s.map((x) => x.importMs[pageFor(lib) === "zarrita" ? "zarrita" : "shardfetch"])) : undefined,
          longTaskMs: median(s.map((x) => x.longTaskMs)),
          allCorrect: s.every((x) => x.ok),
        });
      }
    }
  }
  const ratio = (dataset, workload, lib, vs) => {
    const a = rows.find((r) => r.dataset === dataset && r.workload === workload && r.lib === lib);
    const b = rows.find((r) => r.dataset === dataset && r.workload === workload && r.lib === vs);
    return a?.medianMs && b?.medianMs ? b.medianMs / a.medianMs : null;
  };
  if (opt.link) {
    // The link floor: the fewest bytes any library moved for this dataset × workload at the
    // link's bandwidth, plus three round trips (metadata, index, data).
    for (const r of rows) {
      const peers = rows.filter((x) => x.dataset === r.dataset && x.workload === r.workload && x.n > 0 && x.bytes > 0);
      const bytes = Math.min(...peers.map((x) => x.bytes));
      r.floorMs = (bytes * 8) / (opt.link.mbps * 1000) + 3 * opt.link.latencyMs;
      if (r.medianMs) r.vsFloor = r.medianMs / r.floorMs;
    }
  }
  for (const r of rows) {
    // Throughput ratio (= zarrita ms / shardfetch ms): > 1 means shardfetch is faster.
    if (r.lib.startsWith("shardfetch")) {
      r.vsZarrita = ratio(r.dataset, r.workload, r.lib, "zarrita");
      r.vsZarritaTuned = ratio(r.dataset, r.workload, r.lib, "zarrita-tuned");
    }
  }

  const fmt = (x, d = 1) => (x == null ? "–" : x.toFixed(d));
  const lines = [];
  lines.push(`| dataset | workload | library | median ms (min–max) | MiB/s | requests (HEAD, preflights) | MiB transferred (re-read) | long tasks ms | sf/zarrita | sf/zarrita-tuned |${opt.link ? " × link floor (floor ms) |" : ""} ok |`);
  lines.push(`|---|---|---|---|---|---|---|---|---|---|${opt.link ? "---|" : ""}---|`);
  for (const r of rows) {
    if (r.n === 0) {
      lines.push(`| ${r.dataset} | ${r.workload} | ${libCell(r)} | failed ${r.failed}× (${r.error}) | | ${r.requests} | ${fmt(r.bytes / 2 ** 20, 2)} | | | | |`);
      continue;
    }
    lines.push(
      `| ${r.dataset} | ${r.workload} | ${libCell(r)} | ${fmt(r.medianMs)} (${fmt(r.minMs)}–${fmt(r.maxMs)}) | ${fmt(r.mbps)} | ${r.requests}${r.heads || r.preflights ? ` (${r.heads ?? 0}, ${r.preflights ?? 0})` : ""} | ${fmt(r.bytes / 2 ** 20, 2)}${r.rereadBytes ? ` (${fmt(r.rereadBytes / 2 ** 20, 2)})` : ""} | ${fmt(r.longTaskMs, 0)} | ${r.vsZarrita ? fmt(r.vsZarrita, 2) + "×" : ""} | ${r.vsZarritaTuned ? fmt(r.vsZarritaTuned, 2) + "×" : ""} |${opt.link ? ` ${r.vsFloor ? fmt(r.vsFloor, 2) + "×" : ""} (${fmt(r.floorMs, 0)}) |` : ""} ${r.allCorrect ? "✓" : "✗"}${r.failed ? ` (${r.failed} failed)` : ""} |`,
    );
  }
  console.log(`\n${lines.join("\n")}\n`);
  for (const p of profiles) {
    console.log(`profile ${p.dataset} ${p.workload} ${p.lib} (${p.ms.toFixed(0)} ms run, ${p.totalMs.toFixed(0)} ms sampled):`);
    for (const t of p.top) console.log(`   ${String(t.ms).padStart(8)} ms ${String(t.pct).padStart(5)}%  ${t.fn}`);
    console.log(`   threads busy in a traced run of ${p.tracedMs.toFixed(0)} ms: ${p.threads.map((t) => `${t.thread} (${t.process}) ${t.busyMs} ms`).join(", ")}`);
  }

  // Decoders: MiB/s of decoded output per method, and decode-only rates of the two libraries
  // (a compressed dataset's pass minus the uncompressed twin's pass).
  const decoders = [];
  const raw = decoderRuns.find((r) => r.dataset === "u16_raw");
  for (const r of decoderRuns) {
    const mib = r.decodedBytes / 2 ** 20;
    const rate = (m) => (m ? mib / (m.ms / 1000) : null);
    const row = { dataset: r.dataset, chunks: r.chunks, storedBytes: r.storedBytes, decodedBytes: r.decodedBytes, passes: {} };
    for (const k of ["shardfetch", "zarrita", "shardfetchDecoder", "decompressionStream", "decompressionStreamConcurrent", "numcodecsZstd", "numcodecsBlosc"]) {
      if (r[k]) {
        row.passes[k] = r[k].all;
        row[`${k}MBps`] = rate(r[k]);
      }
    }
    if (raw && r !== raw) {
      for (const k of ["shardfetch", "zarrita"]) {
        const d = r[k].ms - raw[k].ms;
        row[`${k}DecodeOnlyMBps`] = d > 0 ? mib / (d / 1000) : null;
        row[`${k}DecodeOnlyMs`] = d;
      }
    }
    decoders.push(row);
  }
  if (decoders.length) {
    const f = (x) => (x == null ? "–" : x.toFixed(0));
    console.log("\n| dataset | shardfetch getChunk MiB/s | zarrita get MiB/s | shardfetch decode-only MiB/s (ms) | zarrita decode-only MiB/s (ms) | shardfetch decoder alone MiB/s | DecompressionStream seq / concurrent MiB/s | numcodecs.js zstd / blosc MiB/s |");
    console.log("|---|---|---|---|---|---|---|---|");
    for (const d of decoders) {
      console.log(`| ${d.dataset} | ${f(d.shardfetchMBps)} | ${f(d.zarritaMBps)} | ${f(d.shardfetchDecodeOnlyMBps)} (${f(d.shardfetchDecodeOnlyMs)}) | ${f(d.zarritaDecodeOnlyMBps)} (${f(d.zarritaDecodeOnlyMs)}) | ${f(d.shardfetchDecoderMBps ?? null)} | ${d.decompressionStreamMBps ? `${f(d.decompressionStreamMBps)} / ${f(d.decompressionStreamConcurrentMBps)}` : ""} | ${f(d.numcodecsZstdMBps ?? d.numcodecsBloscMBps ?? null)} |`);
    }
  }

  const result = {
    date: new Date().toISOString(),
    command: `node bench/run.mjs ${process.argv.slice(2).join(" ")}`.trim(),
    durationS: Math.round((Date.now() - t0) / 1000),
    commit: built,
    machine: machine(browserVersion),
    versions: { zarrita: zarritaVersion, pkg: path.relative(repo, pkgDir) || "." },
    method: {
      reps: opt.reps,
      inflightTiles: 16,
      windows: "20 windows of 512×512 read one after another with get(); 3-D: one whole z plane (512×512) each",
      cold: "fresh browser context per run, the library alone on the page: its import (the module's fetch and compile) + open + first inner chunk",
      requests: "GET + HEAD answered by the data server (its request log); CORS preflights counted apart",
      layout:
        opt.layout === "icechunk"
          ? "icechunk: shardfetch reads bench/data-icechunk/<dataset>.icechunk (branch main, the array at path <dataset>, its shards byte for byte); zarrita.js cannot read Icechunk and reads the plain layout (rows' layout)"
          : opt.layout,
      link: opt.link ? `${opt.link.latencyMs} ms per answer, ${opt.link.mbps} Mbit/s shared (tests/server.mjs)` : "loopback",
      protocol: opt.http2 ? "HTTP/2 over TLS (data server)" : "HTTP/1.1 (data server)",
      pageLink: opt.pageLink ? `the page and the libraries: ${opt.pageLink.latencyMs} ms per answer, ${opt.pageLink.mbps} Mbit/s shared` : "loopback",
      ratio: "zarrita median ms / shardfetch median ms (> 1: shardfetch faster)",
    },
    datasets: Object.fromEntries(
      Object.entries(infos).map(([k, v]) => [k, { note: v.note, dtype: v.dtype, shape: v.shape, chunkShape: v.chunkShape, shardShape: v.shardShape, codec: v.codec, decodedBytes: v.decodedBytes, storedBytes: v.storedBytes, innerChunks: v.innerChunks }]),
    ),
    rows,
    samples: samples.map(({ got, want, ...s }) => s),
    profiles,
    decoders,
    errors,
    failures,
  };
  if (opt.save) say(`results: ${path.relative(repo, saveResults(result, { out: opt.out }))}`);

  if (failures.length) {
    console.error(`\n${failures.length} failure(s):\n${failures.join("\n")}`);
    process.exit(1);
  }
}

await main();
