// The app every bundler builds: read a JPEG XL precomputed volume (its decoder module fetched
// on demand), then a whole sharded array with the decoding workers on, until they have decoded
// chunks, and leave the result for the test in `window.__result`.
import { openArray } from "shardfetch";

function fnv1a(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return h;
}

async function main() {
  const q = new URLSearchParams(location.search);
  const url = q.get("url");
  // A JPEG XL volume: its decoder is a module of its own, which the bundler must emit.
  const jxl = await openArray(q.get("jxl"), { format: "precomputed", workers: 1 });
  const v = await jxl.get(jxl.shape.map(() => null));
  const vb = new Uint8Array(v.data.buffer, v.data.byteOffset, v.data.byteLength);
  const arr = await openArray(url, { workers: 1 });
  const all = arr.shape.map(() => null);
  let r = await arr.get(all);
  // The pool starts after the first read (which decodes here); read until it answers.
  for (let k = 0; k < 100 && arr.stats().workerJobs === 0; k++) {
    await new Promise((res) => setTimeout(res, 50));
    r = await arr.get(all);
  }
  const bytes = new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength);
  return {
    ok: true,
    hash: fnv1a(bytes),
    length: bytes.length,
    workerJobs: arr.stats().workerJobs,
    jxl: { hash: fnv1a(vb), length: vb.length, shape: Array.from(v.shape), stride: Array.from(v.stride) },
  };
}

main().then(
  (r) => (window.__result = r),
  (e) => (window.__result = { ok: false, code: e?.code, message: String(e?.message ?? e) }),
);
