#!/usr/bin/env node
// Soak benchmark (issue 24): a viewer-like session that moves ≥ 10 GiB — pans and zooms over a
// multiscale image, tiles requested and aborted as the view moves — in Node and in headless
// Chromium (with the decoding workers), memory sampled as it runs; and the abort storm (20
// rounds of 1,000 reads on one array, 90 % aborted at random moments). The data is synthetic
// (tests/js/synth.mjs: a sharded uint8 OME-Zarr image, 32768² at level 0, shards 4096², inner
// chunks 512², crc32c), served from another process; bytes moved are the server's count.
//
//   node bench/soak.mjs [--gib 10] [--env node,chromium] [--storm] [--pkg DIR] [--out FILE]
//
// --pkg: another build of the package to measure (an A/B against a build of main), default pkg/.
//
// Prints, per environment: peak, 95th percentile and steady-state memory (median of the last
// quarter of the samples), and the slope of memory against bytes moved over the last three
// quarters (MiB per GiB). Requires pkg/ (npm run build).
import fs from "node:fs";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../tests/server.mjs";
import { commit, machine } from "./results.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "../tests/js/chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const GiB = 2 ** 30;
/** memoryStats() at the end of a session, in a line (builds that have it). */
const memoryLine = (m) =>
  m
    ? `  memoryStats: held ${(m.held / 2 ** 20).toFixed(1)} of ${(m.budget / 2 ** 20).toFixed(0)} MiB (${Object.entries(m.caches).map(([k, v]) => `${k} ${(v / 2 ** 20).toFixed(1)}`).join(", ")}), ${m.evictions} evictions, module memory ${(m.moduleMemory / 2 ** 20).toFixed(0)} MiB, workers ${m.workers.map((w) => (w.memory / 2 ** 20).toFixed(0)).join("/") || "none"} MiB (${m.workersRecycled} replaced)`
    : "  memoryStats: not in this build";
const MiB = 2 ** 20;
const target = Number(opt("gib", "10")) * GiB;
const envs = opt("env", "node,chromium").split(",");
const storm = args.includes("--storm");
const pkgDir = path.resolve(opt("pkg", path.join(repo, "pkg")));
const pkgUrl = pathToFileURL(path.join(pkgDir, "index.js")).href;

/** The synthetic data server, in its own process (its buffers are not the reader's memory). */
async function dataServer(spec) {
  const code = `import { startSynth } from ${JSON.stringify(pathToFileURL(path.join(repo, "tests/js/synth.mjs")).href)};
    const s = await startSynth(${JSON.stringify(spec)}); console.log(s.url.replace(/\\/a\\.zarr$/, ""));`;
  const p = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((ok) => p.stdout.once("data", (d) => ok(String(d).trim())));
  return { url, close: () => p.kill() };
}

function childJson(script, argv) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--expose-gc", path.join(here, script), ...argv], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop())) : reject(new Error(`${script}: exit ${code}`))));
  });
}

/** Peak, steady state (median of the last quarter) and slope (MiB per GiB moved, last three quarters). */
/** Every nth sample, for the record: memory (MiB) against GiB moved. */
function curve(samples, keys, n = 40) {
  const step = Math.max(1, Math.floor(samples.length / n));
  return samples.filter((_, i) => i % step === 0 || i === samples.length - 1).map((s) => [+(s.moved / GiB).toFixed(3), ...keys.map((k) => +(s[k] / MiB).toFixed(1))]);
}

function summary(samples, key) {
  const xs = samples.map((s) => s.moved / GiB);
  const ys = samples.map((s) => s[key] / MiB);
  const from = Math.floor(samples.length / 4);
  const [x, y] = [xs.slice(from), ys.slice(from)];
  const mx = x.reduce((a, b) => a + b, 0) / x.length;
  const my = y.reduce((a, b) => a + b, 0) / y.length;
  const slope = x.reduce((s, xi, i) => s + (xi - mx) * (y[i] - my), 0) / x.reduce((s, xi) => s + (xi - mx) ** 2, 0);
  const last = [...ys.slice(-Math.max(1, Math.floor(ys.length / 4)))].sort((a, b) => a - b);
  const sorted = [...ys].sort((a, b) => a - b);
  return { peak: sorted.at(-1), p95: sorted[Math.floor(sorted.length * 0.95)], steady: last[last.length >> 1], slope, first: ys[0] };
}

/**
 * RSS of the renderers of the browser this process launched (not other browsers on the
 * machine); `anon`: their anonymous and shared-memory pages only — what they allocated, without
 * the browser binary's file pages, which each renderer maps and RSS counts once per process.
 */
function renderersRss(anon = false) {
  const parent = new Map();
  const pids = fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  for (const pid of pids) {
    try {
      parent.set(pid, /PPid:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
    } catch {
      // gone
    }
  }
  const ours = (pid) => {
    for (let p = pid, n = 0; p && p !== "0" && n < 64; p = parent.get(p), n++) if (p === String(process.pid)) return true;
    return false;
  };
  let total = 0;
  for (const pid of pids) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes("--type=renderer") || !cmd.includes(CHROMIUM.split("/").pop()) || !ours(pid)) continue;
      const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
      const kB = (k) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
      total += anon ? kB("RssAnon") + kB("RssShmem") : kB("VmRSS");
    } catch {
      // gone
    }
  }
  return total;
}

// The machine as the run starts (its load then); Chromium's version added when it is launched.
const results = { date: new Date().toISOString(), command: ["node", "bench/soak.mjs", ...args].join(" "), commit: commit(), machine: machine(), target, runs: {} };
const spec = { shape: [32768, 32768], shard: [4096, 4096], chunk: [512, 512], levels: 4 };

if (envs.includes("node")) {
  const data = await dataServer(spec);
  const r = await childJson("soak-node.mjs", [pkgUrl, data.url, String(target)]);
  data.close();
  results.runs.node = { ...r, samples: undefined, rss: summary(r.samples, "rss"), heap: summary(r.samples, "heap"), arrayBuffers: summary(r.samples, "arrayBuffers"), curve: ["GiB", "rss", "heap", "arrayBuffers", curve(r.samples, ["rss", "heap", "arrayBuffers"])] };
  console.log(`node: ${(r.moved / GiB).toFixed(1)} GiB in ${r.seconds.toFixed(0)} s, ${r.reads} tiles (${r.aborted} aborted, ${r.wrong} wrong, ${r.failed} failed)`);
  console.log(memoryLine(r.memory));
  for (const k of ["rss", "heap", "arrayBuffers"]) {
    const s = results.runs.node[k];
    console.log(`  ${k}: first ${s.first.toFixed(0)} MiB, peak ${s.peak.toFixed(0)}, p95 ${s.p95.toFixed(0)}, steady ${s.steady.toFixed(0)}, slope ${s.slope.toFixed(2)} MiB/GiB`);
  }
}

if (envs.includes("chromium")) {
  const data = await dataServer(spec);
  const page = await startServer({ root: { "/": repo, "/pkg": pkgDir } });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, "--js-flags=--expose-gc"], headless: true });
  results.machine.chromium = browser.version();
  const tab = await browser.newPage();
  await tab.goto(`${page.url}/bench/soak.html?server=${encodeURIComponent(data.url)}&target=${target}`);
  const samples = [];
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const s = await tab.evaluate(() => ({ last: window.__soak?.samples.at(-1), result: window.__soak?.result, error: window.__soak?.error }));
    if (s.error) throw new Error(s.error);
    if (s.last) samples.push({ ...s.last, rss: renderersRss(), anon: renderersRss(true) });
    if (s.result) {
      // At the end: what the renderers hold once the page's garbage is collected (the session's
      // tile LRU, the library's cache, the workers' wasm memories), against the transient peaks
      // of ArrayBuffers waiting for a collection.
      const [end, endAnon] = [renderersRss(), renderersRss(true)];
      await tab.evaluate(async () => {
        for (let i = 0; i < 3; i++) {
          globalThis.gc?.();
          await new Promise((r) => setTimeout(r, 300));
        }
      });
      const [afterGc, afterGcAnon] = [renderersRss(), renderersRss(true)];
      results.runs.chromium = { ...s.result, rss: summary(samples, "rss"), anon: summary(samples, "anon"), heap: summary(samples, "heap"), endRss: end / MiB, afterGcRss: afterGc / MiB, endAnon: endAnon / MiB, afterGcAnon: afterGcAnon / MiB, curve: ["GiB", "rss", "heap", curve(samples, ["rss", "heap"])] };
      const r = s.result;
      console.log(`chromium: ${(r.moved / GiB).toFixed(1)} GiB in ${r.seconds.toFixed(0)} s, ${r.reads} tiles (${r.aborted} aborted, ${r.wrong} wrong, ${r.failed} failed)`);
      console.log(memoryLine(r.memory));
      for (const k of ["rss", "anon", "heap"]) {
        const m = results.runs.chromium[k];
        console.log(`  ${k}: first ${m.first.toFixed(0)} MiB, peak ${m.peak.toFixed(0)}, p95 ${m.p95.toFixed(0)}, steady ${m.steady.toFixed(0)}, slope ${m.slope.toFixed(2)} MiB/GiB`);
      }
      console.log(`  rss at the end ${(end / MiB).toFixed(0)} MiB, after the page's gc() ${(afterGc / MiB).toFixed(0)} MiB (anon ${(endAnon / MiB).toFixed(0)}, ${(afterGcAnon / MiB).toFixed(0)})`);
      break;
    }
  }
  await browser.close();
  await page.close();
  data.close();
}

if (storm) {
  const data = await dataServer({ shape: [8192, 8192], shard: [2048, 2048], chunk: [256, 256] });
  const r = await childJson("soak-storm.mjs", [pkgUrl, `${data.url}/a.zarr`]);
  data.close();
  results.runs.storm = r;
  console.log(`abort storm (20 × 1,000 reads, 90 % aborted): RSS round 1 ${r.rounds[0].rss.toFixed(0)} MiB → round 20 ${r.rounds[19].rss.toFixed(0)} MiB; JS heap ${r.rounds[0].heap.toFixed(1)} → ${r.rounds[19].heap.toFixed(1)} MiB; after a warm-up round`);
}

const out = opt("out", path.join(here, "results", `soak-${results.date.slice(0, 10)}.json`));
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify(results, null, 1));
console.log(`saved ${path.relative(repo, out)}`);
