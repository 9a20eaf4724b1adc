// The soak session in Node, run by bench/soak.mjs as `node --expose-gc soak-node.mjs PKG_URL
// SERVER_URL TARGET_BYTES`: samples this process's memory as it runs; prints one JSON line.
import { session } from "./soak-session.mjs";

const [entry, server, targetText] = process.argv.slice(2);
const api = await import(entry);
const target = Number(targetText);
let moved = 0;
const poll = async () => (moved = (await (await fetch(`${server}/__stats`)).json()).bytes);
const timer = setInterval(poll, 200);
const samples = [];
const r = await session(api, {
  image: `${server}/img.zarr`,
  target,
  bytes: () => moved,
  sample: async (s) => {
    const m = process.memoryUsage();
    samples.push({ ...s, moved, rss: m.rss, heap: m.heapUsed, arrayBuffers: m.arrayBuffers, external: m.external });
  },
});
clearInterval(timer);
await poll();
global.gc?.();
const m = process.memoryUsage();
console.log(JSON.stringify({ ...r, moved, samples, end: { rss: m.rss, heap: m.heapUsed, arrayBuffers: m.arrayBuffers } }));
process.exit(0);
