// The benchmark page's module: shardfetch (pkg/, plain ES module, no bundler) and zarrita.js
// (bundled by esbuild into bench/.build/zarrita.js), each run through its public API.
// bench/run.mjs calls `window.bench.run(spec)` once per measurement and reads the server's
// request log itself; this page only times, counts long tasks and checksums the output.

const q = new URLSearchParams(location.search);
const pkgUrl = new URL(`${(q.get("pkg") ?? "../pkg").replace(/\/+$/, "")}/index.js`, import.meta.url).href;
// `?only=shardfetch|zarrita`: a cold-start page loads the measured library alone, so that
// neither library's loading (shardfetch's background warm-up, say) runs during the other's run.
const only = q.get("only");
// `?base=<URL of another built package>`: library `shardfetch-baseline` (a before/after run).
const baseUrl = q.get("base") ? new URL(`${q.get("base").replace(/\/+$/, "")}/index.js`, import.meta.url).href : null;
const t0 = performance.now();
const sf = only === "zarrita" || only === "shardfetch-baseline" ? null : await import(pkgUrl);
const sfBase = baseUrl && (only === null || only === "shardfetch-baseline") ? await import(baseUrl) : null;
const t1 = performance.now();
const zarr = only === "shardfetch" ? null : await import("./.build/zarrita.js");
const t2 = performance.now();
const importMs = { shardfetch: t1 - t0, zarrita: t2 - t1 };
// `&settle=MS`: idle that long after the import, so that what a library goes on loading in the
// background (shardfetch: compiling its module, then its warm-up worker) is done, as in a page
// that opens its data some time after it loaded. bench/cold.mjs --wait 0 measures the other case.
await new Promise((r) => setTimeout(r, Number(q.get("settle") ?? 0)));

import { checksum } from "./checksum.mjs";

// --- the libraries behind one interface --------------------------------------------------------

/**
 * `open(url)` → { getChunk(coords) → {data, shape, stride}, get(selection) → same, close() }.
 * Selections use shardfetch's form (null | index | [start, stop]); zarrita's are derived.
 */
const LIBS = {
  shardfetch: (opts, lib = sf) => ({
    async open(url, openOptions) {
      // `openOptions`: how the run's layout is opened (`--layout icechunk`: { store, path }).
      const arr = await lib.openArray(url, { ...opts, ...openOptions });
      return {
        getChunk: (c) => arr.getChunk(c),
        get: (sel) => arr.get(sel),
        stats: () => arr.stats(),
        close: () => arr.close(),
      };
    },
  }),
  zarrita: (tuned) => ({
    async open(url) {
      let store;
      if (/\.(zip|ozx)$/.test(url)) {
        // A stored zip of the store (`--layout zip`): zarrita's own zip store.
        store = await zarr.ZipFileStore.fromUrl(url);
        if (tuned) store = zarr.withRangeCoalescing(store);
      } else {
        store = new zarr.FetchStore(url, tuned ? { useSuffixRequest: true } : {});
        if (tuned) store = zarr.withRangeCoalescing(store);
      }
      const arr = await zarr.open.v3(store, { kind: "array" });
      const toZ = (sel) => sel.map((s) => (s === null ? null : typeof s === "number" ? s : zarr.slice(s[0], s[1])));
      return {
        // zarrita's own chunk read (an inner chunk of a shard: its index, then the chunk).
        getChunk: (c) => arr.getChunk(c),
        get: (sel) => zarr.get(arr, toZ(sel)),
        stats: () => null,
        close: () => {},
      };
    },
  }),
};

function library(name) {
  switch (name) {
    case "shardfetch":
      return LIBS.shardfetch({});
    case "shardfetch-noworkers":
      return LIBS.shardfetch({ workers: false });
    case "shardfetch-baseline":
      return LIBS.shardfetch({}, sfBase);
    case "zarrita":
      return LIBS.zarrita(false);
    case "zarrita-tuned":
      return LIBS.zarrita(true);
    default: {
      // shardfetch-gap<N>k: shardfetch with mergeGap N KiB (to measure the default).
      const gap = /^shardfetch-gap(\d+)k$/.exec(name);
      if (gap) return LIBS.shardfetch({ mergeGap: Number(gap[1]) * 1024 });
      // shardfetch-workers<N>: N decoding workers whatever the chunk size (to measure the
      // small-chunk policy, which decodes chunks under 32 KiB inline by default).
      const workers = /^shardfetch-workers(\d+)$/.exec(name);
      if (workers) return LIBS.shardfetch({ workers: Number(workers[1]) });
      // shardfetch[-baseline]-inflight<N>: maxInFlight N (Chromium keeps 6 connections per
      // HTTP/1.1 origin: at 6, requests wait in the library, where they can merge).
      const inflight = /^shardfetch(-baseline)?-inflight(\d+)$/.exec(name);
      if (inflight) return LIBS.shardfetch({ maxInFlight: Number(inflight[2]) }, inflight[1] ? sfBase : undefined);
      throw new Error(`unknown library ${name}`);
    }
  }
}

// --- workloads ---------------------------------------------------------------------------------

function chunkGrid(info) {
  const grid = info.shape.map((n, k) => Math.ceil(n / info.chunkShape[k]));
  const out = [];
  const idx = grid.map(() => 0);
  const total = grid.reduce((a, b) => a * b, 1);
  for (let i = 0; i < total; i++) {
    out.push([...idx]);
    for (let d = grid.length - 1; d >= 0; d--) {
      if (++idx[d] < grid[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

const bytesOf = (r) => r.shape.reduce((a, b) => a * b, 1) * r.data.BYTES_PER_ELEMENT;

/**
 * One measurement (then call `finish`). Returns the elapsed ms.
 * `spec`: { lib, dataset, workload, url, openOptions?, info (the dataset's bench.json), inflight }.
 */
async function run(spec) {
  const { info, workload } = spec;
  const lib = library(spec.lib);
  let results;
  let outBytes = 0;
  // The previous run's garbage (tens of MiB of output) is collected here, not inside this run.
  window.gc?.();
  const start = performance.now();
  const arr = await lib.open(spec.url, spec.openOptions);
  if (workload === "full") {
    results = await arr.get(info.shape.map(() => null));
    outBytes = bytesOf(results);
  } else if (workload === "tiles") {
    const coords = chunkGrid(info);
    results = new Array(coords.length);
    let next = 0;
    const inflight = spec.inflight ?? 16;
    const lane = async () => {
      while (next < coords.length) {
        const i = next++;
        results[i] = await arr.getChunk(coords[i]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(inflight, coords.length) }, lane));
    for (const r of results) outBytes += bytesOf(r);
  } else if (workload === "windows") {
    results = [];
    for (const w of info.windows) {
      const r = await arr.get(w.selection);
      results.push(r);
      outBytes += bytesOf(r);
    }
  } else if (workload === "cold") {
    results = await arr.getChunk(info.shape.map(() => 0));
    outBytes = bytesOf(results);
  } else throw new Error(`unknown workload ${workload}`);
  const end = performance.now();
  const stats = arr.stats();
  arr.close();
  pending = { spec, start, end, results, outBytes, stats };
  return end - start;
}

/** The run's state between `run` (timed) and `finish` (checks; after a profile has stopped). */
let pending = null;

/**
 * Completes the last `run`: returns { ms, outBytes, ok, got?, want?, longTaskMs, longTasks, libStats }.
 */
async function finish() {
  const { spec, start, end, results, outBytes, stats } = pending;
  const { info, workload } = spec;
  pending = null;
  // Long tasks are reported after they end: give the observer a moment.
  await new Promise((r) => setTimeout(r, 60));
  const tasks = window.__longTasks.filter((t) => t.start + t.duration > start && t.start < end);
  const longTaskMs = tasks.reduce((a, t) => a + Math.min(end, t.start + t.duration) - Math.max(start, t.start), 0);

  // Correctness: the writer's checksums (bench.json), never another reader's.
  let got;
  let want;
  if (workload === "full") {
    got = checksum(results.data, results.shape, results.stride);
    want = info.full;
  } else if (workload === "cold") {
    got = checksum(results.data, results.shape, results.stride);
    want = info.firstChunk;
  } else if (workload === "tiles") {
    let t = 0;
    results.forEach((r, c) => {
      const [h, s] = checksum(r.data, r.shape, r.stride);
      t = (t + Math.imul(h, c + 1) + s) >>> 0;
    });
    got = t;
    want = info.tiles;
  } else {
    got = results.map((r) => checksum(r.data, r.shape, r.stride));
    want = info.windows.map((w) => w.checksum);
  }
  const ok = JSON.stringify(got) === JSON.stringify(want);
  return {
    ms: end - start,
    outBytes,
    ok,
    got: ok ? undefined : got,
    want: ok ? undefined : want,
    longTaskMs,
    longTasks: tasks.length,
    libStats: stats,
  };
}

// --- decoder throughput (bench/run.mjs --decoders) ----------------------------------------------

/** Every file of a dataset, fetched once into memory: path under the dataset → bytes. */
async function loadFiles(url, info) {
  const files = new Map();
  const grid = info.shape.map((n, k) => n / info.shardShape[k]);
  const shards = chunkGrid({ shape: grid, chunkShape: grid.map(() => 1) });
  const names = ["zarr.json", ...shards.map((c) => `c/${c.join("/")}`)];
  await Promise.all(
    names.map(async (n) => {
      const r = await fetch(`${url}/${n}`, { cache: "no-store" });
      if (!r.ok) throw new Error(`${url}/${n}: HTTP ${r.status}`);
      files.set(n, new Uint8Array(await r.arrayBuffer()));
    }),
  );
  return files;
}

/** A `fetch` answering from memory (Range: `bytes=a-b` / `bytes=-n`), for both libraries. */
function memoryFetch(base, files) {
  return async (input, init = {}) => {
    const req = input instanceof Request ? input : null;
    const url = req ? req.url : String(input);
    const method = req ? req.method : (init.method ?? "GET");
    const h = req ? req.headers : new Headers(init.headers ?? {});
    const key = url.slice(base.length + 1).replace(/\?.*$/, "");
    const body = files.get(key);
    if (!body) return new Response("not found", { status: 404 });
    const range = h.get("range");
    let a = 0;
    let b = body.length - 1;
    let status = 200;
    const headers = { "Content-Type": "application/octet-stream" };
    if (range) {
      const m = /^bytes=(\d*)-(\d*)$/.exec(range);
      if (m[1] === "") a = Math.max(0, body.length - Number(m[2]));
      else {
        a = Number(m[1]);
        if (m[2] !== "") b = Math.min(b, Number(m[2]));
      }
      status = 206;
      headers["Content-Range"] = `bytes ${a}-${b}/${body.length}`;
    }
    headers["Content-Length"] = String(b - a + 1);
    return new Response(method === "HEAD" ? null : body.slice(a, b + 1), { status, headers });
  };
}

/** The stored payload of every inner chunk (C order), cut with the shard index (at the end, crc32c). */
function payloads(info, files) {
  const perShard = info.shardShape.map((n, k) => n / info.chunkShape[k]);
  const n = perShard.reduce((a, b) => a * b, 1);
  const out = [];
  for (const c of chunkGrid(info)) {
    const shard = c.map((x, k) => Math.floor(x / perShard[k]));
    const local = c.map((x, k) => x % perShard[k]);
    const bytes = files.get(`c/${shard.join("/")}`);
    const idx = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - (16 * n + 4), 16 * n);
    let lin = 0;
    for (let k = 0; k < local.length; k++) lin = lin * perShard[k] + local[k];
    const off = Number(idx.getBigUint64(16 * lin, true));
    const len = Number(idx.getBigUint64(16 * lin + 8, true));
    out.push(bytes.subarray(off, off + len));
  }
  return out;
}

const passMedian = async (passes, fn) => {
  const t = [];
  for (let p = 0; p < passes; p++) {
    window.gc?.();
    const s = performance.now();
    await fn();
    t.push(performance.now() - s);
  }
  t.sort((a, b) => a - b);
  return { ms: t[t.length >> 1], all: t };
};

/**
 * Decode-throughput measurements on one dataset held in memory (no network): every inner chunk
 * read one after another, `passes` times; the median pass is reported.
 *   shardfetch / zarrita: getChunk / zarr.get per chunk through the public API with an in-memory
 *     `fetch` (workers off), so a compressed dataset minus its uncompressed twin is the decode cost;
 *   DecompressionStream (gzip payloads) and zarrita's own zstd and blosc codecs (numcodecs.js, the C
 *     libraries built with emscripten) on the raw chunk payloads.
 */
async function decoders(spec) {
  const { info, url, passes = 5 } = spec;
  const files = await loadFiles(url, info);
  const coords = chunkGrid(info);
  const out = { dataset: info.name, decodedBytes: info.decodedBytes, storedBytes: info.storedBytes, chunks: coords.length };
  const fetchFn = memoryFetch(url, files);

  const sfArr = await sf.openArray(url, { fetch: fetchFn, workers: false });
  for (const c of coords) await sfArr.getChunk(c); // warm: indexes cached
  out.shardfetch = await passMedian(passes, async () => {
    for (const c of coords) await sfArr.getChunk(c);
  });
  sfArr.close();

  let store = new zarr.FetchStore(url, { fetch: fetchFn, useSuffixRequest: true });
  const zArr = await zarr.open.v3(store, { kind: "array" });
  const cs = info.chunkShape;
  const zget = (c) => zarr.get(zArr, c.map((i, k) => zarr.slice(i * cs[k], (i + 1) * cs[k])));
  for (const c of coords) await zget(c);
  out.zarrita = await passMedian(passes, async () => {
    for (const c of coords) await zget(c);
  });

  // shardfetch's decoder alone (the one its workers run), on the same payloads: copy in, decode,
  // copy out; no fetch, no cache, no cut.
  {
    const raw = payloads(info, files);
    // An instance of its own (the package's is private): the glue factory, as the wrapper does.
    const { createGlue } = await import(new URL("wasm/factory.js", pkgUrl).href);
    const glue = createGlue(() => {});
    await glue.default({ module_or_path: new URL("wasm/shardfetch_bg.wasm", pkgUrl) });
    const { WasmDecoder } = glue;
    const doc = new TextDecoder().decode(files.get("zarr.json"));
    const dec = new WasmDecoder(JSON.stringify({ format: "zarr3", path: "", doc }));
    if (dec.decode(coords[0], raw[0]).bytes.length !== info.decodedBytes / coords.length) throw new Error("WasmDecoder: wrong length");
    out.shardfetchDecoder = await passMedian(passes, async () => {
      for (let i = 0; i < raw.length; i++) dec.decode(coords[i], raw[i]);
    });
    dec.free();
  }

  const codec = info.codec[0];
  if (codec === "gzip") {
    const raw = payloads(info, files);
    const ds = async (p) => new Uint8Array(await new Response(new Blob([p]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer());
    const check = await ds(raw[0]);
    if (check.length !== info.decodedBytes / coords.length) throw new Error("DecompressionStream: wrong length");
    out.decompressionStream = await passMedian(passes, async () => {
      for (const p of raw) await ds(p);
    });
    out.decompressionStreamConcurrent = await passMedian(passes, async () => {
      await Promise.all(raw.map(ds));
    });
  }
  if (codec === "zstd") {
    const raw = payloads(info, files);
    const Zstd = await zarr.registry.get("zstd")();
    const z = Zstd.fromConfig({ level: 0, checksum: false });
    out.numcodecsZstd = await passMedian(passes, async () => {
      for (const p of raw) await z.decode(p);
    });
  }
  if (codec === "blosc") {
    const raw = payloads(info, files);
    const Blosc = await zarr.registry.get("blosc")();
    const b = Blosc.fromConfig({ cname: "lz4", clevel: 5, shuffle: 1, blocksize: 0 }); // decode reads the frame header
    out.numcodecsBlosc = await passMedian(passes, async () => {
      for (const p of raw) await b.decode(p);
    });
  }
  return out;
}

window.bench = {
  run,
  finish,
  decoders,
  importMs,
  versions: { zarrita: zarr?.__version ?? null },
  hardwareConcurrency: navigator.hardwareConcurrency,
  longTaskSupported: window.__longTaskError === undefined,
};
document.getElementById("out").textContent = `ready (shardfetch from ${pkgUrl})`;
window.__benchReady = true;
