#!/usr/bin/env node
// shardfetch vs h5wasm 0.10.3 on a NetCDF-4 file (issue 35 item 7), in headless Chromium over a
// simulated link. `node bench/hdf5.mjs [options]`:
//
//   --reps N        fresh pages per library (default 3, at least 3)
//   --libs a,b      subset of shardfetch, h5wasm-lazy, h5wasm-whole
//   --var NAME      the variable read (default t2m: one chunk per time step; u10: four tiles)
//   --link MS:MBPS  the link (default 40:200: 40 ms per answer, 200 Mbit/s shared; tests/server.mjs)
//   --pkg DIR       a built shardfetch package instead of pkg/
//   --out FILE      results file (default bench/results/<date>-hdf5.json; never overwritten)
//   --no-save       print only
//
// The file: bench/data-hdf5/climate.nc (about 270 MB, netCDF4-python, time × 721 × 1440 float32,
// zlib + shuffle), written by bench/generate_netcdf.py when missing (in the venv $BENCH_HDF5_VENV,
// default /tmp/venv-hdf5, made from bench/requirements-hdf5.txt), with the checksums of every time
// step (numpy) that the page verifies each library's values against.
//
// Per repetition and library, one fresh browser context (no HTTP cache, nothing compiled):
//   first  import the library, open the variable, read time step 0, draw it (time to first step on screen)
//   step   then time step 5 on the opened variable
//   sweep  then time steps 10–19, one after another, each drawn (an animation)
// Libraries: shardfetch (`openArray(url, { path })`, `get([t, null, null])`); h5wasm-lazy (h5wasm in
// a module worker over Emscripten's FS.createLazyFile); h5wasm-whole (its README's way: fetch the
// file, FS.writeFile, `new File(name, "r")`, `slice`). Page and libraries are served by one local
// server (no link), the data by another (the link; another origin: CORS as in production).
// Requests and bytes come from the data server's request log, never from a library's counters.
// h5wasm 0.10.3 is installed on first use into bench/.build/peers (bench/peers.mjs; $H5WASM_DIR: another).
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

import { startServer } from "../tests/server.mjs";
import { peer } from "./peers.mjs";
import { commit, machine, median, requestSummary, saveResults, williams } from "./results.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "../tests/js/chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const dataDir = path.join(here, "data-hdf5");
const LIBS = ["shardfetch", "h5wasm-lazy", "h5wasm-whole"];
const WORKLOADS = ["first", "step", "sweep"];
const STEP_T = 5;
const SWEEP = { from: 10, count: 10 };
/** Colour scale of each variable (drawing only). */
const RANGES = { t2m: [220, 320], u10: [-25, 25] };
const say = (m) => console.log(`[hdf5] ${m}`);

function parseArgs(argv) {
  const o = { reps: 3, libs: LIBS, variable: "t2m", link: { latencyMs: 40, mbps: 200 }, pkg: null, out: null, save: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i] ?? (() => { throw new Error(`missing value for ${a}`); })();
    if (a === "--reps") o.reps = Number(next());
    else if (a === "--libs") o.libs = next().split(",");
    else if (a === "--var") o.variable = next();
    else if (a === "--link") {
      const [ms, mbps] = next().split(":").map(Number);
      if (!(ms >= 0) || !(mbps > 0)) throw new Error("--link wants MS:MBPS, e.g. 40:200");
      o.link = { latencyMs: ms, mbps };
    } else if (a === "--pkg") o.pkg = path.resolve(next());
    else if (a === "--out") o.out = path.resolve(next());
    else if (a === "--no-save") o.save = false;
    else throw new Error(`unknown argument ${a} (see the header of bench/hdf5.mjs)`);
  }
  if (!Number.isInteger(o.reps) || o.reps < 3) throw new Error("--reps must be an integer >= 3");
  for (const l of o.libs) if (!LIBS.includes(l)) throw new Error(`unknown library ${l}`);
  if (!RANGES[o.variable]) throw new Error(`--var must be one of ${Object.keys(RANGES).join(", ")}`);
  return o;
}

// --- preparation -------------------------------------------------------------------------------

const sh = (cmd, args) => execFileSync(cmd, args, { stdio: "inherit", cwd: repo });

function ensureData() {
  const info = path.join(dataDir, "climate.json");
  if (!fs.existsSync(info)) {
    const venv = process.env.BENCH_HDF5_VENV ?? "/tmp/venv-hdf5";
    const py = path.join(venv, "bin/python");
    if (!fs.existsSync(py)) {
      say(`creating the venv ${venv}`);
      sh("python3", ["-m", "venv", venv]);
    }
    sh(py, ["-m", "pip", "install", "--quiet", "-r", path.join(here, "requirements-hdf5.txt")]);
    say("writing bench/data-hdf5/climate.nc (about a minute)");
    sh(py, [path.join(here, "generate_netcdf.py")]);
  }
  return JSON.parse(fs.readFileSync(info, "utf8"));
}

function h5wasmDir() {
  const dir = process.env.H5WASM_DIR ?? peer("h5wasm", "0.10.3");
  const { version } = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  if (version !== "0.10.3") say(`WARNING: h5wasm ${version} (issue 35 names 0.10.3)`);
  return { dir, version };
}

// --- main --------------------------------------------------------------------------------------

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  // The checkout measured, taken as the run starts (the tree may change while it runs).
  const built = commit();
  const info = ensureData();
  const v = info.variables[opt.variable];
  const pkgDir = opt.pkg ?? path.join(repo, "pkg");
  if (!fs.existsSync(path.join(pkgDir, "index.js"))) throw new Error(`${pkgDir}/index.js missing: build the package first (npm run build)`);
  const h5 = h5wasmDir();
  const stored = (ts) => ts.reduce((a, t) => a + v.chunkRanges[t].reduce((b, [, n]) => b + n, 0), 0);
  const least = {
    first: stored([0]),
    step: stored([STEP_T]),
    sweep: stored(Array.from({ length: SWEEP.count }, (_, k) => SWEEP.from + k)),
  };
  say(`${info.file}: ${(info.bytes / 1e6).toFixed(1)} MB, ${opt.variable} ${v.shape.join("×")} chunks ${v.chunks.join("×")}; h5wasm ${h5.version} from ${h5.dir}`);

  const pageServer = await startServer({ root: { "/": repo, "/h5wasm": h5.dir, "/altpkg": pkgDir } });
  const dataServer = await startServer({ root: dataDir, link: opt.link });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, "--js-flags=--expose-gc"], headless: true });
  // The server stamps requests with its performance.now(); the page marks phases in epoch ms.
  const epochOf = (e) => performance.timeOrigin + e.t;
  const url = `${dataServer.url}/${info.file}`;
  const pageUrl = `${pageServer.url}/bench/hdf5.html?pkg=/altpkg&h5=/h5wasm`;
  const range = RANGES[opt.variable];
  const wantOf = (w) => (w === "first" ? [v.checksums[0]] : w === "step" ? [v.checksums[STEP_T]] : v.checksums.slice(SWEEP.from, SWEEP.from + SWEEP.count));

  const samples = [];
  const failures = [];
  const orders = williams(opt.libs.length);
  let browserVersion;
  try {
    browserVersion = browser.version();
    for (let rep = 0; rep < opt.reps; rep++) {
      for (const lib of orders[rep % orders.length].map((i) => opt.libs[i])) {
        const context = await browser.newContext();
        const page = await context.newPage();
        const pageErrors = [];
        page.on("pageerror", (e) => pageErrors.push(e.message));
        page.on("console", (m) => m.type() === "error" && pageErrors.push(m.text()));
        await page.goto(pageUrl);
        await page.waitForFunction(() => window.__benchReady, null, { timeout: 60_000 });
        for (const workload of WORKLOADS) {
          await page.evaluate(() => window.gc?.());
          await new Promise((r) => setTimeout(r, 200)); // what the last run left in flight lands first
          dataServer.log.length = 0;
          pageServer.log.length = 0;
          const spec = { lib, url, variable: opt.variable, range, t: workload === "step" ? STEP_T : 0, ...SWEEP };
          let r;
          try {
            r = await page.evaluate(([w, s]) => window.bench[w](s), [workload, spec]);
          } catch (e) {
            r = { error: String(e.message ?? e).split("\n")[0].replace(/^page\.evaluate: (Error: )?/, "") };
          }
          const log = [...dataServer.log];
          // The library's own files (served locally, off the link): its code size as loaded.
          const code = pageServer.log.filter((e) => /^\/(altpkg|h5wasm)\//.test(e.path) || e.path === "/bench/hdf5-worker.mjs");
          const sample = { rep, lib, workload, ...requestSummary(log), codeBytes: code.reduce((a, e) => a + e.bytes, 0), ...r };
          if (!r.error) {
            Object.assign(sample, await page.evaluate((want) => window.bench.finish(want), wantOf(workload)));
            if (!sample.ok) failures.push(`${lib} ${workload} rep ${rep}: wrong values (got ${JSON.stringify(sample.got)})`);
          }
          if (r.marks) {
            // Requests and bytes per phase: a request belongs to the phase it arrived in.
            sample.phases = r.marks.slice(1).map(([name, end], k) => {
              const begin = r.marks[k][1];
              const inPhase = log.filter((e) => epochOf(e) >= begin - 1 && (epochOf(e) < end || k === r.marks.length - 2));
              return { phase: name, ms: end - begin, ...requestSummary(inPhase) };
            });
            delete sample.marks;
          }
          samples.push(sample);
          say(`rep ${rep + 1}/${opt.reps} ${lib} ${workload}: ${r.error ? `FAILED: ${r.error}` : `${r.ms.toFixed(0)} ms`}, ${sample.requests} req, ${(sample.bytes / 1e6).toFixed(2)} MB${sample.ok === false ? "  WRONG VALUES" : ""}`);
          if (r.error) {
            if (lib === "shardfetch") failures.push(`${lib} ${workload} rep ${rep}: ${r.error}`);
            break; // the later workloads need the opened file
          }
        }
        if (pageErrors.length) say(`  page errors: ${pageErrors.slice(0, 3).join(" | ")}`);
        await context.close();
      }
    }
  } finally {
    await browser.close();
    await pageServer.close();
    await dataServer.close();
  }

  // --- summary ---------------------------------------------------------------------------------
  const rows = [];
  for (const lib of opt.libs) {
    for (const workload of WORKLOADS) {
      const all = samples.filter((s) => s.lib === lib && s.workload === workload);
      if (!all.length) continue;
      const s = all.filter((x) => !x.error);
      const row = { lib, workload, n: s.length, failed: all.length - s.length, error: all.find((x) => x.error)?.error, leastBytes: least[workload] };
      if (s.length) {
        const ms = s.map((x) => x.ms);
        Object.assign(row, {
          medianMs: median(ms),
          minMs: Math.min(...ms),
          maxMs: Math.max(...ms),
          drawMs: median(s.map((x) => x.drawMs)),
          requests: median(s.map((x) => x.requests)),
          heads: median(s.map((x) => x.heads)),
          preflights: median(s.map((x) => x.preflights)),
          bytes: median(s.map((x) => x.bytes)),
          codeBytes: median(s.map((x) => x.codeBytes)),
          allCorrect: s.every((x) => x.ok),
        });
        if (workload === "first") {
          const names = [...new Set(s.flatMap((x) => x.phases.map((p) => p.phase)))];
          row.phases = names.map((phase) => {
            const ps = s.map((x) => x.phases.find((p) => p.phase === phase)).filter(Boolean);
            return { phase, ms: median(ps.map((p) => p.ms)), requests: median(ps.map((p) => p.requests)), bytes: median(ps.map((p) => p.bytes)) };
          });
        }
      }
      rows.push(row);
    }
  }

  const f = (x, d = 0) => (x == null ? "–" : x.toFixed(d));
  const mb = (b) => (b === 0 ? "0" : b >= 1e6 ? `${f(b / 1e6, 1)} MB` : `${f(b / 1e3, 0)} kB`);
  const lines = [
    `| library (mode) | workload | median ms (min–max) | requests (HEAD, preflights) | moved | chunks' stored bytes | ok |`,
    `|---|---|---:|---:|---:|---:|---|`,
  ];
  for (const r of rows) {
    if (!r.n) {
      lines.push(`| ${r.lib} | ${r.workload} | failed ${r.failed}× (${r.error}) | | | ${mb(r.leastBytes)} | ✗ |`);
      continue;
    }
    lines.push(`| ${r.lib} | ${r.workload} | ${f(r.medianMs)} (${f(r.minMs)}–${f(r.maxMs)}) | ${r.requests}${r.heads || r.preflights ? ` (${r.heads}, ${r.preflights})` : ""} | ${mb(r.bytes)} | ${mb(r.leastBytes)} | ${r.allCorrect ? "✓" : "✗"}${r.failed ? ` (${r.failed} failed)` : ""} |`);
  }
  lines.push("", "Time to the first step, by phase (medians: ms, requests, moved):", "", "| library (mode) | import (code loaded, uncompressed) | open | read step 0 | draw |", "|---|---:|---:|---:|---:|");
  for (const r of rows.filter((x) => x.workload === "first" && x.n)) {
    const cell = (name) => {
      const ps = r.phases.filter((p) => (name === "open" ? ["download", "open", "open (worker)"].includes(p.phase) : p.phase === name));
      if (!ps.length) return "–";
      const ms = ps.reduce((a, p) => a + p.ms, 0);
      const req = ps.reduce((a, p) => a + p.requests, 0);
      const bytes = ps.reduce((a, p) => a + p.bytes, 0);
      return `${f(ms)} ms${req ? `, ${req} req, ${mb(bytes)}` : ""}`;
    };
    lines.push(`| ${r.lib} | ${cell("import")} (${mb(r.codeBytes)}) | ${cell("open")} | ${cell("read")} | ${cell("draw")} |`);
  }
  console.log(`\n${lines.join("\n")}\n`);

  const result = {
    date: new Date().toISOString(),
    command: `node bench/hdf5.mjs ${process.argv.slice(2).join(" ")}`.trim(),
    commit: built,
    durationS: Math.round((Date.now() - t0) / 1000),
    machine: machine(browserVersion),
    versions: {
      h5wasm: h5.version,
      h5wasmFrom: h5.dir,
      shardfetch: JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")).version,
      pkg: path.relative(repo, pkgDir) || ".",
    },
    file: { name: info.file, bytes: info.bytes, writer: info.writer, dims: info.dims, variable: opt.variable, chunks: v.chunks, filters: v.filters },
    method: {
      reps: opt.reps,
      link: `${opt.link.latencyMs} ms per answer, ${opt.link.mbps} Mbit/s shared (tests/server.mjs)`,
      first: "fresh browser context; from the library's import to time step 0 drawn on a canvas",
      step: `time step ${STEP_T} on the opened variable, drawn`,
      sweep: `time steps ${SWEEP.from}–${SWEEP.from + SWEEP.count - 1} one after another, each drawn`,
      requests: "GET + HEAD answered by the data server (its request log); CORS preflights apart; a phase's requests are those that arrived during it",
      codeBytes: "bytes of the library's own files the page loaded (served locally without the link, uncompressed)",
      leastBytes: "the stored (compressed) bytes of the chunks the workload needs (h5py's chunk info)",
    },
    rows,
    samples,
    failures,
  };
  if (opt.save) say(`results: ${path.relative(repo, saveResults(result, { out: opt.out, name: "hdf5", round: true }))}`);

  if (failures.length) {
    console.error(`\n${failures.length} failure(s):\n${failures.join("\n")}`);
    process.exit(1);
  }
}

await main();
