// Run by memory.test.mjs as `node --expose-gc memory-child.mjs PKG_URL ARRAY_URL OPTIONS_JSON MIB`:
// reads MIB MiB through one array — 1 MiB chunks with getChunk, alternating with regions of the
// same size across four chunks with get — checking values as it goes, closes the array, collects
// garbage and prints one JSON line: the ArrayBuffer bytes held above the start (MiB;
// process.memoryUsage().arrayBuffers) after every 64 MiB read, and at the end; and the same for
// the module's WebAssembly memory (which `arrayBuffers` does not count, and which never shrinks:
// its growth is the most the module held at once).
import { value } from "./synth-value.mjs";

const [entry, url, optionsJson, mibText] = process.argv.slice(2);
const api = await import(entry);
await api.initialize();
const wasmBytes = () => api.__wasmMemoryBytesForTesting();
if (!(wasmBytes() > 0)) throw new Error("the module's memory is not visible (__wasmMemoryBytesForTesting)");
const mib = Number(mibText);
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    global.gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  return process.memoryUsage().arrayBuffers;
};
const base = await settle();
const wasmBase = wasmBytes();
const held = [];
const wasm = [];
let read = 0;
let k = 0;
const arr = await api.openArray(url, JSON.parse(optionsJson));
const [cy, cx] = arr.chunkShape;
const grid = [arr.shape[0] / cy, arr.shape[1] / cx];
const size = (cy * cx) / 2 ** 20;
while (read < mib) {
  const y = Math.floor(k / grid[1]) % grid[0];
  const x = k % grid[1];
  if (k++ % 2 === 0) {
    const r = await arr.getChunk([y, x]);
    if (r.data[517 * r.stride[0] + 33] !== value(y * cy + 517, x * cx + 33)) throw new Error(`chunk [${y}, ${x}]: wrong value`);
  } else {
    const y0 = y * cy + cy / 2;
    const x0 = (x % (grid[1] - 1)) * cx + cx / 2;
    const r = await arr.get([[y0, y0 + cy / 2], [x0, x0 + cx * 2]]);
    if (r.data[9 * r.stride[0] + 5] !== value(y0 + 9, x0 + 5)) throw new Error(`region at (${y0}, ${x0}): wrong value`);
  }
  read += size;
  if (read % 64 === 0) {
    held.push(((await settle()) - base) / 2 ** 20);
    wasm.push((wasmBytes() - wasmBase) / 2 ** 20);
  }
}
const workerJobs = arr.stats().workerJobs;
arr.close();
await new Promise((r) => setTimeout(r, 100));
const end = ((await settle()) - base) / 2 ** 20;
const wasmEnd = (wasmBytes() - wasmBase) / 2 ** 20;
console.log(
  JSON.stringify({ held: held.map((h) => Math.round(h)), end: Math.round(end), read, wasmStart: Math.round(wasmBase / 2 ** 20), wasm: wasm.map((w) => Math.round(w)), wasmEnd: Math.round(wasmEnd), workerJobs }),
);
process.exit(0);
