// Browser tests: the built package (pkg/) in headless Chromium, imported by a plain
// <script type="module"> page (no bundler) and by a module Web Worker. The page is served by one
// server and the fixtures by a second one (another port = another origin), so CORS, preflights
// of Range requests and exposed headers are exercised. Run: node --test tests/js/browser.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

import { startServer } from "../server.mjs";
import { loadManifests } from "./check-fixtures.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const fixturesDir = path.join(repo, "tests/fixtures");
const manifest = await loadManifests(async (rel) => JSON.parse(fs.readFileSync(path.join(fixturesDir, rel), "utf8")));

let pageServer;
let dataServer;
let browser;

before(async () => {
  if (!fs.existsSync(path.join(repo, "pkg/index.js"))) throw new Error("pkg/index.js missing: run `npm run build` first");
  pageServer = await startServer({ root: { "/": repo } });
  dataServer = await startServer({
    root: { "/fixtures": path.join(fixturesDir, "data"), "/fx": fixturesDir },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
});

after(async () => {
  await browser?.close();
  await pageServer?.close();
  await dataServer?.close();
});

/** Open browser.html with the given query and return its result object. */
async function runPage(query, timeout = 420_000) {
  const page = await browser.newPage();
  const logs = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") logs.push(`console.${m.type()}: ${m.text()}`);
  });
  let pageError;
  const failed = new Promise((_, reject) => {
    pageError = reject;
  });
  failed.catch(() => {});
  page.on("pageerror", (e) => {
    logs.push(`pageerror: ${e.message}`);
    pageError(new Error(`page error: ${e.message}`));
  });
  page.on("requestfailed", (r) => logs.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
  try {
    const qs = new URLSearchParams({ data: dataServer.url, ...query }).toString();
    await page.goto(`${pageServer.url}/tests/js/browser.html?${qs}`);
    const handle = await Promise.race([
      page.waitForFunction(() => window.__shardfetchResult, null, { timeout, polling: 200 }),
      failed,
    ]);
    const result = await handle.jsonValue();
    result.logs = logs;
    return result;
  } catch (e) {
    e.message += `\nbrowser logs:\n${logs.join("\n")}`;
    throw e;
  } finally {
    await page.close();
  }
}

function report(r) {
  return [...r.failures, ...(r.logs ?? []).slice(0, 20)].join("\n");
}

// The fixtures' chunks are small, which by default decode inline: ask for workers explicitly.
for (const [label, query] of [["decoding workers", { workers: "2" }], ["default options", {}], ["no workers", { workers: "0" }]]) test(`page (plain <script type=module>, cross-origin data), ${label}: all fixtures`, async (t) => {
  dataServer.log.length = 0;
  const r = await runPage(query);
  assert.ok(r.count > 0, `no case ran\n${report(r)}`);
  for (const res of r.results ?? []) {
    await t.test(`browser ${label} ${res.name}`, () => {
      assert.ok(res.ok, res.failures.join("\n"));
    });
  }
  assert.equal(r.count, manifest.cases.length + (manifest.groups?.length ?? 0), "not every case ran");
  assert.equal(r.failed, 0, report(r));
  // the data server really was another origin and answered range requests
  assert.ok(dataServer.log.some((e) => e.status === 206), "no 206 answer from the data server");
  // The pool really decoded (or really did not).
  if (query.workers === "0") assert.equal(r.workerJobs, 0);
  else if (query.workers) assert.ok(r.workerJobs > 100, `only ${r.workerJobs} chunks decoded in workers`);
});

test("module Web Worker: sharded cases", async () => {
  const sharded = manifest.cases.filter((c) => c.features.includes("sharding")).map((c) => c.name);
  const pick = [
    sharded.find((n) => n === "zp_shard_gzip_end") ?? sharded[0],
    sharded.find((n) => n === "ts_nested_shard"),
    sharded.find((n) => n === "zp_shard_i64_start"),
  ].filter(Boolean);
  assert.ok(pick.length > 0, "no sharded case in the manifest");
  const r = await runPage({ worker: "1", cases: pick.join(",") });
  assert.equal(r.count, pick.length, `ran ${r.count} of ${pick.length}\n${report(r)}`);
  assert.equal(r.where, "worker");
  assert.equal(r.failed, 0, report(r));
});

test("the first open asks for the module while the glue (factory.js) is still on its way, and reads", async () => {
  const page = await browser.newPage();
  let moduleAsked;
  const asked = new Promise((resolve) => {
    moduleAsked = resolve;
  });
  page.on("request", (r) => {
    if (r.url().endsWith("/pkg/wasm/shardfetch_bg.wasm")) moduleAsked(true);
  });
  let heldUntilModule;
  // Held until the module is asked for; released after 10 s if it never is (the test then fails).
  await page.route("**/pkg/wasm/factory.js", async (route) => {
    heldUntilModule = await Promise.race([asked, new Promise((r) => setTimeout(() => r(false), 10_000))]);
    await route.continue();
  });
  try {
    await page.goto(`${pageServer.url}/tests/js/blank.html`);
    const c = manifest.cases.find((x) => x.name === "zp_shard_gzip_end");
    assert.ok(c, "the fixture zp_shard_gzip_end");
    const values = await page.evaluate(async (url) => {
      const api = await import("/pkg/index.js");
      const arr = await api.openArray(url);
      return Array.from((await arr.get([null, null])).data);
    }, `${dataServer.url}/fixtures/${c.path}`);
    const want = fs.readFileSync(path.join(fixturesDir, c.expected));
    assert.deepEqual(values, Array.from(new Uint16Array(want.buffer, want.byteOffset, want.length / 2)), "zarr-python's values");
    assert.equal(heldUntilModule, true, "the module was asked for only after the glue arrived");
  } finally {
    await page.close();
  }
});

test("a page importing only the core downloads none of the adapters (viv, openlayers, maplibre, h5web) nor their raster module, and reads a COG and a NetCDF-4 file", async () => {
  const page = await browser.newPage();
  pageServer.log.length = 0;
  try {
    await page.goto(`${pageServer.url}/tests/js/blank.html`);
    const cases = ["gd_cog_f32_0", "nc_var00"].map((n) => manifest.cases.find((x) => x.name === n));
    assert.ok(cases.every(Boolean), "the fixtures gd_cog_f32_0 and nc_var00");
    const got = await page.evaluate(async (list) => {
      const api = await import("/pkg/index.js");
      const out = [];
      for (const [url, p, n] of list) out.push(Array.from((await (await api.openArray(url, { path: p })).get(new Array(n).fill(null))).data));
      return out;
    }, cases.map((c) => [`${dataServer.url}/fixtures/${c.path}`, c.open.path, c.shape.length]));
    for (const [k, c] of cases.entries()) {
      const want = fs.readFileSync(path.join(fixturesDir, c.expected));
      assert.equal(c.dtype, "float32");
      assert.deepEqual(got[k], Array.from(new Float32Array(want.buffer.slice(want.byteOffset, want.byteOffset + want.length))), `${c.name}: its writer's values`);
    }
    const paths = pageServer.log.map((e) => e.path);
    assert.ok(paths.includes("/pkg/index.js"), "the page server's log is not recording");
    const adapters = paths.filter((p) => /\/pkg\/(viv|openlayers|maplibre|h5web)\.js$|\/raster\.wasm$/.test(p));
    assert.deepEqual(adapters, [], "adapter entries (or the adapters' raster module) downloaded by a core-only page");
  } finally {
    await page.close();
  }
});

test("cross-origin reads send no CORS preflight where the request needs none: a shard index at the start, a COG; one per shard for an index at the end", async () => {
  // The Fetch standard safelists `Range: bytes=a-b` and `bytes=a-` (no preflight); a suffix
  // `bytes=-n` is not, and the preflight cache is per URL: one OPTIONS per shard read that way.
  const page = await browser.newPage();
  try {
    await page.goto(`${pageServer.url}/tests/js/blank.html`);
    const start = manifest.cases.find((x) => x.name === "zp_shard_i64_start");
    const end = manifest.cases.find((x) => x.name === "zp_shard_gzip_end");
    const cog = manifest.cases.find((x) => x.name === "gd_cog_f32_0");
    assert.ok(start && end && cog, "the fixtures zp_shard_i64_start, zp_shard_gzip_end, gd_cog_f32_0");
    dataServer.log.length = 0;
    const got = await page.evaluate(async ([start, end, cog, cogPath]) => {
      const api = await import("/pkg/index.js");
      const window8 = [[0, 8], [0, 8]];
      const a = await api.openArray(start);
      const first = Array.from((await a.get(window8)).data, String);
      const c = await api.openArray(cog, { path: cogPath });
      const tile = Array.from((await c.get([[0, 8], [0, 8]])).data);
      const e = await api.openArray(end);
      const shards = [Array.from((await e.get([[0, 16], [0, 16]])).data), Array.from((await e.get([[64, 80], [0, 16]])).data)];
      return { first, tile, shards };
    }, [`${dataServer.url}/fixtures/${start.path}`, `${dataServer.url}/fixtures/${end.path}`, `${dataServer.url}/fixtures/${cog.path}`, cog.open.path]);
    const expected = (c) => fs.readFileSync(path.join(fixturesDir, c.expected));
    const cut = (flat, width, [y0, y1], [x0, x1]) => {
      const out = [];
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) out.push(flat[y * width + x]);
      return out;
    };
    const i64 = expected(start);
    const i64s = Array.from(new BigInt64Array(i64.buffer.slice(i64.byteOffset, i64.byteOffset + i64.length)), String);
    assert.deepEqual(got.first, cut(i64s, start.shape[1], [0, 8], [0, 8]), "zarr-python's values (index at the start)");
    const f32 = expected(cog);
    assert.deepEqual(got.tile, cut(Array.from(new Float32Array(f32.buffer.slice(f32.byteOffset, f32.byteOffset + f32.length))), cog.shape[cog.shape.length - 1], [0, 8], [0, 8]), "GDAL's values");
    const u16 = expected(end);
    const u16s = Array.from(new Uint16Array(u16.buffer.slice(u16.byteOffset, u16.byteOffset + u16.length)));
    assert.deepEqual(got.shards, [cut(u16s, end.shape[1], [0, 16], [0, 16]), cut(u16s, end.shape[1], [64, 80], [0, 16])], "zarr-python's values (index at the end)");
    const log = dataServer.log.map((e) => ({ method: e.method, path: e.path, range: e.range ?? "" }));
    const under = (c) => log.filter((e) => e.path.startsWith(`/fixtures/${c.path}`));
    for (const c of [start, cog]) {
      const ranged = under(c).filter((e) => e.method === "GET" && e.range !== "");
      assert.ok(ranged.length >= 1, `${c.name}: read by range (${JSON.stringify(under(c))})`);
      assert.ok(ranged.every((e) => /^bytes=\d+-\d*$/.test(e.range)), `${c.name}: single spans with a start only: ${JSON.stringify(ranged)}`);
      assert.deepEqual(under(c).filter((e) => e.method === "OPTIONS"), [], `${c.name}: no preflight`);
    }
    const suffixed = [...new Set(under(end).filter((e) => e.method === "GET" && e.range.startsWith("bytes=-")).map((e) => e.path))].sort();
    const preflighted = under(end).filter((e) => e.method === "OPTIONS").map((e) => e.path).sort();
    assert.equal(suffixed.length, 2, `two shards' indexes read from their ends: ${JSON.stringify(under(end))}`);
    assert.deepEqual(preflighted, suffixed, "one preflight per shard read by a suffix range, none for anything else");
  } finally {
    await page.close();
  }
});

test("requests in flight per origin: 6 where the page cannot see its protocol or it is HTTP/1.1, 16 once its answers show HTTP/2", async () => {
  // A browser keeps 6 connections to an HTTP/1.1 origin and queues the rest itself (unmerged);
  // over HTTP/2 one connection carries them all. The page sees the protocol in resource timing
  // for another origin only when it sends Timing-Allow-Origin.
  const c = manifest.cases.find((x) => x.name === "v3_delta_zlib");
  assert.ok(c, "the fixture v3_delta_zlib (int32, 30 chunks, each its own object)");
  const root = { "/fixtures": path.join(fixturesDir, "data") };
  const slow = { latencyMs: 20 };
  const servers = {
    http1: await startServer({ root, link: slow }),
    http1Timing: await startServer({ root, link: slow, timingAllowOrigin: true }),
    http2: await startServer({ root, link: slow, http2: true }),
    http2Timing: await startServer({ root, link: slow, http2: true, timingAllowOrigin: true }),
  };
  const tls = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, "--ignore-certificate-errors"], headless: true });
  try {
    const raw = fs.readFileSync(path.join(fixturesDir, c.expected));
    const want = Array.from(new Int32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length)));
    const seen = {};
    for (const [name, server] of Object.entries(servers)) {
      const page = await tls.newPage();
      try {
        await page.goto(`${pageServer.url}/tests/js/blank.html`);
        seen[name] = await page.evaluate(async (url) => {
          const api = await import("/pkg/index.js");
          let now = 0;
          let most = 0;
          // Calls under way at once: the library's own limit (the browser's queue comes after).
          const counting = (u, init) => {
            most = Math.max(most, ++now);
            return fetch(u, init).finally(() => now--);
          };
          const a = await api.openArray(url, { fetch: counting });
          // The whole array twice (the protocol is looked for as requests go out).
          await a.get(a.shape.map(() => null));
          most = 0;
          const r = await a.get(a.shape.map(() => null));
          const protocol = performance.getEntriesByType("resource").filter((e) => e.name.startsWith(new URL(url).origin)).map((e) => e.nextHopProtocol).find((p) => p) ?? "";
          return { most, protocol, values: Array.from(r.data) };
        }, `${server.url}/fixtures/${c.path}`);
      } finally {
        await page.close();
      }
      assert.deepEqual(seen[name].values, want, `${name}: zarr-python's values`);
    }
    const summary = Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, { most: v.most, protocol: v.protocol }]));
    assert.deepEqual(summary, {
      http1: { most: 6, protocol: "" },
      http1Timing: { most: 6, protocol: "http/1.1" },
      http2: { most: 6, protocol: "" },
      http2Timing: { most: 16, protocol: "h2" },
    });
  } finally {
    await tls.close();
    for (const s of Object.values(servers)) await s.close();
  }
});

test("warm-up worker: compiles the read path off the page's thread, its reads match their writers' values", async () => {
  dataServer.log.length = 0;
  pageServer.log.length = 0;
  const r = await runPage({ warm: "1" });
  assert.equal(r.failed, 0, report(r));
  assert.equal(r.report.ran, true, report(r));
  assert.equal(r.report.stopped, false);
  // 9 stores (6 Zarr, 2 precomputed, 1 Zarr in a zip): getChunk and get each, decode and cut in
  // the worker's decoder.
  assert.equal(r.report.checked, 36, report(r));
  assert.equal(dataServer.log.length, 0, "the warm-up sent requests to the data server");
  assert.ok(pageServer.log.some((e) => e.path === "/pkg/warm.js"), "the warm-up worker's script was never loaded");
});

test("warm-up worker: setAutoWarmUp(false) right after the import keeps it from starting", async () => {
  pageServer.log.length = 0;
  const r = await runPage({ warm: "off" });
  assert.equal(r.failed, 0, report(r));
  assert.ok(pageServer.log.some((e) => e.path === "/pkg/index.js"), "the page server's log is not recording");
  assert.ok(!pageServer.log.some((e) => e.path === "/pkg/warm.js"), "a warm-up worker started");
});

test("warm-up worker: an open stops it where there is no core to spare (runs on otherwise)", async () => {
  const r = await runPage({ warm: "yield" });
  assert.equal(r.failed, 0, report(r));
  assert.equal(r.count, 1);
});
