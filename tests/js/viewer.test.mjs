// The demo viewer (www/) in headless Chromium: what is on screen is compared with values written
// by zarr-python (the sample's probes.json, the fixtures' expected/*.bin), and the requests the
// data server sees are compared with the chunks the visible screen needs (shard indexes read
// from disk). The page and the data are on two origins, so CORS is exercised throughout.
// Run: node --test tests/js/viewer.test.mjs (needs `npm run build`).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

import { startServer } from "../server.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";
import { decodePng } from "./png.mjs";
import { readMeta, shardingOf, readShardIndex, chunkKey } from "./zarr-disk.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const sampleDir = path.join(repo, "www/sample");
const sample = path.join(sampleDir, "cells.ome.zarr");
const fixturesDir = path.join(repo, "tests/fixtures");
const ARGS = [
  ...CHROMIUM_ARGS,
  "--force-color-profile=srgb", // screenshot pixels = canvas pixels
];
const VIEWPORT = { width: 1200, height: 800 };
const BACKGROUND = [0x10, 0x11, 0x14]; // the view's background (www/viewer.js)

const tmpRoot = path.join(repo, "tests/.tmp");
fs.mkdirSync(tmpRoot, { recursive: true });
const tmpDir = fs.mkdtempSync(path.join(tmpRoot, "viewer-"));

let pageServer;
let dataServer;
let browser;
let probes;

before(async () => {
  if (!fs.existsSync(path.join(repo, "pkg/index.js"))) throw new Error("pkg/index.js missing: run `npm run build` first");
  probes = JSON.parse(fs.readFileSync(path.join(sampleDir, "probes.json"), "utf8"));
  pageServer = await startServer({ root: { "/": repo } });
  dataServer = await startServer({
    root: { "/sample": sampleDir, "/fixtures": path.join(fixturesDir, "data"), "/tmp": tmpDir },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
});

after(async () => {
  await browser?.close();
  await pageServer?.close();
  await dataServer?.close();
  fs.rmSync(tmpDir, { recursive: true, force: true });
});

// --- helpers ------------------------------------------------------------------------------------

/** Open the viewer with query parameters; resolves once the dataset opened (or failed). */
async function openViewer(query, route) {
  const page = await browser.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1 });
  const logs = [];
  page.on("console", (m) => {
    if (m.type() === "error") logs.push(`console.error: ${m.text()}`);
  });
  page.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
  page.logs = logs;
  if (route) await route(page);
  await page.goto(`${pageServer.url}/www/?${new URLSearchParams(query)}`);
  await page.waitForFunction(() => ["ready", "error"].includes(window.viewerApp?.state), null, { timeout: 60_000 });
  return page;
}

const idle = (page) => page.evaluate(() => window.viewerApp.viewer.whenIdle());

/** Canvas size, the view (level-0 voxel units) and the overlay's box, in canvas CSS pixels. */
function geometry(page) {
  return page.evaluate(() => {
    const v = window.viewerApp.viewer;
    const c = v.canvas.getBoundingClientRect();
    const o = document.getElementById("overlay").getBoundingClientRect();
    return {
      W: v.W,
      H: v.H,
      rect: { x: c.x, y: c.y, width: c.width, height: c.height },
      overlay: { x0: o.x - c.x, y0: o.y - c.y, x1: o.right - c.x, y1: o.bottom - c.y },
      view: v.view(),
      level: v.level(),
      colour: { name: v.colouring.name, lo: v.colouring.lo, hi: v.colouring.hi },
    };
  });
}

/** Screenshot of the canvas only, decoded. */
async function shot(page, geo) {
  return decodePng(await page.screenshot({ clip: geo.rect }));
}

/**
 * The canvas pixel at the centre of a voxel: `x`, `y` are voxel indices of a level whose voxels
 * are `f` level-0 voxels wide. Null when off screen or under the overlay.
 */
function screenPixel(geo, x, y, f = 1) {
  const { cx, cy, zoom } = geo.view;
  const sx = Math.floor(((x + 0.5) * f - cx) * zoom + geo.W / 2);
  const sy = Math.floor(((y + 0.5) * f - cy) * zoom + geo.H / 2);
  if (sx < 0 || sy < 0 || sx >= geo.W || sy >= geo.H) return null;
  const o = geo.overlay;
  if (sx >= o.x0 - 1 && sx <= o.x1 + 1 && sy >= o.y0 - 1 && sy <= o.y1 + 1) return null;
  return [sx, sy];
}

const grey = (v, lo, hi) => Math.round(Math.min(1, Math.max(0, (v - lo) / (hi - lo))) * 255);

/**
 * Asserts that each on-screen pixel (x, y) of a `width` × `height` grid, every `step`th, shows
 * the grey `greyAt(x, y)`; returns how many were checked.
 */
function checkGreys(img, geo, [width, height, step = 1], greyAt, what) {
  let n = 0;
  for (let y = 0; y < height; y += step) {
    for (let x = 0; x < width; x += step) {
      const p = screenPixel(geo, x, y);
      if (!p) continue;
      const g = greyAt(x, y);
      assertColour(img.pixel(...p), [g, g, g], `${what} (x ${x}, y ${y})`);
      n++;
    }
  }
  return n;
}

function assertColour(actual, expected, what) {
  const ok = [0, 1, 2].every((i) => Math.abs(actual[i] - expected[i]) <= 1);
  assert.ok(ok, `${what}: screen [${actual.slice(0, 3)}], expected [${expected}]`);
}

/** OME scale factors of the sample's levels relative to level 0, from zarr.json on disk. */
function sampleFactors() {
  const ms = readMeta(sample).attributes.ome.multiscales[0];
  const s0 = ms.datasets[0].coordinateTransformations[0].scale;
  return ms.datasets.map((d) => d.coordinateTransformations[0].scale.map((s, k) => s / s0[k]));
}

/**
 * The inner chunks of sample level `level` that intersect the screen for a view (level-0 voxel
 * units, plane z), with the (shard path, byte range) each is read from, from the files on disk.
 */
function visibleRequests(level, geo, z0) {
  const dir = path.join(sample, String(level));
  const meta = readMeta(dir);
  const sh = shardingOf(meta);
  const f = sampleFactors()[level];
  const { cx, cy, zoom } = geo.view;
  const span = (c, half, fk, n, inner) => {
    const i0 = Math.max(0, Math.floor((c - half) / fk));
    const i1 = Math.min(n, Math.ceil((c + half) / fk));
    return [Math.floor(i0 / inner), Math.ceil(i1 / inner)];
  };
  const [x0, x1] = span(cx, geo.W / 2 / zoom, f[2], meta.shape[2], sh.innerShape[2]);
  const [y0, y1] = span(cy, geo.H / 2 / zoom, f[1], meta.shape[1], sh.innerShape[1]);
  const z = Math.min(Math.floor((z0 + 0.5) / f[0]), meta.shape[0] - 1);
  const cz = Math.floor(z / sh.innerShape[0]);
  const chunks = new Map(); // "path|range" → chunk coords
  const shards = new Set();
  const indexCache = new Map();
  for (let cyy = y0; cyy < y1; cyy++) {
    for (let cxx = x0; cxx < x1; cxx++) {
      const c = [cz, cyy, cxx];
      const shard = c.map((v, k) => Math.floor(v / sh.perShard[k]));
      const key = chunkKey(meta, shard);
      const file = path.join(dir, key);
      if (!indexCache.has(file)) indexCache.set(file, readShardIndex(file, sh));
      const local = c.map((v, k) => v - shard[k] * sh.perShard[k]);
      const i = (local[0] * sh.perShard[1] + local[1]) * sh.perShard[2] + local[2];
      const e = indexCache.get(file).entries[i];
      const p = `/sample/cells.ome.zarr/${level}/${key}`;
      shards.add(p);
      if (e.missing) continue; // an empty inner chunk costs no request
      chunks.set(`${p}|bytes=${e.offset}-${e.offset + e.nbytes - 1n}`, c);
    }
  }
  return { chunks, shards, indexRange: `bytes=-${sh.indexSize}` };
}

/** The data server's log of the sample, split into index and chunk requests per level. */
function sampleLog() {
  const out = { meta: [], index: [], chunks: [] };
  for (const e of dataServer.log) {
    if (e.method !== "GET" || !e.path.startsWith("/sample/cells.ome.zarr")) continue;
    if (e.range === null) out.meta.push(e);
    else if (e.range.startsWith("bytes=-")) out.index.push(e);
    else out.chunks.push({ ...e, key: `${e.path}|${e.range}`, level: Number(e.path.split("/")[3]) });
  }
  return out;
}

/** Diagnostics of merged requests, reported by the test that collects them. */
const gapBytes = [];

/** "path|bytes=a-b" → { path, a, b } (inclusive, BigInt). */
function span(key) {
  const [p, r] = key.split("|");
  const [a, b] = r.slice("bytes=".length).split("-").map(BigInt);
  return { path: p, a, b };
}

/**
 * Which of `chunkKeys` the logged requests cover, and how many times each: requests of
 * chunks wanted together are merged, so one request may cover several chunks.
 */
function coverage(requests, chunkKeys) {
  const count = new Map();
  for (const k of chunkKeys) {
    const c = span(k);
    const n = requests.filter((e) => {
      const r = span(e.key);
      return r.path === c.path && r.a <= c.a && c.b <= r.b;
    }).length;
    if (n > 0) count.set(k, n);
  }
  return count;
}

/**
 * Every request serves at least one of `chunkKeys`, none is sent twice, and there are no more
 * requests than wanted chunks (merging only removes some). The bytes of merged requests that no
 * wanted chunk needed (gaps below mergeGap, a request's worth of bytes) are reported.
 */
function assertRequestsServe(requests, chunkKeys, what) {
  const cov = coverage(requests, chunkKeys);
  assertNoDuplicates(requests, what);
  assert.ok(requests.length <= cov.size, `${what}: ${requests.length} requests for ${cov.size} chunks`);
  const len = (k) => Number(span(k).b - span(k).a + 1n);
  const wanted = [...cov.keys()].reduce((s, k) => s + len(k), 0);
  const sent = requests.reduce((s, e) => s + len(e.key), 0);
  gapBytes.push(`${what}: ${requests.length} requests for ${cov.size} chunks, ${sent - wanted} gap bytes for ${wanted} wanted`);
  for (const e of requests) {
    const r = span(e.key);
    const serves = chunkKeys.some((k) => {
      const c = span(k);
      return c.path === r.path && r.a <= c.a && c.b <= r.b;
    });
    assert.ok(serves, `${what}: request ${e.key} serves no wanted chunk`);
  }
  return cov;
}

function assertNoDuplicates(list, what) {
  const seen = new Set();
  for (const e of list) {
    const k = `${e.path}|${e.range}`;
    assert.ok(!seen.has(k), `${what} requested twice: ${k}`);
    seen.add(k);
  }
}

const SAMPLE = () => `${dataServer.url}/sample/cells.ome.zarr`;

// --- the sample ---------------------------------------------------------------------------------

test("sample: screen pixels match zarr-python's values at level 0 and level 1", async (t) => {
  const lo = 0;
  const hi = 4095;
  // level 0, 2 screen pixels per voxel, plane z = 5
  let page = await openViewer({ url: SAMPLE(), cx: 384, cy: 300, zoom: 2, at: "z:5", lo, hi, cmap: "grey" });
  try {
    assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
    await idle(page);
    let geo = await geometry(page);
    assert.equal(geo.level, 0);
    assert.ok(geo.W % 2 === 0 && geo.H % 2 === 0, `canvas ${geo.W}x${geo.H} should be even for exact pixel alignment`);
    let img = await shot(page, geo);
    const checked = new Set();
    let n = 0;
    for (const [z, y, x, v] of probes.levels[0].probes) {
      if (z !== 5) continue;
      const p = screenPixel(geo, x, y);
      if (!p) continue;
      assertColour(img.pixel(...p), [grey(v, lo, hi), grey(v, lo, hi), grey(v, lo, hi)], `level 0 z 5 y ${y} x ${x} = ${v}`);
      checked.add(v);
      n++;
    }
    assert.ok(n >= 50, `only ${n} level-0 probes on screen`);
    assert.ok(checked.size >= 10, `probes cover only ${checked.size} distinct values`);
    t.diagnostic(`level 0: ${n} probe pixels match (${checked.size} distinct values)`);
    // The overlay shows what the library holds against the page's budget (memoryStats).
    const mem = (await page.evaluate(() => document.getElementById("overlay").textContent)).split("\n").find((l) => l.startsWith("memory "));
    assert.match(mem ?? "", /^memory [\d.]+ (kB|MB) of 268\.44 MB .*indexes [\d.]+ (kB|MB).*module [\d.]+ MB/, mem);
    t.diagnostic(mem);

    // level 1: half a screen pixel per level-0 voxel = one per level-1 voxel; z 5 is level-1 plane 2
    await page.evaluate(() => window.viewerApp.viewer.setView({ cx: 512, cy: 400, zoom: 0.5 }));
    await idle(page);
    geo = await geometry(page);
    assert.equal(geo.level, 1, "zoom 0.5 should draw level 1");
    img = await shot(page, geo);
    const f = sampleFactors()[1];
    const z1 = Math.floor((5 + 0.5) / f[0]);
    n = 0;
    for (const [z, y, x, v] of probes.levels[1].probes) {
      if (z !== z1) continue;
      const p = screenPixel(geo, x, y, f[2]);
      if (!p) continue;
      assertColour(img.pixel(...p), [grey(v, lo, hi), grey(v, lo, hi), grey(v, lo, hi)], `level 1 z ${z1} y ${y} x ${x} = ${v}`);
      n++;
    }
    assert.ok(n >= 200, `only ${n} level-1 probes on screen`);
    t.diagnostic(`level 1: ${n} probe pixels match`);
  } finally {
    await page.close();
  }

  // The default view (fit, auto contrast, middle plane) draws the whole image.
  dataServer.log.length = 0;
  page = await openViewer({ url: SAMPLE() });
  try {
    const c = await idle(page);
    const geo = await geometry(page);
    assert.ok(geo.colour.lo < geo.colour.hi && geo.colour.lo >= 0 && geo.colour.hi <= 4095, `auto contrast ${JSON.stringify(geo.colour)}`);
    const log = sampleLog();
    t.diagnostic(
      `default view (level ${c.level}, ${c.tiles.visible} tiles): first tile ${c.time.firstTileMs?.toFixed(0)} ms, ` +
        `screen complete ${c.time.firstScreenMs?.toFixed(0)} ms after open; requests: ${log.meta.length} metadata, ` +
        `${log.index.length} shard index, ${log.chunks.length} chunk; longest main-thread task ${c.time.longestTaskMs} ms`,
    );
  } finally {
    await page.close();
  }
});

test("sample: requests match the visible tiles; pan loads only new tiles; zooming out uses a coarser level", async (t) => {
  dataServer.log.length = 0;
  const lo = 0;
  const hi = 4095;
  const page = await openViewer({ url: SAMPLE(), cx: 300, cy: 280, zoom: 1, at: "z:5", lo, hi });
  try {
    await idle(page);
    let geo = await geometry(page);
    assert.equal(geo.level, 0);
    // first screen: exactly the visible level-0 chunks (neighbours may share a merged request),
    // one index request per shard, a coarse preview
    const first = visibleRequests(0, geo, 5);
    let log = sampleLog();
    const req0 = log.chunks.filter((e) => e.level === 0);
    const got0 = assertRequestsServe(req0, [...first.chunks.keys()], "first screen");
    assert.deepEqual([...got0.keys()].sort(), [...first.chunks.keys()].sort(), "level-0 requests do not cover exactly the visible chunks");
    const preview = visibleRequests(2, geo, 5);
    for (const e of log.chunks.filter((e) => e.level !== 0)) assert.equal(e.level, 2, `unexpected level ${e.level} request ${e.key}`);
    assertRequestsServe(log.chunks.filter((e) => e.level === 2), [...preview.chunks.keys()], "preview");
    const shards = new Set([...first.shards, ...preview.shards]);
    for (const e of log.index) assert.ok(shards.has(e.path), `index of a shard not on screen: ${e.path}`);
    assertNoDuplicates(log.index, "shard index");
    assertNoDuplicates(log.chunks, "chunk");
    t.diagnostic(`first screen: ${first.chunks.size} level-0 chunks in ${req0.length} requests, ${log.chunks.length - req0.length} preview requests, ${log.index.length} index requests`);

    // pan by dragging: only the newly visible chunks are requested
    const before = await geometry(page);
    const { x, y, width, height } = geo.rect;
    await page.mouse.move(x + width / 2, y + height / 2);
    await page.mouse.down();
    await page.mouse.move(x + width / 2 - 150, y + height / 2 - 100, { steps: 5 });
    await page.mouse.move(x + width / 2 - 300, y + height / 2 - 200, { steps: 5 });
    await page.mouse.up();
    await idle(page);
    geo = await geometry(page);
    assert.ok(Math.abs(geo.view.cx - (before.view.cx + 300)) < 1e-6 && Math.abs(geo.view.cy - (before.view.cy + 200)) < 1e-6, `drag moved the view to ${JSON.stringify(geo.view)}`);
    // every chunk requested was on screen at some point of the drag (Playwright moves in equal
    // steps), all chunks of the final screen were requested, none twice
    const seenDuringDrag = new Set(first.chunks.keys());
    for (let i = 1; i <= 10; i++) {
      const view = { ...geo.view, cx: before.view.cx + 30 * i, cy: before.view.cy + 20 * i };
      for (const k of visibleRequests(0, { ...geo, view }, 5).chunks.keys()) seenDuringDrag.add(k);
    }
    const second = visibleRequests(0, geo, 5);
    log = sampleLog();
    const all0 = assertRequestsServe(log.chunks.filter((e) => e.level === 0), [...seenDuringDrag], "pan");
    for (const k of second.chunks.keys()) assert.ok(all0.has(k), `chunk on screen after the pan never requested: ${k}`);
    assert.ok([...second.chunks.keys()].some((k) => !first.chunks.has(k)), "the pan revealed no new chunk");
    assertNoDuplicates(log.chunks, "chunk");
    assertNoDuplicates(log.index, "shard index");
    t.diagnostic(`pan: ${all0.size - first.chunks.size} new level-0 chunks requested, ${second.chunks.size} on the final screen`);

    // and the newly drawn part shows the right values
    const img = await shot(page, geo);
    let n = 0;
    for (const [z, yy, xx, v] of probes.levels[0].probes) {
      if (z !== 5) continue;
      const p = screenPixel(geo, xx, yy);
      if (!p) continue;
      assertColour(img.pixel(...p), [grey(v, lo, hi), grey(v, lo, hi), grey(v, lo, hi)], `after the pan: z 5 y ${yy} x ${xx} = ${v}`);
      n++;
    }
    assert.ok(n >= 50, `only ${n} probes on screen after the pan`);

    // zoom out with the wheel: a coarser level, and its requests are on screen
    await page.mouse.move(x + width / 2, y + height / 2);
    await page.mouse.wheel(0, 500);
    await idle(page);
    geo = await geometry(page);
    assert.ok(geo.view.zoom < 0.6, `wheel did not zoom out: ${geo.view.zoom}`);
    assert.ok(geo.level >= 1, `zoomed out to ${geo.view.zoom} but still on level ${geo.level}`);
    const coarse = visibleRequests(geo.level, geo, 5);
    log = sampleLog();
    const gotL = log.chunks.filter((e) => e.level === geo.level);
    assert.ok(gotL.length > 0, `no level-${geo.level} chunk requested`);
    assertRequestsServe(gotL, [...coarse.chunks.keys()], `level ${geo.level}`);
    assertNoDuplicates(log.chunks, "chunk");
    t.diagnostic(`zoom ${geo.view.zoom.toFixed(3)}: level ${geo.level}, ${gotL.length} chunks of it`);
    for (const g of gapBytes.splice(0)) t.diagnostic(g);
  } finally {
    await page.close();
  }
});

test("sample: requests of tiles that leave the view are aborted", async (t) => {
  const held = [];
  const page = await openViewer({ url: SAMPLE(), cx: 512, cy: 512, zoom: 1, at: "z:2", lo: 0, hi: 4095 });
  try {
    await idle(page);
    // hold every level-0 request of the shard layer z 16..23, then move there
    await page.route(/\/sample\/cells\.ome\.zarr\/0\/c\/2\//, (route) => {
      held.push(route);
    });
    await page.evaluate(() => window.viewerApp.viewer.setView({ at: { z: 20 } }));
    await page.waitForFunction(() => window.viewerApp.viewer.counters().tiles.inFlight > 0);
    for (let i = 0; i < 600 && held.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(held.length > 0, "no request reached the network");
    const busy = await page.evaluate(() => window.viewerApp.viewer.counters());
    // move away (back to plane 2, all cached): the held requests are no longer wanted
    await page.evaluate(() => window.viewerApp.viewer.setView({ at: { z: 2 } }));
    const c = await idle(page);
    assert.ok(c.tiles.aborted >= busy.tiles.inFlight, `aborted ${c.tiles.aborted}, in flight before ${busy.tiles.inFlight}`);
    assert.equal(c.tiles.inFlight, 0);
    t.diagnostic(`${busy.tiles.inFlight} requests in flight when the view left; ${c.tiles.aborted} aborted`);
  } finally {
    await page.unrouteAll({ behavior: "ignoreErrors" });
    for (const r of held) await r.abort().catch(() => {});
    await page.close();
  }
});

// --- other datasets by URL ----------------------------------------------------------------------

function expectedOf(name, Ctor) {
  const buf = fs.readFileSync(path.join(fixturesDir, "expected", `${name}.bin`));
  return new Ctor(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
}

test("plain Zarr v3 arrays by URL: uint16 (sharded), float32, 3-D with a slider, uint64 labels", async (t) => {
  // uint16, sharded, a missing shard (fill 0)
  {
    const exp = expectedOf("zp_shard_gzip_end", Uint16Array);
    const hi = exp.reduce((m, v) => Math.max(m, v), 1);
    const page = await openViewer({ url: `${dataServer.url}/fixtures/zp/shard_gzip_end`, zoom: 4, cx: 60, cy: 50, lo: 0, hi });
    try {
      assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
      await idle(page);
      const geo = await geometry(page);
      const img = await shot(page, geo);
      let n = 0;
      for (let y = 0; y < 100; y++) {
        for (let x = 0; x < 120; x++) {
          const p = screenPixel(geo, x, y);
          if (!p) continue;
          const g = grey(exp[y * 120 + x], 0, hi);
          assertColour(img.pixel(...p), [g, g, g], `zp_shard_gzip_end (${y}, ${x})`);
          n++;
        }
      }
      assert.equal(n, 100 * 120);
      assertColour(img.pixel(5, 5), BACKGROUND, "outside the array");
      const info = await page.evaluate(() => document.getElementById("info").textContent);
      assert.match(info, /Zarr array \(sharded\)/);
    } finally {
      await page.close();
    }
  }
  // float32 with NaN / ±Inf: NaN shows the background, ±Inf the ends of the ramp
  {
    const exp = expectedOf("zp_dt_float32", Float32Array);
    const [lo, hi] = [-2, 2];
    const page = await openViewer({ url: `${dataServer.url}/fixtures/zp/dt_float32`, zoom: 8, cx: 20.5, cy: 18.5, lo, hi });
    try {
      await idle(page);
      const geo = await geometry(page);
      const img = await shot(page, geo);
      let nan = 0;
      for (let y = 0; y < 37; y++) {
        for (let x = 0; x < 41; x++) {
          const v = exp[y * 41 + x];
          const p = screenPixel(geo, x, y);
          if (!p) continue;
          if (Number.isNaN(v)) {
            nan++;
            assertColour(img.pixel(...p), BACKGROUND, `NaN at (${y}, ${x})`);
          } else {
            const g = grey(v, lo, hi);
            assertColour(img.pixel(...p), [g, g, g], `zp_dt_float32 (${y}, ${x}) = ${v}`);
          }
        }
      }
      t.diagnostic(`float32: ${nan} NaN voxels shown as background`);
    } finally {
      await page.close();
    }
  }
  // 3-D float32 (t, y, x): the t slider selects the plane
  {
    const exp = expectedOf("hier_sub_arr", Float32Array);
    const page = await openViewer({ url: `${dataServer.url}/fixtures/hier.zarr/sub/arr`, zoom: 8, cx: 18, cy: 15, at: "t:2", lo: 0, hi: 1000 });
    try {
      await idle(page);
      const geo = await geometry(page);
      assert.deepEqual(geo.view.at, { t: 2 });
      const img = await shot(page, geo);
      for (let y = 0; y < 30; y++) {
        for (let x = 0; x < 36; x++) {
          const p = screenPixel(geo, x, y);
          if (!p) continue;
          const g = grey(exp[(2 * 30 + y) * 36 + x], 0, 1000);
          assertColour(img.pixel(...p), [g, g, g], `hier_sub_arr (2, ${y}, ${x})`);
        }
      }
      const sliders = await page.evaluate(() => [...document.querySelectorAll("#sliders input")].map((i) => [i.dataset.axis, i.value, i.max]));
      assert.deepEqual(sliders, [["t", "2", "3"]]);
    } finally {
      await page.close();
    }
  }
  // uint64 labels: a hashed colour per value (equal values, equal colours; 0 transparent)
  {
    const exp = expectedOf("zp_dt_uint64", BigUint64Array);
    const page = await openViewer({ url: `${dataServer.url}/fixtures/zp/dt_uint64`, zoom: 8, cx: 20.5, cy: 18.5 });
    try {
      await idle(page);
      const geo = await geometry(page);
      assert.equal(geo.colour.name, "labels");
      const img = await shot(page, geo);
      const colourOf = new Map();
      for (let y = 0; y < 37; y++) {
        for (let x = 0; x < 41; x++) {
          const v = exp[y * 41 + x];
          const p = screenPixel(geo, x, y);
          if (!p) continue;
          const c = img.pixel(...p).slice(0, 3).join(",");
          if (v === 0n) assert.equal(c, BACKGROUND.join(","), `label 0 at (${y}, ${x})`);
          if (colourOf.has(v)) assert.equal(c, colourOf.get(v), `label ${v} has two colours`);
          colourOf.set(v, c);
        }
      }
      const values = [...colourOf.keys()].filter((v) => v !== 0n);
      const colours = new Set(values.map((v) => colourOf.get(v)));
      assert.ok(values.length >= 20, `only ${values.length} labels`);
      assert.ok(colours.size >= 0.9 * values.length, `${values.length} labels share ${colours.size} colours`);
      assert.ok(values.some((v) => v > 2n ** 53n), "no label beyond 2^53 checked");
    } finally {
      await page.close();
    }
  }
});

test("Neuroglancer precomputed by URL parameter: a sharded volume's z plane, and its scales", async () => {
  // ident_u16: [x, y, z, channel] = 37x29x11x1, identity-hash shards; shown x across, y down, z slider.
  const exp = expectedOf("precomputed/ident_u16", Uint16Array);
  const [sx, sy, sz] = [37, 29, 11];
  const z = 5;
  const hi = exp.reduce((m, v) => Math.max(m, v), 1);
  const page = await openViewer({ url: `${dataServer.url}/fixtures/precomputed/ident_u16`, zoom: 8, cx: 18.5, cy: 14.5, at: `z:${z}`, lo: 0, hi });
  try {
    assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
    const c = await idle(page);
    const state = await page.evaluate(() => ({ format: window.viewerApp.viewer.ds.format, axes: window.viewerApp.viewer.ds.axes.map((a) => a.name) }));
    assert.equal(state.format, "Neuroglancer precomputed");
    assert.deepEqual(state.axes.slice(0, 3), ["x", "y", "z"]);
    assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0);
    const geo = await geometry(page);
    const img = await shot(page, geo);
    const n = checkGreys(img, geo, [sx, sy], (x, y) => grey(exp[(x * sy + y) * sz + z], 0, hi), `ident_u16 z ${z}`);
    assert.equal(n, sx * sy);
  } finally {
    await page.close();
  }
  // A two-scale volume opens with both scales as pyramid levels.
  const multi = await openViewer({ url: `precomputed://${dataServer.url}/fixtures/precomputed/multiscale_u64` });
  try {
    assert.equal(await multi.evaluate(() => window.viewerApp.state), "ready", multi.logs.join("\n"));
    const levels = await multi.evaluate(() => window.viewerApp.viewer.ds.levels.length);
    assert.equal(levels, 2);
  } finally {
    await multi.close();
  }
});

test("a JPEG XL precomputed volume (its decoder a module fetched on demand): screen pixels match cloud-volume's values", async () => {
  // cv_jxl_u8: [x, y, z, channel] = 40x30x10x1, lossless; a chunk missing (fill 0).
  const exp = expectedOf("cloudvolume/cv_jxl_u8", Uint8Array);
  const [sx, sy, sz] = [40, 30, 10];
  const z = 3;
  const page = await openViewer(
    { url: `precomputed://${dataServer.url}/fixtures/cloudvolume/cv_jxl_u8`, zoom: 8, cx: 20, cy: 15, at: `z:${z}`, lo: 0, hi: 255 },
  );
  try {
    assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
    const c = await idle(page);
    assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
    const geo = await geometry(page);
    const img = await shot(page, geo);
    const n = checkGreys(img, geo, [sx, sy], (x, y) => grey(exp[(x * sy + y) * sz + z], 0, 255), `cv_jxl_u8 z ${z}`);
    assert.ok(n > 100, `${n} pixels checked`);
    assert.ok(pageServer.log.some((e) => e.path === "/pkg/wasm/decoders/jxl.wasm"), "the jxl decoder module was fetched");
  } finally {
    await page.close();
  }
});

/** Opens the viewer on `query`: it gets ready and draws tiles without an error; `more(page)` checks the rest. */
async function drawsWithoutErrors(query, more) {
  const page = await openViewer(query);
  try {
    assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
    const c = await idle(page);
    assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
    await more?.(page);
  } finally {
    await page.close();
  }
}

test("an array inside a zip archive, and an .ozx image, by URL parameter", async () => {
  await drawsWithoutErrors({ url: `${dataServer.url}/fixtures/containers/zp3_group.zip|zip:sharded_u16` });
  await drawsWithoutErrors({ url: `${dataServer.url}/fixtures/containers/image.ozx` }, async (page) => {
    const levels = await page.evaluate(() => window.viewerApp.viewer.ds.levels.length);
    assert.ok(levels >= 2, `${levels} levels`);
  });
});

test("TIFF by ?url=: a COG's overviews and an OME-TIFF's SubIFD pyramid are its levels; screen pixels are GDAL's and tifffile's values", async () => {
  // gd_cog_rgb_zstd: GDAL's COG, [sample, y, x] = 3x150x130 uint8, two overviews; sample 1 shown
  // alone (mode=channel: an RGB image is drawn in colour otherwise).
  {
    const exp = expectedOf("tiff/gd_cog_rgb_zstd_0", Uint8Array);
    const [S, H, W] = [3, 150, 130];
    const page = await openViewer({ url: `${dataServer.url}/fixtures/tiff/gd_cog_rgb_zstd.tif`, zoom: 2, cx: W / 2, cy: H / 2, at: "c:1", lo: 0, hi: 255, cmap: "grey", mode: "channel" });
    try {
      assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
      const c = await idle(page);
      assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
      const ds = await page.evaluate(() => ({ format: window.viewerApp.viewer.ds.format, levels: window.viewerApp.viewer.ds.levels.length }));
      assert.deepEqual(ds, { format: "TIFF (with overviews)", levels: 3 });
      const geo = await geometry(page);
      assert.equal(geo.level, 0);
      const img = await shot(page, geo);
      const n = checkGreys(img, geo, [W, H, 2], (x, y) => grey(exp[1 * H * W + y * W + x], 0, 255), "gd_cog_rgb_zstd sample 1");
      assert.ok(n > 2000, `${n} pixels checked`);
      assert.equal(S, exp.length / (H * W));
      // Zoomed out, the viewer draws from an overview.
      await page.evaluate(() => window.viewerApp.viewer.setView({ zoom: 0.3 }));
      await idle(page);
      assert.ok((await geometry(page)).level > 0, "an overview is used when zoomed out");
    } finally {
      await page.close();
    }
  }
  // tf_ome_pyramid: tifffile's OME-TIFF, [t, c, z, y, x] = 2x3x4x96x80 uint16, SubIFD levels.
  {
    const exp = expectedOf("tiff/tf_ome_pyramid_0", Uint16Array);
    const [C, Z, H, W] = [3, 4, 96, 80];
    const [t, ch, z] = [1, 2, 3];
    const plane = ((t * C + ch) * Z + z) * H * W;
    let hi = 1;
    for (let i = 0; i < H * W; i++) hi = Math.max(hi, exp[plane + i]);
    const page = await openViewer({ url: `${dataServer.url}/fixtures/tiff/tf_ome_pyramid.ome.tif`, zoom: 4, cx: W / 2, cy: H / 2, at: `t:${t},c:${ch},z:${z}`, lo: 0, hi, cmap: "grey" });
    try {
      assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
      const c = await idle(page);
      assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
      const ds = await page.evaluate(() => ({ format: window.viewerApp.viewer.ds.format, levels: window.viewerApp.viewer.ds.levels.length, axes: window.viewerApp.viewer.ds.axes.map((a) => a.name) }));
      assert.deepEqual(ds, { format: "OME-TIFF", levels: 3, axes: ["t", "c", "z", "y", "x"] });
      const geo = await geometry(page);
      const img = await shot(page, geo);
      const n = checkGreys(img, geo, [W, H], (x, y) => grey(exp[plane + y * W + x], 0, hi), `tf_ome_pyramid t ${t} c ${ch} z ${z}`);
      assert.ok(n > 3000, `${n} pixels checked`);
    } finally {
      await page.close();
    }
  }
  // tf_u8_strips: tifffile's uint8 100x120 in strips of 16 rows, the last one 4 rows long (a
  // rectilinear chunk grid, drawn as the regular one of 16-row tiles).
  {
    const exp = expectedOf("tiff/tf_u8_strips", Uint8Array);
    const [H, W] = [100, 120];
    const page = await openViewer({ url: `${dataServer.url}/fixtures/tiff/tf_u8_strips.tif`, zoom: 3, cx: W / 2, cy: H / 2, lo: 0, hi: 255, cmap: "grey" });
    try {
      assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
      const c = await idle(page);
      assert.ok(c.tiles.drawn === 7 && c.tiles.errors === 0, JSON.stringify(c.tiles));
      const geo = await geometry(page);
      const n = checkGreys(await shot(page, geo), geo, [W, H], (x, y) => grey(exp[y * W + x], 0, 255), "tf_u8_strips");
      assert.equal(n, W * H, `${n} pixels checked`);
    } finally {
      await page.close();
    }
  }
  // Several series: the first is shown.
  await drawsWithoutErrors({ url: `${dataServer.url}/fixtures/tiff/tf_ome_two_series.ome.tif` });
});

test("HDF5, NetCDF-4 and NetCDF-3 by ?url=&path=: a NetCDF-4 and a NetCDF-3 variable's time step and an HDF5 image dataset, read by range; screen pixels are netCDF4-python's and h5py's values", async () => {
  // nc_var00: netCDF4-python's float32 [time, lat, lon] = 5x6x8, one chunk per time step.
  {
    const exp = expectedOf("hdf5/nc_var00", Float32Array);
    const [H, W] = [6, 8];
    const t = 3;
    const plane = t * H * W;
    let lo = Infinity, hi = -Infinity;
    for (let i = 0; i < H * W; i++) [lo, hi] = [Math.min(lo, exp[plane + i]), Math.max(hi, exp[plane + i])];
    const url = `${dataServer.url}/fixtures/hdf5/netcdf4.nc`;
    dataServer.log.length = 0;
    const page = await openViewer({ url, path: "var00", zoom: 16, cx: W / 2, cy: H / 2, at: `time:${t}`, lo, hi, cmap: "grey" });
    try {
      assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
      assert.equal(await page.evaluate(() => document.getElementById("url").value), `${url}|zarr:var00`);
      const c = await idle(page);
      assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
      const axes = await page.evaluate(() => window.viewerApp.viewer.ds.axes.map((a) => a.name));
      assert.deepEqual(axes, ["time", "lat", "lon"]);
      const geo = await geometry(page);
      const img = await shot(page, geo);
      const n = checkGreys(img, geo, [W, H], (x, y) => grey(exp[plane + y * W + x], lo, hi), `nc_var00 time ${t}`);
      assert.equal(n, H * W, `${n} pixels checked`);
      // by range: every answer a part of the file, none the whole of it
      const size = fs.statSync(path.join(fixturesDir, "data/hdf5/netcdf4.nc")).size;
      const reads = dataServer.log.filter((e) => e.path === "/fixtures/hdf5/netcdf4.nc" && e.method === "GET");
      assert.ok(reads.length > 0 && reads.every((e) => e.status === 206 && e.bytes < size), JSON.stringify(reads));
    } finally {
      await page.close();
    }
  }
  // nc3_long_temp: a NetCDF-3 classic file (netCDF4-python), float32 [time, y, x] = 4x4x5, its
  // records after 68 KB of another variable: the same URL form, the kind told by the first bytes.
  {
    const exp = expectedOf("netcdf3/nc3_long_temp", Float32Array);
    const [H, W] = [4, 5];
    const t = 2;
    const plane = t * H * W;
    let lo = Infinity, hi = -Infinity;
    for (let i = 0; i < H * W; i++) [lo, hi] = [Math.min(lo, exp[plane + i]), Math.max(hi, exp[plane + i])];
    const url = `${dataServer.url}/fixtures/netcdf3/nc3_long.nc`;
    dataServer.log.length = 0;
    const page = await openViewer({ url, path: "temp", zoom: 16, cx: W / 2, cy: H / 2, at: `time:${t}`, lo, hi, cmap: "grey" });
    try {
      assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
      const c = await idle(page);
      assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
      const axes = await page.evaluate(() => window.viewerApp.viewer.ds.axes.map((a) => a.name));
      assert.deepEqual(axes, ["time", "y", "x"]);
      const geo = await geometry(page);
      const img = await shot(page, geo);
      const n = checkGreys(img, geo, [W, H], (x, y) => grey(exp[plane + y * W + x], lo, hi), `nc3_long_temp time ${t}`);
      assert.equal(n, H * W, `${n} pixels checked`);
      const size = fs.statSync(path.join(fixturesDir, "data/netcdf3/nc3_long.nc")).size;
      const reads = dataServer.log.filter((e) => e.path === "/fixtures/netcdf3/nc3_long.nc" && e.method === "GET");
      assert.ok(reads.length > 0 && reads.every((e) => e.status === 206 && e.bytes < size), JSON.stringify(reads));
    } finally {
      await page.close();
    }
  }
  // latest_deflate_shuffle: h5py (libver latest), float32 50x45, chunks 16x16, deflate + shuffle.
  {
    const exp = expectedOf("hdf5/latest_deflate_shuffle", Float32Array);
    const [H, W] = [50, 45];
    let lo = Infinity, hi = -Infinity;
    for (const v of exp) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
    const page = await openViewer({ url: `${dataServer.url}/fixtures/hdf5/latest.h5`, path: "/deflate_shuffle", zoom: 4, cx: W / 2, cy: H / 2, lo, hi, cmap: "grey" });
    try {
      assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
      const c = await idle(page);
      assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
      const geo = await geometry(page);
      const img = await shot(page, geo);
      const n = checkGreys(img, geo, [W, H], (x, y) => grey(exp[y * W + x], lo, hi), "latest_deflate_shuffle");
      assert.ok(n > 1000, `${n} pixels checked`);
    } finally {
      await page.close();
    }
  }
});

// --- colour and coordinates -------------------------------------------------------------------

/** The panel's "Dataset" list as { key: text }. */
const infoOf = (page) =>
  page.evaluate(() => Object.fromEntries([...document.querySelectorAll("#info dt")].map((dt) => [dt.textContent, dt.nextElementSibling.textContent])));

/**
 * Asserts that each on-screen voxel (x, y) of a `width` × `height` grid, every `step`th, shows
 * `colourAt(x, y)` within `tol` levels; returns how many were checked.
 */
function checkColours(img, geo, [width, height, step = 1], colourAt, what, tol = 1) {
  let n = 0;
  for (let y = 0; y < height; y += step) {
    for (let x = 0; x < width; x += step) {
      const p = screenPixel(geo, x, y);
      if (!p) continue;
      const want = colourAt(x, y);
      const got = img.pixel(...p);
      assert.ok([0, 1, 2].every((i) => Math.abs(got[i] - want[i]) <= tol), `${what} (x ${x}, y ${y}): screen [${got.slice(0, 3)}], expected [${want}]`);
      n++;
    }
  }
  return n;
}

test("colour: an RGB TIFF (tifffile, LZW), a YCbCr JPEG COG (GDAL) and an RGB COG drawn as colour composites by default; one channel, or a channel hidden, on request", async (t) => {
  // tf_rgb_lzw: Photometric RGB, [sample, y, x] = 3x90x110 uint8, chunky tiles: its values are
  // the colours (limits 0..255, no contrast stretch).
  {
    const exp = expectedOf("tiff/tf_rgb_lzw", Uint8Array);
    const [H, W] = [90, 110];
    const at = (c, x, y) => exp[c * H * W + y * W + x];
    const page = await openViewer({ url: `${dataServer.url}/fixtures/tiff/tf_rgb_lzw.tif`, zoom: 4, cx: W / 2, cy: H / 2 });
    try {
      assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
      let c = await idle(page);
      assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
      const info = await infoOf(page);
      assert.equal(info.format, "TIFF image (RGB)");
      assert.match(info.colour, /R, G, B \(TIFF Photometric RGB\)/);
      assert.equal(await page.evaluate(() => document.getElementById("channel-mode").value), "composite");
      let geo = await geometry(page);
      let img = await shot(page, geo);
      let n = checkColours(img, geo, [W, H], (x, y) => [at(0, x, y), at(1, x, y), at(2, x, y)], "tf_rgb_lzw composite");
      assert.equal(n, H * W, `${n} pixels checked`);
      let colourful = 0; // pixels whose channels differ: a grey image would pass the check above only if there were none
      for (let i = 0; i < H * W; i++) if (exp[i] !== exp[H * W + i] || exp[i] !== exp[2 * H * W + i]) colourful++;
      assert.ok(colourful > H * W / 4, `only ${colourful} colourful pixels in the fixture`);
      t.diagnostic(`tf_rgb_lzw: ${n} composite pixels equal tifffile's RGB (${colourful} of them not grey)`);

      // green hidden: red and blue stay
      await page.click('#channel-list .channel[data-index="1"] input[type=checkbox]');
      await idle(page);
      img = await shot(page, geo);
      n = checkColours(img, geo, [W, H, 3], (x, y) => [at(0, x, y), 0, at(2, x, y)], "tf_rgb_lzw without G");
      assert.ok(n > 1000, `${n} pixels checked`);
      await page.click('#channel-list .channel[data-index="1"] input[type=checkbox]');

      // one channel: the sample slider, the colormap at full range
      await page.selectOption("#channel-mode", "channel");
      const slider = '#sliders input[data-axis="sample"]';
      await page.waitForSelector(slider);
      await page.$eval(slider, (el) => {
        el.value = "2";
        el.dispatchEvent(new Event("input", { bubbles: true }));
      });
      await page.evaluate(() => window.viewerApp.viewer.setColours({ name: "grey", lo: 0, hi: 255 }));
      c = await idle(page);
      assert.ok(c.tiles.errors === 0, JSON.stringify(c.tiles));
      geo = await geometry(page);
      assert.deepEqual(geo.view.at, { sample: 2 });
      img = await shot(page, geo);
      n = checkGreys(img, geo, [W, H], (x, y) => at(2, x, y), "tf_rgb_lzw sample 2 alone");
      assert.equal(n, H * W);
      // the mode is kept in the link
      await page.waitForFunction(() => new URLSearchParams(location.search).get("mode") === "channel");
    } finally {
      await page.close();
    }
  }
  // gd_cog_jpeg_rgb: Photometric YCbCr, JPEG (2x2 subsampled): the decoder gives RGB; lossy, so
  // within the fixture's tolerance of GDAL's values (4 levels) plus the canvas's rounding.
  {
    const exp = expectedOf("tiff/gd_cog_jpeg_rgb_0", Uint8Array);
    const [H, W] = [120, 136];
    const page = await openViewer({ url: `${dataServer.url}/fixtures/tiff/gd_cog_jpeg_rgb.tif`, zoom: 4, cx: W / 2, cy: H / 2 });
    try {
      assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
      await idle(page);
      assert.equal((await infoOf(page)).format, "TIFF image (YCbCr)");
      const geo = await geometry(page);
      const img = await shot(page, geo);
      const n = checkColours(img, geo, [W, H, 2], (x, y) => [0, 1, 2].map((c) => exp[c * H * W + y * W + x]), "gd_cog_jpeg_rgb composite", 5);
      assert.ok(n > 2500, `${n} pixels checked`);
    } finally {
      await page.close();
    }
  }
  // GDAL's JPEG GTiffs (lossy: the fixture's tolerance of 4 levels, plus the canvas's rounding):
  // planar RGB (each sample its own tiles: a composite tile from three chunks), and RGB + an
  // unassociated alpha sample (ExtraSamples 2), drawn over the view's background.
  for (const [name, [S, H, W], tol] of [["gd_jpeg_planar", [3, 32, 32], 5], ["gd_jpeg_rgba", [4, 36, 40], 8]]) {
    const exp = expectedOf(`tiff-classes/${name}`, Uint8Array);
    const page = await openViewer({ url: `${dataServer.url}/fixtures/tiff-classes/${name}.tif`, zoom: 8, cx: W / 2, cy: H / 2 });
    try {
      assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
      const c = await idle(page);
      assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
      const geo = await geometry(page);
      const img = await shot(page, geo);
      const colourAt = (x, y) => {
        const v = (k) => exp[k * H * W + y * W + x];
        const a = S === 4 ? v(3) : 255;
        return [0, 1, 2].map((k) => Math.round((v(k) * a + BACKGROUND[k] * (255 - a)) / 255));
      };
      const n = checkColours(img, geo, [W, H], colourAt, `${name} composite`, tol);
      assert.equal(n, H * W);
    } finally {
      await page.close();
    }
  }
  // gd_cog_rgb_zstd: a COG with overviews (a multiscale of axes c, y, x): the composite too.
  {
    const exp = expectedOf("tiff/gd_cog_rgb_zstd_0", Uint8Array);
    const [H, W] = [150, 130];
    const page = await openViewer({ url: `${dataServer.url}/fixtures/tiff/gd_cog_rgb_zstd.tif`, zoom: 2, cx: W / 2, cy: H / 2 });
    try {
      assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
      await idle(page);
      const geo = await geometry(page);
      assert.equal(geo.level, 0);
      const img = await shot(page, geo);
      const n = checkColours(img, geo, [W, H, 2], (x, y) => [0, 1, 2].map((c) => exp[c * H * W + y * W + x]), "gd_cog_rgb_zstd composite");
      assert.ok(n > 4000, `${n} pixels checked`);
    } finally {
      await page.close();
    }
  }
});

test("colour: an OME-Zarr image whose omero channels give colours and windows is their composite; one channel at a time with its own window on request", async (t) => {
  // v04_cyx: [c, y, x] = 2x96x128 uint16 (zarr-python), DNA blue 0..4000, Actin green 100..3000.
  const exp = expectedOf("ome/v04_cyx.ome.zarr_s0", Uint16Array);
  const [H, W] = [96, 128];
  const at = (c, x, y) => exp[c * H * W + y * W + x];
  // level-0 voxels are 0.5 wide: zoom in level-0 voxel units
  const page = await openViewer({ url: `${dataServer.url}/fixtures/ome/v04_cyx.ome.zarr`, zoom: 4, cx: W / 2, cy: H / 2, level: 0 });
  try {
    assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
    await idle(page);
    const info = await infoOf(page);
    assert.match(info.colour, /DNA, Actin \(OME channel colours\)/);
    const rows = await page.evaluate(() => [...document.querySelectorAll("#channel-list .channel")].map((r) => [r.querySelector(".name").textContent, r.querySelector(".min").value, r.querySelector(".max").value]));
    assert.deepEqual(rows, [["DNA", "0", "4000"], ["Actin", "100", "3000"]]);
    let geo = await geometry(page);
    assert.equal(geo.level, 0);
    let img = await shot(page, geo);
    let n = checkColours(img, geo, [W, H], (x, y) => [0, grey(at(1, x, y), 100, 3000), grey(at(0, x, y), 0, 4000)], "v04_cyx composite");
    assert.equal(n, H * W);
    t.diagnostic(`v04_cyx: ${n} composite pixels match zarr-python's values through the omero windows`);
    // one channel: the c slider; each channel with its own window, grey
    await page.selectOption("#channel-mode", "channel");
    await page.waitForSelector('#sliders input[data-axis="c"]');
    for (const [ch, lo, hi] of [[0, 0, 4000], [1, 100, 3000]]) {
      await page.$eval('#sliders input[data-axis="c"]', (el, v) => {
        el.value = String(v);
        el.dispatchEvent(new Event("input", { bubbles: true }));
      }, ch);
      await idle(page);
      geo = await geometry(page);
      assert.deepEqual(geo.colour, { name: "grey", lo, hi });
      img = await shot(page, geo);
      n = checkGreys(img, geo, [W, H, 2], (x, y) => grey(at(ch, x, y), lo, hi), `v04_cyx channel ${ch}`);
      assert.ok(n > 2500, `${n} pixels checked`);
      assert.match(await page.evaluate(() => document.querySelector("#sliders output").textContent), new RegExp(`${ch} · ${["DNA", "Actin"][ch]}`));
    }
  } finally {
    await page.close();
  }
});

test("coordinates: a NetCDF-3 and a NetCDF-4 variable are named as such, their coordinate variables' values (netCDF4-python's) on the axes, the sliders and the cursor; an HDF5 dataset is one", async (t) => {
  const f32 = (name) => Array.from(expectedOf(name, Float32Array));
  // nc3_classic temp: float32 [time, lat, lon] = 5x6x8; lat in degrees_north, lon without units,
  // time in days since 2000-01-01 (0, 0.5, 1, …).
  const lat = f32("netcdf3/nc3_classic_lat");
  const lon = f32("netcdf3/nc3_classic_lon");
  const time = Array.from(expectedOf("netcdf3/nc3_classic_time", Float64Array));
  const exp = f32("netcdf3/nc3_classic_temp");
  const [H, W] = [6, 8];
  const ti = 2;
  const plane = exp.slice(ti * H * W, (ti + 1) * H * W);
  const [lo, hi] = [Math.min(...plane), Math.max(...plane)];
  const page = await openViewer({ url: `${dataServer.url}/fixtures/netcdf3/nc3_classic.nc`, path: "temp", zoom: 40, cx: W / 2, cy: H / 2, at: `time:${ti}`, lo, hi, cmap: "grey" });
  try {
    assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
    await idle(page);
    const info = await infoOf(page);
    assert.equal(info.format, "NetCDF-3 variable");
    assert.equal(info.coordinates, "time (days since 2000-01-01), lat (degrees_north), lon");
    const geo = await geometry(page);
    // the image is still the data (the axes lie along the edges, clear of it)
    const img = await shot(page, geo);
    assert.equal(checkGreys(img, geo, [W, H], (x, y) => grey(plane[y * W + x], lo, hi), "nc3_classic_temp"), H * W);
    // ticks: each names its voxel's coordinate and sits at the voxel's centre
    const axes = await page.evaluate(() =>
      ["axis-x", "axis-y"].map((id) => {
        const el = document.getElementById(id);
        const c = document.getElementById("canvas").getBoundingClientRect();
        return {
          hidden: el.hidden,
          title: el.querySelector(".axis-title").textContent,
          ticks: [...el.querySelectorAll(".tick")].map((tk) => {
            const r = tk.getBoundingClientRect();
            return { i: Number(tk.dataset.index), text: tk.textContent, x: r.left - c.left, y: r.top + r.height / 2 - c.top };
          }),
        };
      }),
    );
    const [ax, ay] = axes;
    assert.equal(ax.hidden, false);
    assert.equal(ax.title, "lon");
    assert.equal(ay.title, "lat (degrees_north)");
    const near = (a, b, what) => assert.ok(Math.abs(a - b) <= 2, `${what}: ${a} vs ${b}`);
    for (const [axis, values, which] of [[ax, lon, "x"], [ay, lat, "y"]]) {
      assert.ok(axis.ticks.length >= 3, `${which}: ${JSON.stringify(axis.ticks)}`);
      for (const tk of axis.ticks) {
        assert.equal(Number(tk.text), values[tk.i], `${which} tick ${tk.i}`);
        const centre = which === "x" ? (tk.i + 0.5 - geo.view.cx) * geo.view.zoom + geo.W / 2 : (tk.i + 0.5 - geo.view.cy) * geo.view.zoom + geo.H / 2;
        near(which === "x" ? tk.x : tk.y, centre, `${which} tick ${tk.i} position`);
      }
    }
    t.diagnostic(`nc3_classic temp: lon ticks ${ax.ticks.map((x) => x.text).join(" ")}, lat ticks ${ay.ticks.map((x) => x.text).join(" ")}`);
    // the time slider: its date; the cursor: each axis's coordinate
    const day = (d) => new Date(Date.UTC(2000, 0, 1) + d * 86400e3).toISOString().slice(0, 10);
    assert.equal(await page.evaluate(() => document.querySelector('#sliders input[data-axis="time"]').nextElementSibling.textContent), `${ti} · ${day(time[ti])}`);
    const [px, py] = screenPixel(geo, 5, 1);
    await page.mouse.move(geo.rect.x + px, geo.rect.y + py);
    const cursor = await page.evaluate(() => document.getElementById("cursor").textContent);
    assert.match(cursor, new RegExp(`time ${ti} = ${day(time[ti])}`));
    assert.match(cursor, new RegExp(`lat 1 = ${lat[1]} degrees_north`));
    assert.match(cursor, new RegExp(`lon 5 = ${lon[5]}(\\s|$)`));
    assert.match(cursor, new RegExp(`value ${plane[1 * W + 5].toPrecision(6)}`));
  } finally {
    await page.close();
  }
  // NetCDF-4 (netCDF4-python): var00 [time, lat, lon]; forecast/precip, its lat/lon in the root group.
  for (const [variable, name] of [["var00", "nc_var00"], ["forecast/precip", "nc_forecast_precip"]]) {
    const nlat = f32("hdf5/nc_lat");
    const p = await openViewer({ url: `${dataServer.url}/fixtures/hdf5/netcdf4.nc`, path: variable, zoom: 40, cx: 4, cy: 3 });
    try {
      assert.equal(await p.evaluate(() => window.viewerApp.state), "ready", p.logs.join("\n"));
      await idle(p);
      assert.equal((await infoOf(p)).format, "NetCDF-4 variable (HDF5)", name);
      const ticks = await p.evaluate(() => [...document.querySelectorAll("#axis-y .tick")].map((tk) => [Number(tk.dataset.index), tk.textContent]));
      assert.ok(ticks.length >= 3, `${name}: ${JSON.stringify(ticks)}`);
      for (const [i, text] of ticks) assert.equal(Number(text), nlat[i], `${name} lat tick ${i}`);
      assert.match(await p.evaluate(() => document.querySelector("#axis-y .axis-title").textContent), /^lat( \(.+\))?$/, name);
    } finally {
      await p.close();
    }
  }
  // An HDF5 file of h5py without NetCDF's dimensions: "HDF5 dataset", no axes.
  const h5 = await openViewer({ url: `${dataServer.url}/fixtures/hdf5/latest.h5`, path: "/deflate_shuffle" });
  try {
    assert.equal(await h5.evaluate(() => window.viewerApp.state), "ready", h5.logs.join("\n"));
    await idle(h5);
    assert.equal((await infoOf(h5)).format, "HDF5 dataset");
    assert.deepEqual(await h5.evaluate(() => [document.getElementById("axis-x").hidden, document.getElementById("axis-y").hidden]), [true, true]);
  } finally {
    await h5.close();
  }
});

/** Types `input` into the viewer's URL field and submits the form; resolves once it opened (or failed). */
async function submitUrl(page, input) {
  await page.fill("#url", input);
  await page.click("#open-form button[type=submit]");
  // the submit handler puts `input` in the address before it starts opening
  await page.waitForFunction((u) => new URLSearchParams(location.search).get("url") === u && ["ready", "error"].includes(window.viewerApp.state), input, { timeout: 60_000 });
}

test("an array in a zip typed into the URL field and submitted: screen pixels are zarr-python's values", async () => {
  // sharded_u16 in zarr-python's ZipStore: uint16 40x52, a shard missing (fill 0).
  const exp = expectedOf("containers/ct_zp3zip_sharded_u16", Uint16Array);
  const [H, W] = [40, 52];
  const hi = exp.reduce((m, v) => Math.max(m, v), 1);
  const typed = `${dataServer.url}/fixtures/containers/zp3_group.zip|zip:sharded_u16`;
  // a float32 array first: what the field opens replaces it
  const page = await openViewer({ url: `${dataServer.url}/fixtures/zp/dt_float32` });
  try {
    await submitUrl(page, typed);
    assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
    assert.equal(await page.evaluate(() => window.viewerApp.viewer.ds.dtype), "uint16");
    // a typed URL carries no contrast: set it so that pixels can be predicted
    await page.evaluate((h) => window.viewerApp.viewer.setColours({ name: "grey", lo: 0, hi: h }), hi);
    const c = await idle(page);
    assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
    const geo = await geometry(page);
    const img = await shot(page, geo);
    const n = checkGreys(img, geo, [W, H], (x, y) => grey(exp[y * W + x], 0, hi), "ct_zp3zip_sharded_u16");
    assert.ok(n >= (H * W) / 2, `${n} pixels checked`);
  } finally {
    await page.close();
  }
});

test("a variable of a kerchunk reference file (JSON, Parquet) by ?url=&path= and by |zarr:, its chunks ranges of the HDF5 file: screen pixels are h5py's values", async () => {
  for (const [file, doc] of [["refs.json", "/refs.json"], ["refs.parq", "/refs.parq/.zmetadata"]]) await kerchunkInViewer(file, doc);
});

async function kerchunkInViewer(file, doc) {
  const refsUrl = `${dataServer.url}/fixtures/containers/kerchunk/${file}`;
  const bin = fs.readFileSync(path.join(fixturesDir, "expected/containers/ct_kerchunk_gzip_i16.bin"));
  const exp = new Int16Array(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength));
  const [H, W] = [40, 36];
  let lo = Infinity, hi = -Infinity;
  for (const v of exp) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
  dataServer.log.length = 0;
  const page = await openViewer({ url: refsUrl, path: "gzip_i16", lo, hi, cmap: "grey" });
  try {
    assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
    assert.equal(await page.evaluate(() => document.getElementById("url").value), `${refsUrl}|zarr:gzip_i16`);
    const c = await idle(page);
    assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
    const geo = await geometry(page);
    const img = await shot(page, geo);
    const n = checkGreys(img, geo, [W, H, 2], (x, y) => grey(exp[y * W + x], lo, hi), "ct_kerchunk_gzip_i16");
    assert.ok(n > 100, `${n} pixels checked`);
    const log = dataServer.log.filter((e) => e.path.startsWith("/fixtures/containers/kerchunk/"));
    assert.equal(log.filter((e) => e.path.endsWith(doc)).length, 1, "the reference file once");
    assert.ok(log.some((e) => e.path.endsWith("/sample.h5")), "chunks read from the HDF5 file");
  } finally {
    await page.close();
  }
  await drawsWithoutErrors({ url: `${refsUrl}|zarr:plain_f32` });
}

test("an Icechunk repository by ?url=&store=icechunk&tag= and &branch=, and by the |icechunk: pipeline: screen pixels are icechunk's values at each", async () => {
  const repoUrl = `${dataServer.url}/fixtures/icechunk/v2.icechunk`;
  const raw = (name) => {
    const bin = fs.readFileSync(path.join(fixturesDir, `expected/icechunk/${name}.bin`));
    return new Uint16Array(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength));
  };
  const tagged = raw("ic2_tag_raw");
  const main = raw("ic2_main_raw");
  for (const [version, pipeline, exp, other] of [
    [{ tag: "v1" }, "@tag.v1", tagged, main],
    [{ branch: "main" }, "@branch.main", main, tagged],
  ]) {
    dataServer.log.length = 0;
    const page = await openViewer({ url: repoUrl, store: "icechunk", ...version, path: "raw", lo: 0, hi: 65535, cmap: "grey" });
    try {
      assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
      assert.equal(await page.evaluate(() => document.getElementById("url").value), `${repoUrl}|icechunk:${pipeline}/raw`);
      const c = await idle(page);
      assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
      const geo = await geometry(page);
      const img = await shot(page, geo);
      let differ = 0; // checked pixels where the other version's value would show otherwise
      const n = checkGreys(img, geo, [50, 40, 3], (x, y) => {
        const g = grey(exp[y * 50 + x], 0, 65535);
        if (Math.abs(grey(other[y * 50 + x], 0, 65535) - g) > 2) differ++;
        return g;
      }, `ic2 ${pipeline} raw`);
      assert.ok(n > 50, `${n} pixels checked`);
      assert.ok(differ >= 10, `${pipeline}: only ${differ} checked pixels tell the branch from the tag`);
      const reads = dataServer.log.filter((e) => e.path.startsWith("/fixtures/icechunk/v2.icechunk/"));
      assert.equal(reads.filter((e) => e.path.endsWith("/repo")).length, 1, "the repo file once");
    } finally {
      await page.close();
    }
  }
  await drawsWithoutErrors({ url: `${repoUrl}|icechunk:@branch.main/sharded` });
});

test("precomputed sample (JPEG, sharded by hash): screen pixels match tensorstore's values at two scales", async (t) => {
  const pc = JSON.parse(fs.readFileSync(path.join(sampleDir, "probes-precomputed.json"), "utf8"));
  // JPEG: decoders may round differently from tensorstore's libjpeg-turbo (2 levels, as in the
  // fixtures' tolerance), plus the canvas's own rounding.
  const near = (actual, v, what) =>
    assert.ok([0, 1, 2].every((i) => Math.abs(actual[i] - v) <= 3), `${what}: screen [${actual.slice(0, 3)}], tensorstore ${v}`);
  const page = await openViewer({ url: `${dataServer.url}/sample/cells.precomputed`, cx: 256, cy: 200, zoom: 2, at: "z:5", lo: 0, hi: 255, cmap: "grey" });
  try {
    assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
    await idle(page);
    const ds = await page.evaluate(() => {
      const d = window.viewerApp.viewer.ds;
      return { format: d.format, levels: d.levels.length, hashSharded: d.levels.map((l) => l.hashSharded) };
    });
    assert.deepEqual(ds, { format: "Neuroglancer precomputed", levels: 3, hashSharded: [true, true, true] });
    for (const [scale, zoom, min] of [[0, 2, 50], [1, 0.5, 100]]) {
      if (scale > 0) {
        await page.evaluate((z) => window.viewerApp.viewer.setView({ cx: 256, cy: 256, zoom: z }), zoom);
        await idle(page);
      }
      const geo = await geometry(page);
      assert.equal(geo.level, scale, `zoom ${zoom} should draw scale ${scale}`);
      const img = await shot(page, geo);
      const f = pc.scales[scale].factor;
      const z = Math.floor((5 + 0.5) / f);
      let n = 0;
      for (const [x, y, pz, v] of pc.scales[scale].probes) {
        if (pz !== z) continue;
        const p = screenPixel(geo, x, y, f);
        if (!p) continue;
        near(img.pixel(...p), v, `scale ${scale} x ${x} y ${y} z ${z}`);
        n++;
      }
      assert.ok(n >= min, `only ${n} scale-${scale} probes on screen`);
      t.diagnostic(`precomputed sample scale ${scale}: ${n} probe pixels within 3 levels of tensorstore's`);
    }
  } finally {
    await page.close();
  }
});

test("Zarr v2 array by URL parameter: Fortran order, no compressor, missing chunks as fill", async () => {
  // zp2_v2_i4_raw_F: int32 25x31, order F (the library returns it as strides), fill -99.
  const exp = expectedOf("zp2/zp2_v2_i4_raw_F", Int32Array);
  const [h, w] = [25, 31];
  const lo = exp.reduce((m, v) => Math.min(m, v), 0);
  const hi = exp.reduce((m, v) => Math.max(m, v), 1);
  const page = await openViewer({ url: `${dataServer.url}/fixtures/zp2/v2/i4_raw_F`, zoom: 8, cx: 15.5, cy: 12.5, lo, hi });
  try {
    assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
    await idle(page);
    const geo = await geometry(page);
    const img = await shot(page, geo);
    const n = checkGreys(img, geo, [w, h], (x, y) => grey(exp[y * w + x], lo, hi), "zp2_v2_i4_raw_F");
    assert.equal(n, h * w);
  } finally {
    await page.close();
  }
});

// --- errors ---------------------------------------------------------------------------------------

async function errorShown(page) {
  await page.waitForSelector("#error:not([hidden])", { timeout: 30_000 });
  return page.evaluate(() => ({
    code: document.getElementById("error").dataset.code,
    text: document.getElementById("error").innerText,
    state: window.viewerApp.state,
  }));
}

test("an n5:// URL is the library's UnsupportedFormat, not read as the Zarr array after the prefix; the page stays usable", async () => {
  const zarr = "/fixtures/zp/dt_float32";
  dataServer.log.length = 0;
  const page = await openViewer({ url: `n5://${dataServer.url}${zarr}` });
  try {
    assert.equal(await page.evaluate(() => window.viewerApp.state), "error", "opened anyway");
    const e = await errorShown(page);
    assert.equal(e.state, "error");
    assert.equal(e.code, "UnsupportedFormat");
    assert.match(e.text, /Unsupported format/);
    assert.match(e.text, /n5:\/\//);
    assert.equal(dataServer.log.filter((r) => r.path.startsWith(zarr)).length, 0, "requests for the array after n5://");
    // the field still opens what is typed into it, and the error goes away
    await submitUrl(page, `${dataServer.url}/fixtures/containers/image.ozx`);
    assert.equal(await page.evaluate(() => window.viewerApp.state), "ready", page.logs.join("\n"));
    assert.equal(await page.evaluate(() => document.getElementById("error").hidden), true);
    const c = await idle(page);
    assert.ok(c.tiles.drawn > 0 && c.tiles.errors === 0, JSON.stringify(c.tiles));
    assert.deepEqual(page.logs.filter((l) => l.startsWith("pageerror")), []);
  } finally {
    await page.close();
  }
});

test("errors are shown in the page: bad URL, not http, unsupported codec, CORS refusal", async () => {
  // 404: nothing at the URL
  let page = await openViewer({ url: `${dataServer.url}/sample/no-such.zarr` });
  try {
    const e = await errorShown(page);
    assert.equal(e.state, "error");
    assert.equal(e.code, "NotFound");
    assert.match(e.text, /Nothing found/);
    assert.match(e.text, /no-such\.zarr/);
  } finally {
    await page.close();
  }
  // not an http URL
  page = await openViewer({ url: "ftp://example.invalid/data.zarr" });
  try {
    const e = await errorShown(page);
    assert.match(e.text, /http/);
  } finally {
    await page.close();
  }
  // an unsupported codec (metadata edited on purpose: zarr-python's name for numcodecs' ZFPY)
  const dir = path.join(tmpDir, "zfpy_arr");
  fs.cpSync(path.join(fixturesDir, "data/zp/u16_gzip_partial"), dir, { recursive: true });
  const meta = readMeta(dir);
  meta.codecs = meta.codecs.map((c) => (c.name === "gzip" ? { name: "numcodecs.zfpy", configuration: { mode: 4, tolerance: -1 } } : c));
  fs.writeFileSync(path.join(dir, "zarr.json"), JSON.stringify(meta));
  page = await openViewer({ url: `${dataServer.url}/tmp/zfpy_arr` });
  try {
    const e = await errorShown(page);
    assert.equal(e.code, "UnsupportedCodec");
    assert.match(e.text, /codec/i);
    assert.match(e.text, /zfpy/);
  } finally {
    await page.close();
  }
  // a server without CORS headers
  const bare = http.createServer((req, res) => {
    const file = path.join(sample, decodeURIComponent(new URL(req.url, "http://x").pathname).replace(/^\/+/, ""));
    if (!file.startsWith(sample) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(fs.readFileSync(file));
  });
  await new Promise((r) => bare.listen(0, "127.0.0.1", r));
  page = await openViewer({ url: `http://127.0.0.1:${bare.address().port}` });
  try {
    const e = await errorShown(page);
    assert.equal(e.code, "CORS");
    assert.match(e.text, /CORS/);
    assert.match(e.text, /Access-Control-Allow-Origin/);
  } finally {
    await page.close();
    await new Promise((r) => bare.close(r));
  }
});
