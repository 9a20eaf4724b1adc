// The decoders kept outside the module (issue 21): jpeg, png, jxl, bz2, lzma, pcodec, compresso, parquet, hdf5, webp, lerc, tiff, ccitt and netcdf3 are wasm
// modules of their own in the package (pkg/wasm/decoders/), fetched when an opened array names
// them. Every fixture that needs one reads its writer's values through pkg/ in Node (inline and
// worker_threads) and in headless Chromium with the decoding workers; a page that opens only a
// zstd array fetches no decoder module; a module that fails to load is a typed error naming the
// decoder and its URL, and the next open tries again.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../server.mjs";
import { checkFixtures, loadManifests, neededDecoder } from "./check-fixtures.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const fixturesDir = path.join(repo, "tests/fixtures");
const pkg = path.join(repo, "pkg/index.js");
const manifest = await loadManifests(async (rel) => JSON.parse(fs.readFileSync(path.join(fixturesDir, rel), "utf8")));
const loadExpected = async (rel) => new Uint8Array(fs.readFileSync(path.join(fixturesDir, rel)));
/** The cases that need a decoder module. */
const only = { cases: manifest.cases.filter((c) => neededDecoder(c)), groups: [] };
const DECODERS = ["jpeg", "png", "jxl", "bz2", "lzma", "pcodec", "compresso", "parquet", "hdf5", "webp", "lerc", "tiff", "ccitt", "netcdf3"];

let api;
let data;
let pages;
let browser;

before(async () => {
  api = await import(pathToFileURL(pkg).href);
  data = await startServer({ root: { "/fixtures": path.join(fixturesDir, "data"), "/fx": fixturesDir } });
  pages = await startServer({ root: { "/": repo } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
});

after(async () => {
  await browser?.close();
  await data?.close();
  await pages?.close();
});

test("the package carries every decoder module, and fixtures by their writers need each", () => {
  for (const d of DECODERS) {
    assert.ok(fs.existsSync(path.join(repo, `pkg/wasm/decoders/${d}.wasm`)), `pkg/wasm/decoders/${d}.wasm`);
    assert.ok(only.cases.some((c) => neededDecoder(c) === d), `no fixture needs ${d}`);
  }
  const pkgJson = JSON.parse(fs.readFileSync(path.join(repo, "pkg/package.json"), "utf8"));
  assert.ok(pkgJson.files.includes("wasm/"), "the modules are in the published files");
});

for (const [label, open] of [["inline", { workers: false }], ["worker_threads", { workers: 2 }]]) {
  test(`Node (${label}): every fixture that needs a decoder module reads its writer's values through pkg/`, async () => {
    assert.ok(only.cases.length > 0, "no fixture needs a decoder module");
    const r = await checkFixtures(api, `${data.url}/fixtures`, only, loadExpected, { open });
    assert.equal(r.count, only.cases.length);
    assert.equal(r.failed, 0, r.failures.join("\n"));
  });
}

/** Open browser.html with `query`; its result, and the decoder modules the page fetched. */
async function runPage(query, setup = async () => {}) {
  const page = await browser.newPage();
  const logs = [];
  page.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && logs.push(`console: ${m.text()}`));
  await setup(page);
  pages.log.length = 0;
  await page.goto(`${pages.url}/tests/js/browser.html?${new URLSearchParams({ data: data.url, ...query })}`);
  const r = await (await page.waitForFunction(() => window.__shardfetchResult, null, { timeout: 240_000, polling: 200 })).jsonValue();
  const fetched = pages.log.filter((e) => e.path.startsWith("/pkg/wasm/decoders/")).map((e) => path.basename(e.path, ".wasm"));
  await page.close();
  return { r, logs, fetched };
}

test("headless Chromium (decoding workers): every fixture that needs a decoder module reads its writer's values; each module fetched once", async () => {
  assert.ok(only.cases.length > 0, "no fixture needs a decoder module");
  const { r, logs, fetched } = await runPage({ decoders: "1", workers: "2" });
  assert.equal(r.count, only.cases.length, `${r.count} cases ran\n${logs.join("\n")}`);
  assert.equal(r.failed, 0, [...r.failures, ...logs].join("\n"));
  assert.ok(r.workerJobs > 0, "decoded in the workers");
  // Once per page, whatever the arrays and workers (they are handed the compiled modules).
  assert.deepEqual([...fetched].sort(), [...DECODERS].sort(), `decoder modules fetched: ${fetched}`);
});

test("a page that opens only a zstd array fetches no decoder module", async () => {
  const zstd = manifest.cases.find((c) => c.features.includes("codec_zstd") || c.name.includes("zstd"));
  assert.ok(zstd, "a zstd case");
  const { r, fetched } = await runPage({ cases: zstd.name, workers: "2" });
  assert.equal(r.failed, 0, r.failures.join("\n"));
  assert.equal(r.count, 1);
  assert.deepEqual(fetched, [], `decoder modules fetched: ${fetched}`);
});

test("a decoder module that fails to load is a typed error naming it and its URL; the next open loads it", async () => {
  const jxl = only.cases.find((c) => neededDecoder(c) === "jxl");
  const page = await browser.newPage();
  let refused = 0;
  await page.route("**/pkg/wasm/decoders/jxl.wasm", (route) => {
    if (refused++ === 0) return route.fulfill({ status: 503, body: "unavailable" });
    return route.continue();
  });
  await page.goto(`${pages.url}/tests/js/blank.html`);
  const out = await page.evaluate(
    async ({ url, open }) => {
      const api = await import("/pkg/index.js");
      const first = await api.openArray(url, open).then(
        () => ({ ok: true }),
        (e) => ({ code: e.code, message: e.message }),
      );
      const arr = await api.openArray(url, open);
      const r = await arr.get(arr.shape.map(() => null));
      return { first, second: r.data.length };
    },
    { url: `${data.url}/fixtures/${jxl.path}`, open: jxl.open ?? {} },
  );
  await page.close();
  assert.equal(out.first.ok, undefined, "the first open failed");
  assert.equal(out.first.code, "Network", out.first.message);
  assert.match(out.first.message, /jxl/);
  assert.match(out.first.message, /\/pkg\/wasm\/decoders\/jxl\.wasm/);
  assert.ok(out.second > 0, "the second open read the array");
  assert.equal(refused, 2, "the module was asked for again after the failure");
});

test("Node: a decoder module missing from the package's files is a typed error naming it; the next open loads it", async () => {
  const jxl = only.cases.find((c) => neededDecoder(c) === "jxl");
  fs.mkdirSync(path.join(repo, "tests/.tmp"), { recursive: true });
  const copy = fs.mkdtempSync(path.join(repo, "tests/.tmp", "pkg-"));
  try {
    fs.cpSync(path.join(repo, "pkg"), copy, { recursive: true });
    const module = path.join(copy, "wasm/decoders/jxl.wasm");
    const saved = fs.readFileSync(module);
    fs.rmSync(module);
    const lib = await import(pathToFileURL(path.join(copy, "index.js")).href);
    const url = `${data.url}/fixtures/${jxl.path}`;
    await assert.rejects(lib.openArray(url, jxl.open ?? {}), (e) => {
      assert.equal(e.code, "Network", e.message);
      assert.ok(e.message.includes(pathToFileURL(module).href), e.message);
      return true;
    });
    fs.writeFileSync(module, saved);
    const arr = await lib.openArray(url, jxl.open ?? {});
    const r = await arr.get(arr.shape.map(() => null));
    assert.deepEqual(new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength), await loadExpected(jxl.expected));
    arr.close();
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
});

test("the raster module reads every sample type the map adapters hand it (the wrapper's type codes and the module's agree)", async () => {
  // Four values per type, a 2×2 tile of one band, not normalised: the module's float32 output
  // is the values themselves. float16 as bits: 1.5, −2, 0.25, 65504.
  const cases = {
    uint8: new Uint8Array([0, 1, 200, 255]),
    bool: new Uint8Array([0, 1, 1, 0]),
    int8: new Int8Array([-128, -1, 5, 127]),
    uint16: new Uint16Array([0, 300, 40000, 65535]),
    int16: new Int16Array([-32768, -300, 7, 32767]),
    uint32: new Uint32Array([0, 70000, 3e9, 4294967295]),
    int32: new Int32Array([-2147483648, -70000, 9, 2147483647]),
    uint64: new BigUint64Array([0n, 5n, 1n << 40n, 123456789n]),
    int64: new BigInt64Array([-(1n << 40n), -5n, 0n, 77n]),
    float16: new Uint16Array([0x3e00, 0xc000, 0x3400, 0x7bff]),
    float32: new Float32Array([-1.5, 0.1, 1e30, 3]),
    float64: new Float64Array([-2.25, 1e-3, 65536.5, 7]),
  };
  const f16 = [1.5, -2, 0.25, 65504];
  for (const [dtype, data] of Object.entries(cases)) {
    const place = { data, dtype, offset: 0, rowStride: 2, colStride: 1, rows: 2, cols: 2, flip: false };
    const out = await api.__composeTile("test://raster", 2, 2, [{ nodata: null, gain: 1, bias: 0 }], [place], false, false);
    const want = dtype === "float16" ? f16 : Array.from(data, (v) => Math.fround(Number(v)));
    assert.deepEqual(Array.from(out), want, dtype);
  }
  await assert.rejects(
    api.__composeTile("test://raster", 1, 1, [{ nodata: null, gain: 1, bias: 0 }], [{ data: new Uint8Array(1), dtype: "complex64", offset: 0, rowStride: 1, colStride: 1, rows: 1, cols: 1, flip: false }], false, false),
    (e) => e.code === "UnsupportedDataType" && e.message.includes("test://raster"),
  );
});
