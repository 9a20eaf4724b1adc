// Run by memory.test.mjs as `node --expose-gc hostile-child.mjs PKG_URL ARRAY_URL OPTIONS_JSON`:
// reads the whole array of a hostile server, sampling RSS as it goes; prints one JSON line:
// the error's code and message, peak RSS growth (MiB), the time taken, and whether the module
// still reads a good array (a synthetic one made here) afterwards.
const [entry, url, optionsJson] = process.argv.slice(2);
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
try {
  const arr = await api.openArray(url, { ...JSON.parse(optionsJson), retry: { baseMs: 1, maxMs: 5 } });
  await arr.get([null, null]);
} catch (e) {
  code = e.code;
  message = e.message;
}
const ms = performance.now() - t0;
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage().rss);
// The module reads on.
let alive = false;
try {
  alive = await good();
} catch {
  alive = false;
}
console.log(JSON.stringify({ code, message, grew: (peak - rss0) / 2 ** 20, ms, alive }));
process.exit(0);
