// A viewer-like session for the soak benchmark (bench/soak.mjs), the same code in Node and in a
// page: a multiscale image opened with openMultiscale; a 1920 × 1080 view that pans (a random
// walk) and zooms (the level whose voxels cover about one screen pixel); each move requests the
// visible tiles (inner chunks) centre first, aborts the tiles in flight that left the view, keeps
// decoded tiles in an LRU (as the demo viewer does) and checks a value of each tile. Runs until
// `bytes()` (the data server's count) reaches `target`; `sample()` is called every `everyMs`.
import { value } from "../tests/js/synth-value.mjs";

export async function session(api, { image, target, bytes, sample, everyMs = 250, tileCacheBytes = 128 << 20, seed = 7, options = {} }) {
  const ms = await api.openMultiscale(image, options);
  const levels = ms.levels.map((l) => l.array);
  const [W, H] = [1920, 1080];
  let rng = seed;
  const random = () => ((rng = (rng * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const cache = new Map(); // key → bytes, LRU by insertion order
  let cached = 0;
  const inflight = new Map(); // key → AbortController
  let reads = 0;
  let aborted = 0;
  let wrong = 0;
  let failed = 0;
  let lastSample = 0;
  // The view: centre in level-0 voxels, and zoom (screen pixels per level-0 voxel).
  const full = levels[0].shape;
  let cx = full[1] / 2;
  let cy = full[0] / 2;
  let zoom = 0.5;
  const now = () => (typeof performance !== "undefined" ? performance.now() : Date.now());
  const t0 = now();
  while (bytes() < target) {
    // Move: pan a third of the screen, sometimes zoom by 2.
    cx = Math.min(full[1], Math.max(0, cx + (random() - 0.5) * (W / zoom) * 0.7));
    cy = Math.min(full[0], Math.max(0, cy + (random() - 0.5) * (H / zoom) * 0.7));
    if (random() < 0.15) zoom = Math.min(2, Math.max(1 / 8, zoom * (random() < 0.5 ? 0.5 : 2)));
    const k = Math.max(0, Math.min(levels.length - 1, Math.round(Math.log2(1 / zoom))));
    const arr = levels[k];
    const f = 2 ** k;
    const [ch, cw] = arr.chunkShape;
    const [y0, y1] = [(cy - H / 2 / zoom) / f, (cy + H / 2 / zoom) / f];
    const [x0, x1] = [(cx - W / 2 / zoom) / f, (cx + W / 2 / zoom) / f];
    const want = [];
    for (let ty = Math.max(0, Math.floor(y0 / ch)); ty <= Math.min(arr.shape[0] / ch - 1, Math.floor(y1 / ch)); ty++)
      for (let tx = Math.max(0, Math.floor(x0 / cw)); tx <= Math.min(arr.shape[1] / cw - 1, Math.floor(x1 / cw)); tx++) want.push([ty, tx]);
    const mid = [(y0 + y1) / 2 / ch, (x0 + x1) / 2 / cw];
    want.sort((a, b) => Math.hypot(a[0] - mid[0], a[1] - mid[1]) - Math.hypot(b[0] - mid[0], b[1] - mid[1]));
    const keys = new Set(want.map(([ty, tx]) => `${k}/${ty}/${tx}`));
    for (const [key, ctl] of inflight) {
      if (!keys.has(key)) {
        ctl.abort();
        inflight.delete(key);
      }
    }
    const loads = [];
    for (const [ty, tx] of want) {
      const key = `${k}/${ty}/${tx}`;
      if (cache.has(key) || inflight.has(key) || inflight.size >= 8) continue;
      const ctl = new AbortController();
      inflight.set(key, ctl);
      reads++;
      loads.push(
        arr.getChunk([ty, tx], { signal: ctl.signal }).then(
          (r) => {
            if (inflight.get(key) === ctl) inflight.delete(key);
            const y = ty * ch + 5;
            const x = tx * cw + 9;
            if (r.data[5 * r.stride[0] + 9] !== value(y << k, x << k)) wrong++;
            cache.set(key, r.data);
            cached += r.data.byteLength;
            for (const [old, d] of cache) {
              if (cached <= tileCacheBytes) break;
              cache.delete(old);
              cached -= d.byteLength;
            }
          },
          (e) => {
            if (inflight.get(key) === ctl) inflight.delete(key);
            if (e.code === "Aborted") aborted++;
            else failed++;
          },
        ),
      );
    }
    // A frame or two: some answers land before the view moves on.
    await Promise.race([Promise.all(loads), new Promise((r) => setTimeout(r, 16 + random() * 48))]);
    if (now() - lastSample >= everyMs) {
      lastSample = now();
      await sample({ reads, aborted, wrong, failed, cached, seconds: (now() - t0) / 1000 });
    }
  }
  for (const ctl of inflight.values()) ctl.abort();
  const stats = levels.map((l) => l.stats());
  for (const l of levels) l.close();
  // What the library holds at the end, where the build reports it (issue 46).
  const memory = api.memoryStats?.();
  return { reads, aborted, wrong, failed, seconds: (now() - t0) / 1000, requests: stats.reduce((s, x) => s + x.requests, 0), memory };
}
