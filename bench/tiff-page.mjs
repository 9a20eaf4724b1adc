// The COG benchmark page's module (bench/tiff.html): shardfetch (a built package, plain ES module)
// and geotiff.js (bundled by esbuild into bench/.build/geotiff.js), each through its public API.
// bench/tiff.mjs opens a fresh browser context per measurement, calls `window.bench.run(spec)`
// (timed from the library's import to the last pixel) and then `window.bench.finish()` (checks);
// requests and bytes come from the data server's log, never from here.

import { checksum } from "./checksum.mjs";

const q = new URLSearchParams(location.search);
const pkgUrl = new URL(`${(q.get("pkg") ?? "../pkg").replace(/\/+$/, "")}/index.js`, import.meta.url).href;
const geotiffUrl = new URL("./.build/geotiff.js", import.meta.url).href;

// --- the libraries behind one interface --------------------------------------------------------

/**
 * `open(url, info)` → { importMs, full(), tile(ty, tx), window(level, [[y0, y1], [x0, x1]]), close() },
 * each read giving { data, shape: [h, w], stride: [sy, sx] } (element strides).
 */
const shardfetch = (options) => ({
  async open(url) {
    const t = performance.now();
    const sf = await import(pkgUrl);
    const importMs = performance.now() - t;
    // A COG with overviews is a group whose children "0", "1", … are its levels.
    const root = await sf.open(url, options);
    const levels = new Map();
    const level = (k) => {
      if (!levels.has(k)) levels.set(k, root instanceof sf.ShardedArray && k === 0 ? Promise.resolve(root) : root.openArray(String(k)));
      return levels.get(k);
    };
    return {
      importMs,
      full: async () => (await level(0)).get([null, null]),
      tile: async (ty, tx) => (await level(0)).getChunk([ty, tx]),
      window: async (k, sel) => (await level(k)).get(sel),
      async close() {
        for (const a of levels.values()) (await a).close();
        if (!(root instanceof sf.ShardedArray)) root.close();
      },
    };
  },
});

/**
 * geotiff.js's fetch client with `cache: "no-store"`: its own FetchClient leaves the default cache
 * mode, under which Chrome's HTTP cache lets one request of a URL through at a time.
 */
function noStoreClient(gt, url) {
  class NoStoreResponse extends gt.BaseResponse {
    constructor(response) {
      super();
      this.response = response;
    }
    get status() {
      return this.response.status;
    }
    getHeader(name) {
      return this.response.headers.get(name) ?? undefined;
    }
    getData() {
      return this.response.arrayBuffer();
    }
  }
  class NoStoreClient extends gt.BaseClient {
    async request({ headers, signal } = {}) {
      return new NoStoreResponse(await fetch(this.url, { headers, signal, cache: "no-store" }));
    }
  }
  return new NoStoreClient(url);
}

/**
 * geotiff.js: fromUrl(url, source) + readRasters({ window, pool }); image k is level k (GDAL's IFD
 * order). `noStore`: fromCustomClient with {@link noStoreClient} instead of fromUrl.
 */
const geotiff = (source, usePool, noStore = false) => ({
  async open(url, info) {
    const t = performance.now();
    const gt = await import(geotiffUrl);
    const importMs = performance.now() - t;
    const tiff = noStore ? await gt.fromCustomClient(noStoreClient(gt, url), source) : await gt.fromUrl(url, source);
    // Its own worker pool (navigator.hardwareConcurrency workers), started inside the timing.
    const pool = usePool ? new gt.Pool() : null;
    const images = new Map();
    const image = (k) => {
      if (!images.has(k)) images.set(k, tiff.getImage(k));
      return images.get(k);
    };
    const read = async (k, window) => {
      const r = await (await image(k)).readRasters({ window, interleave: true, pool });
      return { data: r, shape: [r.height, r.width], stride: [r.width, 1] };
    };
    const [th, tw] = info.tileShape;
    return {
      importMs,
      full: () => read(0, undefined),
      // Its tile read: readRasters of the tile's window (getTileOrStrip needs decoder parameters
      // its package does not export).
      tile: (ty, tx) => read(0, [tx * tw, ty * th, (tx + 1) * tw, (ty + 1) * th]),
      window: (k, [[y0, y1], [x0, x1]]) => read(k, [x0, y0, x1, y1]),
      async close() {
        await pool?.destroy();
        tiff.close();
      },
    };
  },
});

/** geotiff.js's BlockedSource with 64 KiB blocks (geotiff.js 2.x's default; 3.x has none by default). */
const BLOCKED = { blockSize: 65536 };

const LIBS = {
  shardfetch: shardfetch({}),
  "shardfetch-noworkers": shardfetch({ workers: false }),
  geotiff: geotiff({}, false),
  "geotiff-pool": geotiff({}, true),
  "geotiff-blocked": geotiff(BLOCKED, false),
  "geotiff-blocked-pool": geotiff(BLOCKED, true),
  "geotiff-blocked-nostore": geotiff(BLOCKED, false, true),
  "geotiff-blocked-nostore-pool": geotiff(BLOCKED, true, true),
};

// --- workloads ---------------------------------------------------------------------------------

const bytesOf = (r) => r.shape[0] * r.shape[1] * r.data.BYTES_PER_ELEMENT;

/** The tile grid of level 0, C order. */
function tileGrid(info) {
  const [ny, nx] = info.shape.map((n, k) => Math.ceil(n / info.tileShape[k]));
  const out = [];
  for (let y = 0; y < ny; y++) for (let x = 0; x < nx; x++) out.push([y, x]);
  return out;
}

let pending = null;

/**
 * One measurement: `spec` = { lib, workload, url, info (the dataset's <name>.json), inflight }.
 * Returns the elapsed ms (from the library's import to the last pixel).
 */
async function run(spec) {
  const { info, workload } = spec;
  const lib = LIBS[spec.lib];
  if (!lib) throw new Error(`unknown library ${spec.lib}`);
  window.gc?.();
  const start = performance.now();
  const reader = await lib.open(spec.url, info);
  let results;
  let where; // [level, y0, x0, h, w] of each result, for the checks
  if (workload === "full") {
    results = [await reader.full()];
    where = [[0, 0, 0, ...info.shape]];
  } else if (workload === "cold") {
    results = [await reader.tile(0, 0)];
    where = [[0, 0, 0, ...info.tileShape]];
  } else if (workload === "tiles") {
    // Every tile of level 0 with its own read, `inflight` at a time (as bench/run.mjs's tiles).
    const coords = tileGrid(info);
    results = new Array(coords.length);
    let next = 0;
    const lane = async () => {
      while (next < coords.length) {
        const i = next++;
        results[i] = await reader.tile(...coords[i]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(spec.inflight ?? 16, coords.length) }, lane));
    where = coords.map(([y, x]) => [0, y * info.tileShape[0], x * info.tileShape[1], ...info.tileShape]);
  } else if (workload === "windows") {
    // A viewer's views one after another, each on its level's image.
    results = [];
    for (const w of info.windows) results.push(await reader.window(w.level, w.selection));
    where = info.windows.map(({ level, selection: [[y0, y1], [x0, x1]] }) => [level, y0, x0, y1 - y0, x1 - x0]);
  } else throw new Error(`unknown workload ${workload}`);
  const end = performance.now();
  await reader.close();
  pending = { spec, start, end, results, where, importMs: reader.importMs };
  return end - start;
}

/** GDAL's decoded levels of a lossy file (bench/generate_tiff.py), from the page's origin. */
async function reference(info, level) {
  const r = await fetch(new URL(`./data-tiff/${info.reference}/${level}.raw`, import.meta.url), { cache: "no-store" });
  if (!r.ok) throw new Error(`reference level ${level}: HTTP ${r.status}`);
  const buf = await r.arrayBuffer();
  return info.dtype === "uint16" ? new Uint16Array(buf) : new Uint8Array(buf);
}

/** Largest |result − reference| over a result placed at (y0, x0) of its level. */
function maxDiff(r, ref, width, y0, x0) {
  const [h, w] = r.shape;
  const [sy, sx] = r.stride;
  let m = 0;
  for (let y = 0; y < h; y++) {
    const a = y * sy;
    const b = (y0 + y) * width + x0;
    for (let x = 0; x < w; x++) {
      const d = Math.abs(r.data[a + x * sx] - ref[b + x]);
      if (d > m) m = d;
    }
  }
  return m;
}

/**
 * Checks the last run: { ms, importMs, outBytes, ok, exact, maxDiff?, got?, want?, longTaskMs }.
 * Lossless files: the generator's checksums. Lossy (JPEG): every pixel within `tolerance` of GDAL's
 * decoded values (`exact`: the checksums equal GDAL's too).
 */
async function finish() {
  const { spec, start, end, results, where, importMs } = pending;
  const { info, workload } = spec;
  pending = null;
  await new Promise((r) => setTimeout(r, 60)); // long tasks are reported after they end
  const tasks = window.__longTasks.filter((t) => t.start + t.duration > start && t.start < end);
  const longTaskMs = tasks.reduce((a, t) => a + Math.min(end, t.start + t.duration) - Math.max(start, t.start), 0);
  const outBytes = results.reduce((a, r) => a + bytesOf(r), 0);
  const sums = results.map((r) => checksum(r.data, r.shape, r.stride));
  let got;
  let want;
  if (workload === "full" || workload === "cold") {
    got = sums[0];
    want = workload === "full" ? info.full : info.firstTile;
  } else if (workload === "tiles") {
    got = sums.reduce((t, [h, s], c) => (t + Math.imul(h, c + 1) + s) >>> 0, 0);
    want = info.tiles;
  } else {
    got = sums;
    want = info.windows.map((w) => w.checksum);
  }
  const shaped = results.every((r, i) => r.shape[0] === where[i][3] && r.shape[1] === where[i][4]);
  const exact = shaped && JSON.stringify(got) === JSON.stringify(want);
  const out = { ms: end - start, importMs, outBytes, exact, ok: exact, longTaskMs, longTasks: tasks.length };
  if (info.reference) {
    const refs = new Map();
    let m = 0;
    for (let i = 0; i < results.length; i++) {
      const [k, y0, x0] = where[i];
      if (!refs.has(k)) refs.set(k, await reference(info, k));
      m = Math.max(m, maxDiff(results[i], refs.get(k), info.levels[k][1], y0, x0));
    }
    out.maxDiff = m;
    out.ok = shaped && m <= info.tolerance;
  }
  if (!out.ok) Object.assign(out, { got, want });
  return out;
}

window.bench = { run, finish, hardwareConcurrency: navigator.hardwareConcurrency, longTaskSupported: window.__longTaskError === undefined };
document.getElementById("out").textContent = `ready (shardfetch from ${pkgUrl})`;
window.__benchReady = true;
