// The page's memory budget (issue 46 item 4), through the built package (pkg/): every array's
// caches share one budget (`initialize({ memoryBudget })`), least recently used out across
// arrays, each array's `cacheBytes` / `chunkCacheBytes` still a cap inside it; decoding workers
// whose memory grew past a bound are replaced; `memoryStats()` reports it. Values are checked
// against the writers' (the fixtures' expected arrays). This file runs in its own process: the
// budget is the process's. Run: node --test tests/js/budget.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { chromium } from "playwright-core";

import { startServer } from "../server.mjs";
import { loadManifests } from "./check-fixtures.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const fixturesDir = path.join(repo, "tests/fixtures");
const pkgEntry = path.join(repo, "pkg/index.js");
const manifest = await loadManifests(async (rel) => JSON.parse(await fsp.readFile(path.join(fixturesDir, rel), "utf8")));
const ELEMENT_SIZE = { uint16: 2, int64: 8, float32: 4, uint32: 4 };
/** Four sharded arrays written by zarr-python, of four dtypes. */
const CASES = ["zp_shard_gzip_end", "zp_shard_i64_start", "zp_shard_f32_nan", "zp_1d_u32"].map((n) => manifest.cases.find((c) => c.name === n));

let api;
let server;
let fx;
const expected = new Map();

before(async () => {
  if (!fs.existsSync(pkgEntry)) throw new Error(`${pkgEntry} missing: run \`npm run build\` first`);
  api = await import(pathToFileURL(pkgEntry).href);
  server = await startServer({ root: { "/fixtures": path.join(fixturesDir, "data"), "/": repo } });
  fx = `${server.url}/fixtures`;
  for (const c of CASES) expected.set(c.name, new Uint8Array(await fsp.readFile(path.join(fixturesDir, c.expected))));
});

after(async () => {
  await server?.close();
});

const bytesOf = (d) => new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
const prod = (a) => a.reduce((x, y) => x * y, 1);

/** Read the whole array; its bytes must be the writer's. Returns the number of checks made. */
async function readAll(arr, c) {
  const r = await arr.get(c.shape.map(() => null));
  assert.deepEqual(bytesOf(r.data), expected.get(c.name), `${c.name}: values`);
  return 1;
}

/** Every chunk's grid coordinates. */
function chunkGrid(c) {
  const n = c.shape.map((s, k) => Math.ceil(s / c.chunkShape[k]));
  const out = [];
  const idx = n.map(() => 0);
  for (let i = 0; i < prod(n); i++) {
    out.push([...idx]);
    for (let k = n.length - 1; k >= 0; k--) {
      if (++idx[k] < n[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

/** getChunk(coords) must hold the writer's values (edge chunks clipped, stride honoured). */
async function checkChunk(arr, c, coords) {
  const r = await arr.getChunk(coords);
  const es = ELEMENT_SIZE[c.dtype];
  const exp = expected.get(c.name);
  const src = bytesOf(r.data);
  const astride = c.shape.map((_, k) => prod(c.shape.slice(k + 1)));
  const idx = r.shape.map(() => 0);
  for (let i = 0; i < prod(r.shape); i++) {
    let g = 0;
    let e = 0;
    for (let k = 0; k < idx.length; k++) {
      g += idx[k] * r.stride[k];
      e += (coords[k] * c.chunkShape[k] + idx[k]) * astride[k];
    }
    for (let b = 0; b < es; b++) {
      if (src[g * es + b] !== exp[e * es + b]) assert.fail(`${c.name} chunk ${coords} element ${idx}: byte ${b} differs`);
    }
    for (let k = idx.length - 1; k >= 0; k--) {
      if (++idx[k] < r.shape[k]) break;
      idx[k] = 0;
    }
  }
  return 1;
}

test("memoryStats() has its shape; initialize refuses a budget that is not bytes", async () => {
  await api.initialize();
  const m = api.memoryStats();
  assert.deepEqual(Object.keys(m).sort(), ["budget", "caches", "evictions", "held", "moduleMemory", "workerMemoryBytes", "workers", "workersRecycled"]);
  assert.deepEqual(Object.keys(m.caches).sort(), ["chunks", "heldReads", "indexes", "objects"]);
  assert.equal(m.budget, 256 * 2 ** 20, "the default budget");
  assert.equal(m.workerMemoryBytes, 64 * 2 ** 20, "the default worker bound");
  assert.equal(m.held, m.caches.indexes + m.caches.heldReads + m.caches.objects + m.caches.chunks);
  assert.ok(m.moduleMemory > 0, "the module's memory on this thread");
  assert.ok(Array.isArray(m.workers));
  for (const bad of [-1, Number.NaN, "1"]) {
    await assert.rejects(api.initialize({ memoryBudget: bad }), (e) => e instanceof api.ShardfetchError && e.code === "InvalidSelection");
  }
  assert.equal(api.memoryStats().budget, 256 * 2 ** 20, "unchanged by a refused value");
});

test("one budget for every array's module caches: least recently used out across arrays, total within it, values right", async () => {
  let checks = 0;
  // What each array's cache holds after a whole read, under a budget that does not bind.
  await api.initialize({ memoryBudget: 256 * 2 ** 20 });
  const alone = [];
  for (const c of CASES) {
    const arr = await api.openArray(`${fx}/${c.path}`, { workers: false });
    checks += await readAll(arr, c);
    alone.push(arr.stats().cachedBytes);
    arr.close();
  }
  const sum = alone.reduce((a, b) => a + b, 0);
  assert.ok(alone.every((b) => b > 0), `each array caches something: ${alone}`);
  assert.equal(api.memoryStats().held, 0, "closed arrays give their bytes back");
  // A budget under what the four hold together (but above any one), each array's cacheBytes above the budget.
  const budget = Math.max(Math.floor(sum * 0.6), ...alone);
  await api.initialize({ memoryBudget: budget });
  const before = api.memoryStats().evictions;
  const arrays = [];
  for (const c of CASES) {
    const arr = await api.openArray(`${fx}/${c.path}`, { workers: false, cacheBytes: 4 * budget });
    checks += await readAll(arr, c);
    arrays.push(arr);
    const m = api.memoryStats();
    assert.ok(m.held <= budget, `${m.held} bytes held, budget ${budget}`);
  }
  const m = api.memoryStats();
  console.log(`# module caches: ${alone.join(" + ")} = ${sum} bytes alone; budget ${budget}; held ${m.held} (${JSON.stringify(m.caches)}), ${m.evictions - before} evictions; per array ${arrays.map((a) => a.stats().cachedBytes).join(", ")}`);
  assert.ok(m.evictions > before, "evictions happened");
  assert.equal(m.held, arrays.reduce((a, arr) => a + arr.stats().cachedBytes, 0), "memoryStats counts every array's cache");
  assert.equal(m.held, m.caches.indexes + m.caches.heldReads + m.caches.objects);
  // The first arrays read lost entries to the later ones (least recently used, page-wide).
  const first = arrays[0].stats();
  assert.ok(first.evictions > 0 && first.cachedBytes < alone[0], `the first array evicted for the others: ${JSON.stringify(first)}`);
  // Read again, it fetches what it lost, and its values are still the writer's.
  const fetched = first.indexFetches;
  checks += await readAll(arrays[0], CASES[0]);
  assert.ok(arrays[0].stats().indexFetches > fetched, "its evicted indexes were fetched again");
  assert.ok(api.memoryStats().held <= budget);
  // A smaller budget evicts at once.
  await api.initialize({ memoryBudget: Math.floor(budget / 4) });
  assert.ok(api.memoryStats().held <= Math.floor(budget / 4), JSON.stringify(api.memoryStats()));
  for (const a of arrays) a.close();
  assert.equal(api.memoryStats().held, 0);
  assert.equal(checks, 2 * CASES.length + 1);
});

test("each array's cacheBytes stays a cap inside the budget", async () => {
  await api.initialize({ memoryBudget: 256 * 2 ** 20 });
  const c = CASES[0];
  const big = await api.openArray(`${fx}/${c.path}`, { workers: false });
  await readAll(big, c);
  const alone = big.stats().cachedBytes;
  big.close();
  const cap = Math.floor(alone / 2);
  const arr = await api.openArray(`${fx}/${c.path}`, { workers: false, cacheBytes: cap });
  await readAll(arr, c);
  await readAll(arr, c);
  const st = arr.stats();
  assert.ok(st.cachedBytes <= cap && st.evictions > 0, `cap ${cap}: ${JSON.stringify(st)}`);
  arr.close();
});

test("decoded chunks (chunkCacheBytes) share the budget across arrays, each array's chunkCacheBytes a cap", async () => {
  let checks = 0;
  // The four arrays' chunks, decoded: more than the budget; each array's cap above it.
  const sizes = CASES.map((c) => prod(c.chunkShape) * ELEMENT_SIZE[c.dtype] * chunkGrid(c).length);
  const budget = Math.floor(sizes.reduce((a, b) => a + b, 0) / 3);
  await api.initialize({ memoryBudget: budget });
  const before = api.memoryStats().evictions;
  const arrays = [];
  for (const c of CASES) {
    const arr = await api.openArray(`${fx}/${c.path}`, { workers: false, chunkCacheBytes: 4 * budget });
    arrays.push(arr);
    for (const coords of chunkGrid(c)) {
      checks += await checkChunk(arr, c, coords);
      const m = api.memoryStats();
      assert.ok(m.held <= budget, `${m.held} bytes held (${JSON.stringify(m.caches)}), budget ${budget}`);
    }
  }
  const m = api.memoryStats();
  console.log(`# decoded chunks: ${sizes.join(" + ")} bytes read, budget ${budget}; held ${m.held} (${JSON.stringify(m.caches)}), ${m.evictions - before} evictions`);
  assert.ok(m.caches.chunks > 0 && m.evictions > before, JSON.stringify(m));
  // The first array's chunks went first: read again, they are read (not cached), and right.
  const hits = arrays[0].stats().chunkCacheHits;
  for (const coords of chunkGrid(CASES[0]).slice(0, 2)) checks += await checkChunk(arrays[0], CASES[0], coords);
  assert.equal(arrays[0].stats().chunkCacheHits, hits, "evicted for the other arrays");
  // The last array's last chunk is still kept.
  const last = chunkGrid(CASES[3]).at(-1);
  const lastHits = arrays[3].stats().chunkCacheHits;
  checks += await checkChunk(arrays[3], CASES[3], last);
  assert.equal(arrays[3].stats().chunkCacheHits, lastHits + 1);
  for (const a of arrays) a.close();
  assert.equal(api.memoryStats().caches.chunks, 0, "closed arrays drop their chunks");
  // chunkCacheBytes is a cap: two chunks' worth kept at most.
  await api.initialize({ memoryBudget: 256 * 2 ** 20 });
  const c = CASES[0];
  const one = prod(c.chunkShape) * ELEMENT_SIZE[c.dtype];
  const arr = await api.openArray(`${fx}/${c.path}`, { workers: false, chunkCacheBytes: 2 * one });
  for (const coords of chunkGrid(c)) checks += await checkChunk(arr, c, coords);
  assert.ok(api.memoryStats().caches.chunks <= 2 * one, JSON.stringify(api.memoryStats().caches));
  arr.close();
  assert.ok(checks > 2 * CASES.length, `${checks} checks`);
});

test("a decoding worker whose memory grew past workerMemoryBytes is replaced once idle; values stay right", async () => {
  // Every worker's memory is past a 1-byte bound: each is replaced after its first answer.
  await api.initialize({ memoryBudget: 256 * 2 ** 20, workerMemoryBytes: 1 });
  const c = CASES[0];
  const arr = await api.openArray(`${fx}/${c.path}`, { workers: 2 });
  let checks = 0;
  for (let k = 0; k < 200 && (arr.stats().workerJobs === 0 || api.memoryStats().workersRecycled < 2); k++) {
    checks += await readAll(arr, c);
    await new Promise((res) => setTimeout(res, 20));
  }
  const m = api.memoryStats();
  console.log(`# workers: ${arr.stats().workerJobs} chunks decoded, ${m.workersRecycled} replaced, memory ${JSON.stringify(m.workers)}`);
  assert.ok(arr.stats().workerJobs > 0, "workers decoded");
  assert.ok(m.workersRecycled >= 2, JSON.stringify(m));
  assert.equal(m.workerMemoryBytes, 1);
  assert.ok(m.workers.every((w) => typeof w.memory === "number" && typeof w.jobs === "number"), JSON.stringify(m.workers));
  // With the default bound, a worker that decoded is kept and reports its memory.
  await api.initialize({ workerMemoryBytes: 64 * 2 ** 20 });
  const recycled = api.memoryStats().workersRecycled;
  const jobs = arr.stats().workerJobs;
  for (let k = 0; k < 200 && arr.stats().workerJobs === jobs; k++) {
    checks += await readAll(arr, c);
    await new Promise((res) => setTimeout(res, 20));
  }
  for (let k = 0; k < 5; k++) checks += await readAll(arr, c);
  const after = api.memoryStats();
  console.log(`# workers at the default bound: ${JSON.stringify(after.workers)}, ${after.workersRecycled - recycled} replaced`);
  assert.ok(arr.stats().workerJobs > jobs);
  assert.ok(after.workers.some((w) => w.memory > 0), JSON.stringify(after.workers));
  assert.ok(after.workersRecycled <= recycled + 2, `at most the workers replaced as the bound changed: ${after.workersRecycled - recycled}`);
  arr.close();
  assert.ok(checks > 2);
});

test("workers replaced between a read taking the pool and handing it chunks: every read settles with its values", { timeout: 240_000 }, async () => {
  // A 1-byte bound replaces each worker after every answer, so reads under way often find no
  // worker ready when their chunks arrive (a read hung there once: no worker ready, its chunks
  // dropped).
  await api.initialize({ memoryBudget: 256 * 2 ** 20, workerMemoryBytes: 1 });
  const arrays = await Promise.all(CASES.map((c) => api.openArray(`${fx}/${c.path}`, { workers: 2 })));
  let checks = 0;
  for (let round = 0; round < 25; round++) {
    const counts = await Promise.all(arrays.map((a, k) => readAll(a, CASES[k])));
    checks += counts.reduce((x, y) => x + y, 0);
  }
  const m = api.memoryStats();
  console.log(`# racing replacements: ${checks} checks, ${m.workersRecycled} workers replaced, ${arrays.map((a) => a.stats().workerJobs).join(" + ")} chunks in workers`);
  assert.ok(arrays.some((a) => a.stats().workerJobs > 0), "workers decoded");
  assert.ok(m.workersRecycled >= 4, JSON.stringify(m));
  for (const a of arrays) a.close();
  await api.initialize({ workerMemoryBytes: 64 * 2 ** 20 });
});

test("Chromium: Web Workers past workerMemoryBytes are replaced, the budget holds across arrays, memoryStats reports both; values right", async () => {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  try {
    const tab = await browser.newPage();
    await tab.goto(`${server.url}/tests/js/blank.html`);
    const c = CASES[0];
    const r = await tab.evaluate(
      async ({ url, others }) => {
        const api = await import("/pkg/index.js");
        await api.initialize({ workerMemoryBytes: 1 });
        const arr = await api.openArray(url, { workers: 2 });
        const reads = [];
        for (let k = 0; k < 200 && (arr.stats().workerJobs === 0 || api.memoryStats().workersRecycled < 2); k++) {
          const got = await arr.get(arr.shape.map(() => null));
          reads.push(Array.from(new Uint8Array(got.data.buffer, got.data.byteOffset, got.data.byteLength)));
          await new Promise((res) => setTimeout(res, 20));
        }
        const workers = api.memoryStats();
        // The budget across arrays, in the page: half of what the four arrays hold alone.
        const alone = [];
        for (const u of [url, ...others]) {
          const a = await api.openArray(u, { workers: false });
          await a.get(a.shape.map(() => null));
          alone.push(a.stats().cachedBytes);
          a.close();
        }
        const budget = Math.max(Math.floor(alone.reduce((x, y) => x + y, 0) * 0.6), ...alone);
        await api.initialize({ memoryBudget: budget });
        const held = [];
        for (const u of [url, ...others]) {
          const a = await api.openArray(u, { workers: false });
          await a.get(a.shape.map(() => null));
          held.push(api.memoryStats().held);
        }
        return { reads, workers, workerJobs: arr.stats().workerJobs, budget, held, evictions: api.memoryStats().evictions };
      },
      { url: `${fx}/${c.path}`, others: CASES.slice(1).map((o) => `${fx}/${o.path}`) },
    );
    assert.ok(r.reads.length > 0);
    for (const bytes of r.reads) assert.deepEqual(Uint8Array.from(bytes), expected.get(c.name), `${c.name}: values`);
    assert.ok(r.workerJobs > 0, "Web Workers decoded");
    assert.ok(r.workers.workersRecycled >= 2, JSON.stringify(r.workers));
    assert.ok(r.workers.moduleMemory > 0 && r.workers.workers.length > 0, JSON.stringify(r.workers));
    assert.ok(r.held.every((h) => h <= r.budget), `held ${r.held}, budget ${r.budget}`);
    assert.ok(r.evictions > 0);
    console.log(`# Chromium: ${r.workerJobs} chunks decoded in Web Workers, ${r.workers.workersRecycled} replaced; held ${r.held.join(", ")} ≤ ${r.budget}, ${r.evictions} evictions`);
  } finally {
    await browser.close();
  }
});
