// Requests merged at dispatch (issue 46 item 3), through the built package over the fixture
// server: chunk reads of one shard queued behind `maxInFlight` leave as few requests, each
// read given its own values (checked against the values the fixture's writer read back), and
// an aborted read leaves the others' request alone. Run: node --test tests/js/dispatch.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { startServer } from "../server.mjs";
import { loadManifests } from "./check-fixtures.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const fixturesDir = path.join(repo, "tests/fixtures");
const manifest = await loadManifests(async (rel) => JSON.parse(await fsp.readFile(path.join(fixturesDir, rel), "utf8")));
// int32 90 × 100 written by tensorstore: 12 shards of 32 × 32, 156 inner chunks of 8 × 8
// (256 bytes each), shard indexes at the start.
const c = manifest.cases.find((x) => x.name === "ts_shard_start_nocrc");
const prod = (a) => a.reduce((x, y) => x * y, 1);

let api;
let server;
let expected;

before(async () => {
  api = await import(pathToFileURL(path.join(repo, "pkg/index.js")).href);
  // Its own server (its own origin: `maxInFlight` is per origin), answering after 5 ms so that
  // requests wait for their slot.
  server = await startServer({ root: { "/fixtures": path.join(fixturesDir, "data") }, link: { latencyMs: 5 } });
  const raw = await fsp.readFile(path.join(fixturesDir, c.expected));
  expected = new Int32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
});

after(() => server?.close());

/** Every chunk's coordinates, in C order. */
function grid() {
  const g = c.shape.map((n, k) => Math.ceil(n / c.chunkShape[k]));
  const out = [];
  for (let i = 0; i < g[0]; i++) for (let j = 0; j < g[1]; j++) out.push([i, j]);
  return out;
}

/** Fails unless `res` holds the writer's values of chunk `coords`; the values checked. */
function checkChunk(res, coords) {
  const shape = coords.map((ci, k) => Math.min(c.chunkShape[k], c.shape[k] - ci * c.chunkShape[k]));
  assert.deepEqual(Array.from(res.shape), shape, `chunk [${coords}]: shape`);
  let n = 0;
  for (let y = 0; y < shape[0]; y++) {
    for (let x = 0; x < shape[1]; x++) {
      const want = expected[(coords[0] * c.chunkShape[0] + y) * c.shape[1] + coords[1] * c.chunkShape[1] + x];
      const got = res.data[y * res.stride[0] + x * res.stride[1]];
      if (got !== want) assert.fail(`chunk [${coords}] at (${y}, ${x}): ${got}, the writer read ${want}`);
      n++;
    }
  }
  return n;
}

/** A fetch counting the GETs of shard objects (their ranges kept). */
function counting() {
  const shardGets = [];
  const fetch = (input, init) => {
    const url = typeof input === "string" ? input : input.url;
    if (/\/c\//.test(url) && (init?.method ?? "GET") === "GET") shardGets.push([url.split("/c/")[1], init?.headers?.Range ?? null]);
    return globalThis.fetch(input, init);
  };
  return { fetch, shardGets };
}

/** Each read its own task's call (so none are batched together: only dispatch can merge). */
async function sweep(arr, coordsList, signalOf = () => undefined) {
  const reads = [];
  for (const coords of coordsList) {
    const read = arr.getChunk(coords, { signal: signalOf(coords) });
    // (Settled below; an abort may reject it before the sweep ends.)
    read.catch(() => {});
    reads.push(read);
    await new Promise((r) => setImmediate(r));
  }
  return Promise.allSettled(reads);
}

test("a tiny-chunk sweep behind maxInFlight: queued reads of one shard leave as few requests", async (t) => {
  const cf = counting();
  const arr = await api.openArray(`${server.url}/fixtures/${c.path}`, { fetch: cf.fetch, maxInFlight: 1 });
  const coords = grid();
  const got = await sweep(arr, coords);
  let values = 0;
  got.forEach((r, i) => {
    assert.equal(r.status, "fulfilled", `chunk [${coords[i]}]: ${r.reason}`);
    values += checkChunk(r.value, coords[i]);
  });
  assert.equal(values, prod(c.shape), "every value checked");
  // One request for each shard's index (or its absence).
  const shards = new Set(cf.shardGets.map(([u]) => u)).size;
  const chunkGets = cf.shardGets.length - shards;
  t.diagnostic(`${coords.length} chunks of ${shards} shards: ${chunkGets} chunk requests`);
  // One request per chunk (156) without merging; with it, the first read of each shard's
  // queue leaves alone at most, then the rest together (a shard is 4 KiB, within mergeGap).
  assert.ok(chunkGets <= 3 * shards, `${chunkGets} chunk requests for ${coords.length} chunks: ${JSON.stringify(cf.shardGets)}`);
  assert.equal(arr.stats().requests, cf.shardGets.length + 1, "the library counts a merged request once (+ zarr.json)");
  arr.close();
});

test("an aborted read among merged ones: the others get their values, it rejects", async () => {
  const cf = counting();
  // Chunk requests (not the shards' indexes, their first 256 bytes) held until the aborts are
  // made: no read can have its values before, however slow the machine.
  let release;
  const gate = new Promise((r) => (release = r));
  let held = 0;
  const gated = (input, init) => {
    const range = init?.headers?.Range ?? "";
    if (range === "" || range === "bytes=0-255") return cf.fetch(input, init);
    held++;
    return gate.then(() => cf.fetch(input, init));
  };
  const arr = await api.openArray(`${server.url}/fixtures/${c.path}`, { fetch: gated, maxInFlight: 1 });
  // The chunks of the first shard row; every third one aborted while it waits.
  const coords = grid().filter(([i]) => i < 4);
  const controllers = new Map(coords.map((k, i) => [k, i % 3 === 1 ? new AbortController() : null]));
  const reads = sweep(arr, coords, (k) => controllers.get(k)?.signal);
  for (const t0 = Date.now(); held === 0; await new Promise((r) => setTimeout(r, 2))) {
    assert.ok(Date.now() - t0 < 20_000, "no chunk request left");
  }
  for (const ctl of controllers.values()) ctl?.abort();
  release();
  const got = await reads;
  let checked = 0;
  let aborted = 0;
  got.forEach((r, i) => {
    if (controllers.get(coords[i])) {
      assert.equal(r.status, "rejected", `chunk [${coords[i]}] was aborted`);
      aborted++;
    } else {
      assert.equal(r.status, "fulfilled", `chunk [${coords[i]}]: ${r.reason}`);
      checkChunk(r.value, coords[i]);
      checked++;
    }
  });
  assert.ok(checked > 0 && aborted > 0, `${checked} checked, ${aborted} aborted`);
  arr.close();
});

test("a merged request ends when every read it serves was aborted, not before", async () => {
  // Chunk requests of shard 0/0 are held until released; its index passes.
  const held = [];
  const gated = (input, init) => {
    const url = typeof input === "string" ? input : input.url;
    const range = init?.headers?.Range ?? "";
    if (!url.endsWith("/c/0/0") || range === "bytes=0-255") return globalThis.fetch(input, init);
    return new Promise((resolve, reject) => {
      const signal = init?.signal;
      signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
      held.push({ range, signal, go: () => globalThis.fetch(input, init).then(resolve, reject) });
    });
  };
  const until = async (what, ok) => {
    const deadline = Date.now() + 20_000;
    while (!ok()) {
      if (Date.now() > deadline) assert.fail(`still waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const arr = await api.openArray(`${server.url}/fixtures/${c.path}`, { fetch: gated, maxInFlight: 1 });
  // The 16 chunks of shard 0/0, each read in its own task with its own signal.
  const coords = grid().filter(([i, j]) => i < 4 && j < 4);
  const controllers = coords.map(() => new AbortController());
  const outcome = coords.map(() => null);
  for (const [i, k] of coords.entries()) {
    arr.getChunk(k, { signal: controllers[i].signal }).then(
      (r) => (outcome[i] = checkChunk(r, k) > 0 ? "values" : "empty"),
      (e) => (outcome[i] = e?.code ?? String(e)),
    );
    await new Promise((r) => setImmediate(r));
  }
  // The first chunk request leaves alone (it may serve a few neighbours asked together);
  // answered, the slot goes to the reads still waiting, merged.
  await until("the first chunk request", () => held.length === 1);
  held[0].go();
  await until("the merged request", () => held.length === 2);
  const merged = held[1];
  // What the first answer serves settles (the chunks its range holds, by the shard's index on
  // disk); the others wait for the merged request alone.
  const shard = await fsp.readFile(path.join(fixturesDir, "data", c.path, "c/0/0"));
  const inRange = (range, i) => {
    const [a, b] = range.slice("bytes=".length).split("-").map(Number);
    const [ci, cj] = coords[i];
    const off = Number(shard.readBigUInt64LE((ci * 4 + cj) * 16));
    const len = Number(shard.readBigUInt64LE((ci * 4 + cj) * 16 + 8));
    return off >= a && off + len - 1 <= b;
  };
  await until("the reads the first answer serves", () => coords.every((_, i) => !inRange(held[0].range, i) || outcome[i] !== null));
  const waiting = outcome.flatMap((o, i) => (o === null ? [i] : []));
  assert.ok(waiting.length >= 4, `${waiting.length} reads wait for ${merged.range}`);
  assert.ok(outcome.every((o) => o === null || o === "values"), JSON.stringify(outcome));
  // All but one give up: the request goes on for the last.
  for (const i of waiting.slice(0, -1)) controllers[i].abort();
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(merged.signal?.aborted, false, `one read still waits for ${merged.range}`);
  controllers[waiting.at(-1)].abort();
  await until("the merged request's abort", () => merged.signal?.aborted === true);
  await until("every read settled", () => outcome.every((o) => o !== null));
  for (const i of waiting) assert.equal(outcome[i], "Aborted", `chunk [${coords[i]}]`);
  arr.close();
});
