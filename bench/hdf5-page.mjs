// The HDF5 benchmark page's module (bench/hdf5.mjs drives it): shardfetch (pkg/, plain ES
// module) and h5wasm (its ESM build, unbundled) behind one interface, time steps drawn to a
// canvas. No library is imported before `first()`, whose time starts at the import.
// bench/hdf5.mjs reads requests and bytes from the data server's log; this page only times,
// marks phase boundaries (epoch ms, to split that log) and checksums the values.
import { checksum } from "./checksum.mjs";

const q = new URLSearchParams(location.search);
const pkgUrl = new URL(`${(q.get("pkg") ?? "../pkg").replace(/\/+$/, "")}/index.js`, import.meta.url).href;
const h5Url = new URL(`${(q.get("h5") ?? "/h5wasm").replace(/\/+$/, "")}/dist/esm/hdf5_hl.js`, import.meta.url).href;

/** Epoch ms (comparable with the data server's clock and a worker's). */
const now = () => performance.timeOrigin + performance.now();

// --- the libraries: load(marks) → { open(url, variable) → { read(t) → {data, shape, stride?}, close() } }

const LIBS = {
  async shardfetch() {
    const sf = await import(pkgUrl);
    return {
      async open(url, variable) {
        const arr = await sf.openArray(url, { path: `/${variable}` });
        return { read: (t) => arr.get([t, null, null]), close: () => arr.close() };
      },
    };
  },

  /** h5wasm's whole-file mode (its README): fetch the file, FS.writeFile, File(name, "r"). */
  async "h5wasm-whole"(marks) {
    const h5 = (await import(h5Url)).default;
    const { FS } = await h5.ready;
    return {
      async open(url, variable) {
        const res = await fetch(url);
        if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
        const bytes = new Uint8Array(await res.arrayBuffer());
        marks.push(["download", now()]);
        const name = url.replace(/^.*\//, "");
        FS.writeFile(name, bytes);
        const file = new h5.File(name, "r");
        const ds = file.get(variable);
        const shape = ds.shape;
        return {
          read: async (t) => ({ data: ds.slice([[t, t + 1], [], []]), shape: [1, ...shape.slice(1)] }),
          close: () => {
            file.close();
            FS.unlink(name);
          },
        };
      },
    };
  },

  /** h5wasm's lazy-file mode: Emscripten's createLazyFile (synchronous XHR, 1 MiB blocks) in a worker. */
  async "h5wasm-lazy"(marks) {
    const worker = new Worker(new URL("./hdf5-worker.mjs", import.meta.url), { type: "module" });
    const waiting = new Map();
    let next = 0;
    worker.onmessage = ({ data }) => {
      const p = waiting.get(data.id);
      waiting.delete(data.id);
      if (data.error) p.reject(new Error(`h5wasm worker: ${data.error}`));
      else p.resolve(data);
    };
    worker.onerror = (e) => {
      for (const p of waiting.values()) p.reject(new Error(`h5wasm worker: ${e.message ?? "error"}`));
      waiting.clear();
    };
    const call = (msg) =>
      new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        worker.postMessage({ ...msg, id });
      });
    await call({ op: "import", h5: h5Url });
    return {
      async open(url, variable) {
        const r = await call({ op: "open", url, variable });
        marks.push(...r.marks);
        return {
          read: async (t) => {
            const r = await call({ op: "read", t });
            return { data: r.data, shape: r.shape };
          },
          close: () => worker.terminate(),
        };
      },
    };
  },
};

// --- drawing: one time step as a colour map (the same code for every library) -------------------

const canvas = document.getElementById("map");
const ctx2d = canvas.getContext("2d");
const LUT = new Uint32Array(256);
for (let i = 0; i < 256; i++) {
  // Blue → white → red, as RGBA little-endian words.
  const x = i / 255;
  const r = Math.round(255 * Math.min(1, 2 * x));
  const b = Math.round(255 * Math.min(1, 2 - 2 * x));
  const g = Math.round(255 * (1 - Math.abs(2 * x - 1)));
  LUT[i] = (255 << 24) | (b << 16) | (g << 8) | r;
}

function draw({ data, shape }, [lo, hi]) {
  const [h, w] = shape.slice(-2);
  if (canvas.width !== w || canvas.height !== h) [canvas.width, canvas.height] = [w, h];
  const img = ctx2d.createImageData(w, h);
  const px = new Uint32Array(img.data.buffer);
  const k = 255 / (hi - lo);
  for (let i = 0; i < w * h; i++) {
    const v = (data[i] - lo) * k;
    px[i] = LUT[v <= 0 ? 0 : v >= 255 ? 255 : v | 0];
  }
  ctx2d.putImageData(img, 0, 0);
}

// --- workloads -----------------------------------------------------------------------------------

let handle = null; // the opened variable, kept for `step` and `sweep`
let kept = null; // the last run's values, checked by `finish`

/** Values in hand → drawn; returns the draw's ms. */
function show(r, range) {
  const s = performance.now();
  draw(r, range);
  return performance.now() - s;
}

/**
 * (1) Time to the first time step on screen, on a fresh page: import, open, read step `t`, draw.
 * Returns { ms, marks: [[phase, epoch ms at its end], …] (start included), drawMs }.
 */
async function first({ lib, url, variable, t, range }) {
  if (handle) throw new Error("first() wants a fresh page");
  const marks = [["start", now()]];
  const start = performance.now();
  const loaded = await LIBS[lib](marks);
  marks.push(["import", now()]);
  handle = await loaded.open(url, variable);
  marks.push(["open", now()]);
  const r = await handle.read(t);
  marks.push(["read", now()]);
  const drawMs = show(r, range);
  marks.push(["draw", now()]);
  const ms = performance.now() - start;
  kept = [r];
  return { ms, marks, drawMs };
}

/** (2) One time step on the opened variable: read, draw. */
async function step({ t, range }) {
  const start = performance.now();
  const r = await handle.read(t);
  const drawMs = show(r, range);
  kept = [r];
  return { ms: performance.now() - start, drawMs };
}

/** (3) A sweep: `count` consecutive time steps from `from`, each read then drawn (an animation). */
async function sweep({ from, count, range }) {
  const start = performance.now();
  const steps = [];
  let drawMs = 0;
  kept = [];
  for (let t = from; t < from + count; t++) {
    const s = performance.now();
    const r = await handle.read(t);
    drawMs += show(r, range);
    kept.push(r);
    steps.push(performance.now() - s);
  }
  return { ms: performance.now() - start, drawMs, steps };
}

/** Checks the last run's values against the generator's checksums `want` ([[h, s], …]). */
function finish(want) {
  const got = kept.map((r) => {
    const c = r.shape.map(() => 1);
    for (let k = r.shape.length - 2; k >= 0; k--) c[k] = c[k + 1] * r.shape[k + 1];
    return checksum(r.data, r.shape, r.stride ?? c);
  });
  const outBytes = kept.reduce((a, r) => a + r.data.byteLength, 0);
  kept = null;
  const ok = JSON.stringify(got) === JSON.stringify(want);
  return { ok, outBytes, got: ok ? undefined : got };
}

window.bench = { first, step, sweep, finish, pkgUrl, h5Url };
document.getElementById("out").textContent = "ready";
window.__benchReady = true;
