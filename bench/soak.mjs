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
import http from "node:http";
import os from "node:os";
import { commit, machine, option } from "./results.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "../tests/js/chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const args = process.argv.slice(2);
const GiB = 2 ** 30;
/** memoryStats() at the end of a session, in a line (builds that have it). */
const memoryLine = (m) =>
  m
    ? `  memoryStats: held ${(m.held / 2 ** 20).toFixed(1)} of ${(m.budget / 2 ** 20).toFixed(0)} MiB (${Object.entries(m.caches).map(([k, v]) => `${k} ${(v / 2 ** 20).toFixed(1)}`).join(", ")}), ${m.evictions} evictions, module memory ${(m.moduleMemory / 2 ** 20).toFixed(0)} MiB, workers ${m.workers.map((w) => (w.memory / 2 ** 20).toFixed(0)).join("/") || "none"} MiB (${m.workersRecycled} replaced)`
    : "  memoryStats: not in this build";
const MiB = 2 ** 20;
const target = Number(option("gib", "10")) * GiB;
const envs = option("env", "node,chromium").split(",");
const storm = args.includes("--storm");
const pkgDir = path.resolve(option("pkg", path.join(repo, "pkg")));
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
 * Memory of the renderers of the browser launched with `dir` as its profile (not other
 * browsers on the machine): "rss" as the kernel counts it per process (the Chromium binary's
 * file pages once per renderer: a blank page's three renderers hold ~340 MiB), "anon" their
 * anonymous and shared-memory pages only (what they allocated), "pss" their proportional share
 * (a page shared by n processes counted 1/n in each). Headless Chromium runs three renderers:
 * the browser's own WebUI (`--top-chrome-webui`), the page's (the tab: the page, its workers and
 * their wasm), and a spare one started for the next navigation. `tab*` is the page's alone:
 * the renderer with the most anonymous memory other than the WebUI's, its pid kept in `tab`
 * once chosen (the page has then loaded; the spare stays empty).
 */
function renderers(dir, tab = {}) {
  const out = { rss: 0, anon: 0, pss: 0, tabRss: 0, tabAnon: 0, tabPss: 0 };
  const each = [];
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes("--type=renderer") || !cmd.includes(`--user-data-dir=${dir}`)) continue;
      const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
      const kB = (k) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
      const pss = Number(/Pss:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0) * 1024;
      each.push({ pid, webui: cmd.includes("--top-chrome-webui"), rss: kB("VmRSS"), anon: kB("RssAnon") + kB("RssShmem"), pss });
    } catch {
      // gone
    }
  }
  for (const r of each) for (const k of ["rss", "anon", "pss"]) out[k] += r[k];
  if (tab.pid === undefined) tab.pid = each.filter((r) => !r.webui).sort((a, b) => b.anon - a.anon)[0]?.pid;
  const t = each.find((r) => r.pid === tab.pid);
  if (t) Object.assign(out, { tabRss: t.rss, tabAnon: t.anon, tabPss: t.pss });
  return out;
}

/** Chromium on `url`, headless, with a profile of its own and no DevTools client. */
async function launchBare(url) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "soak-chromium-"));
  const version = await new Promise((ok) => {
    const v = spawn(CHROMIUM, ["--version"], { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    v.stdout.on("data", (d) => (out += d));
    v.on("exit", () => ok(out.trim().split(/\s+/).find((w) => /^\d+\./.test(w)) ?? "unknown"));
    v.on("error", () => ok("unknown"));
  });
  const p = spawn(CHROMIUM, [...CHROMIUM_ARGS, "--headless=new", "--js-flags=--expose-gc", `--user-data-dir=${dir}`, url], { stdio: "ignore" });
  return {
    dir,
    version,
    close: () => {
      p.kill();
      setTimeout(() => fs.rmSync(dir, { recursive: true, force: true }), 1000).unref();
    },
  };
}

/**
 * Files from `roots` (URL prefix → folder, longest first), and the page's reports: `POST
 * /__report` with `{ sample }`, `{ result }`, `{ collected }` or `{ error }`, each told to
 * `on` listeners before it is answered (so the memory is read while the page waits).
 */
async function reportingServer(roots) {
  const types = { ".js": "text/javascript", ".mjs": "text/javascript", ".html": "text/html", ".wasm": "application/wasm", ".json": "application/json" };
  const listeners = [];
  const state = { result: undefined, error: undefined, on: (f) => listeners.push(f) };
  const prefixes = Object.entries(roots).sort((a, b) => b[0].length - a[0].length);
  const server = http.createServer((req, res) => {
    if (req.method === "POST" && req.url === "/__report") {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        const m = JSON.parse(body);
        if (m.result) state.result = m.result;
        if (m.error) state.error = m.error;
        for (const f of listeners) f(m);
        res.end("ok");
      });
      return;
    }
    const u = decodeURIComponent(new URL(req.url, "http://x").pathname);
    const [prefix, dir] = prefixes.find(([p]) => u.startsWith(p));
    const file = path.join(dir, u.slice(prefix.length));
    if (!file.startsWith(dir)) return res.writeHead(403).end();
    fs.readFile(file, (e, d) => {
      if (e) return res.writeHead(404).end();
      res.writeHead(200, { "content-type": types[path.extname(file)] ?? "application/octet-stream" });
      res.end(d);
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  state.url = `http://127.0.0.1:${server.address().port}`;
  state.close = () => new Promise((r) => server.close(r));
  return state;
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
  // The browser runs with no DevTools client attached, as a user's does: Playwright's (or any
  // CDP client's) Network domain keeps a copy of every response body in the renderer (its
  // resource buffer: ~200 MiB of this session's renderer memory, measured), which is the
  // harness's memory, not the page's. The page reports to the page server instead.
  const data = await dataServer(spec);
  const page = await reportingServer({ "/pkg/": pkgDir, "/": repo });
  const blank = await launchBare(`${page.url}/bench/soak-blank.html`);
  await new Promise((r) => setTimeout(r, 3000));
  const base = renderers(blank.dir);
  blank.close();
  const browser = await launchBare(`${page.url}/bench/soak.html?server=${encodeURIComponent(data.url)}&target=${target}&report=1`);
  results.machine.chromium = browser.version;
  const samples = [];
  const tab = {};
  const at = () => renderers(browser.dir, tab);
  let end;
  let afterGc;
  page.on((m) => {
    if (m.sample) samples.push({ ...m.sample, ...at() });
    // At the end: what the renderers hold, then once the page's garbage is collected (the
    // session's tile LRU, the library's cache, the workers' wasm memories), against the
    // transient peaks of ArrayBuffers waiting for a collection.
    if (m.result) end = at();
    if (m.collected) afterGc = at();
  });
  while (!afterGc && !page.error) await new Promise((r) => setTimeout(r, 200));
  browser.close();
  await page.close();
  data.close();
  if (page.error) throw new Error(page.error);
  const r = page.result;
  const mib = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v / MiB]));
  results.runs.chromium = { ...r, blank: mib(base), rss: summary(samples, "rss"), anon: summary(samples, "anon"), pss: summary(samples, "pss"), tabRss: summary(samples, "tabRss"), tabAnon: summary(samples, "tabAnon"), tabPss: summary(samples, "tabPss"), heap: summary(samples, "heap"), end: mib(end), afterGc: mib(afterGc), curve: ["GiB", "rss", "anon", "pss", "tabRss", "tabAnon", "heap", curve(samples, ["rss", "anon", "pss", "tabRss", "tabAnon", "heap"])] };
  console.log(`chromium ${browser.version}: ${(r.moved / GiB).toFixed(1)} GiB in ${r.seconds.toFixed(0)} s, ${r.reads} tiles (${r.aborted} aborted, ${r.wrong} wrong, ${r.failed} failed)`);
  console.log(memoryLine(r.memory));
  console.log(`  a blank page in the same browser: rss ${(base.rss / MiB).toFixed(0)} MiB, anon ${(base.anon / MiB).toFixed(0)}, pss ${(base.pss / MiB).toFixed(0)}; its own renderer rss ${(base.tabRss / MiB).toFixed(0)}, anon ${(base.tabAnon / MiB).toFixed(0)}`);
  for (const k of ["rss", "anon", "pss", "tabRss", "tabAnon", "tabPss", "heap"]) {
    const m = results.runs.chromium[k];
    console.log(`  ${k}: first ${m.first.toFixed(0)} MiB, peak ${m.peak.toFixed(0)}, p95 ${m.p95.toFixed(0)}, steady ${m.steady.toFixed(0)}, slope ${m.slope.toFixed(2)} MiB/GiB`);
  }
  console.log(`  at the end rss ${(end.rss / MiB).toFixed(0)} MiB (anon ${(end.anon / MiB).toFixed(0)}, pss ${(end.pss / MiB).toFixed(0)}); after the page's gc() rss ${(afterGc.rss / MiB).toFixed(0)} (anon ${(afterGc.anon / MiB).toFixed(0)}, pss ${(afterGc.pss / MiB).toFixed(0)}); the page's renderer at the end ${(end.tabRss / MiB).toFixed(0)} MiB rss, after gc() ${(afterGc.tabRss / MiB).toFixed(0)}`);
}

if (storm) {
  const data = await dataServer({ shape: [8192, 8192], shard: [2048, 2048], chunk: [256, 256] });
  const r = await childJson("soak-storm.mjs", [pkgUrl, `${data.url}/a.zarr`]);
  data.close();
  results.runs.storm = r;
  console.log(`abort storm (20 × 1,000 reads, 90 % aborted): RSS round 1 ${r.rounds[0].rss.toFixed(0)} MiB → round 20 ${r.rounds[19].rss.toFixed(0)} MiB; JS heap ${r.rounds[0].heap.toFixed(1)} → ${r.rounds[19].heap.toFixed(1)} MiB; after a warm-up round`);
}

const out = option("out", path.join(here, "results", `soak-${results.date.slice(0, 10)}.json`));
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify(results, null, 1));
console.log(`saved ${path.relative(repo, out)}`);
