// Run by memory.test.mjs as `node --expose-gc hostile-child.mjs PKG_URL ARRAY_URL OPTIONS_JSON [READS]`:
// reads a hostile server's array, sampling RSS as it goes; prints one JSON line: the first
// error's code and message, every read's outcome, peak RSS growth (MiB), the time taken, and
// when the reads had settled, and whether the module still reads a good array (a synthetic one
// made here) afterwards.
// READS: `array` (default), one `get` of the whole array; `chunks`, `getChunk` of each inner
// chunk in turn (one ranged request each, none batched with another).
const [entry, url, optionsJson, reads = "array"] = process.argv.slice(2);
const api = await import(entry);
// The module loaded (and warmed) first: what is measured is the hostile read's growth.
const meta = { zarr_format: 3, node_type: "array", shape: [4], data_type: "uint8", chunk_grid: { name: "regular", configuration: { chunk_shape: [4] } }, chunk_key_encoding: { name: "default" }, fill_value: 0, codecs: [{ name: "bytes" }] };
const fetch = async (u) =>
  String(u).endsWith("zarr.json") ? new Response(JSON.stringify(meta)) : String(u).endsWith("/c/0") ? new Response(new Uint8Array([1, 2, 3, 4])) : new Response(null, { status: 404 });
const good = async () => {
  const ok = await api.openArray("https://example.invalid/ok", { fetch });
  const r = await ok.get([null]);
  ok.close();
  return Array.from(r.data).join() === "1,2,3,4";
};
await good();
global.gc();
const rss0 = process.memoryUsage().rss;
let peak = rss0;
const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
const t0 = performance.now();
let code = "none";
let message = "";
// Each read: its chunk (null: the whole array), and `ok` (with whether every value is the
// server's filler byte, 7) or the error's code and message.
const outcomes = [];
const attempt = async (chunk, read) => {
  try {
    const r = await read();
    outcomes.push({ chunk, code: "ok", filler: r.data.every((v) => v === 7) });
  } catch (e) {
    outcomes.push({ chunk, code: e.code, message: e.message });
    if (code === "none") [code, message] = [e.code, e.message];
  }
};
try {
  const arr = await api.openArray(url, { ...JSON.parse(optionsJson), retry: { baseMs: 1, maxMs: 5 } });
  if (reads === "chunks") {
    const [gy, gx] = arr.shape.map((n, d) => n / arr.chunkShape[d]);
    for (let y = 0; y < gy; y++) for (let x = 0; x < gx; x++) await attempt([y, x], () => arr.getChunk([y, x]));
  } else {
    await attempt(null, () => arr.get([null, null]));
  }
  arr.close();
} catch (e) {
  code = e.code;
  message = e.message;
}
const ms = performance.now() - t0;
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage().rss);
// When the reads had settled (epoch ms); then a pause until the server streams no answer (at
// most 1.5 s), so that a connection the module left open (rather than dropped) shows as closed
// only at exit, after `pauseEnd`.
const readsEnd = Date.now();
const streaming = `${new URL(url).origin}/__streaming`;
while (Date.now() < readsEnd + 1500 && (await (await globalThis.fetch(streaming)).text()) !== "0") {
  await new Promise((r) => setTimeout(r, 20));
}
const pauseEnd = Date.now();
// The module reads on.
let alive = false;
try {
  alive = await good();
} catch {
  alive = false;
}
console.log(JSON.stringify({ code, message, outcomes, grew: (peak - rss0) / 2 ** 20, ms, readsEnd, pauseEnd, alive }));
process.exit(0);
