// A zarr.json of 16.7 MB with 1.7 M attribute keys, served on loopback: `openArray` then
// `attributes`, or `fetch` + `JSON.parse` of the same document for reference; time and RSS growth.
//   node --expose-gc bench/big-attributes.mjs [open|openonly|parse] [path/to/pkg/index.js]
import http from "node:http";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const [mode = "open", pkg = path.join(here, "..", "pkg", "index.js")] = process.argv.slice(2);
const { openArray } = await import(pathToFileURL(path.resolve(pkg)).href);
const attrs = {};
for (let n = 0; n < 1_700_000; n++) attrs[n.toString(36)] = n % 4 === 0 ? `v${n % 10}` : n % 64 === 2 ? [n % 10, 0.5] : n % 10;
const meta = {
  zarr_format: 3, node_type: "array", shape: [10], data_type: "uint8",
  chunk_grid: { name: "regular", configuration: { chunk_shape: [10] } }, fill_value: 0, codecs: [{ name: "bytes" }],
  attributes: attrs,
};
const text = Buffer.from(JSON.stringify(meta));
const keys = Object.keys(attrs).length;
for (const k of Object.keys(attrs)) delete attrs[k];
const server = http.createServer((req, res) => {
  if (!req.url.endsWith("zarr.json")) return res.writeHead(404).end();
  res.writeHead(200, { "content-length": text.length }).end(text);
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const url = `http://127.0.0.1:${server.address().port}/a`;
const rss = () => process.memoryUsage().rss / 1e6;
// The module loaded and the server answered once before measuring.
if (mode !== "parse") await openArray(`${url}/none`).catch(() => {});
global.gc?.();
await new Promise((r) => setTimeout(r, 200));
const t0 = performance.now();
const r0 = rss();
let line;
if (mode === "parse") {
  const j = await (await fetch(`${url}/zarr.json`)).json();
  line = `fetch + JSON.parse ${(performance.now() - t0).toFixed(0)} ms, ${Object.keys(j.attributes).length} keys`;
} else {
  const arr = await openArray(url, { maxMetadataBytes: 64 << 20 });
  const t1 = performance.now();
  const n = mode === "openonly" ? 0 : Object.keys(arr.attributes).length;
  line = `openArray ${(t1 - t0).toFixed(0)} ms, with attributes ${(performance.now() - t0).toFixed(0)} ms, ${n} keys`;
}
console.log(`document ${(text.length / 1e6).toFixed(1)} MB, ${keys} keys | ${line} | RSS +${(rss() - r0).toFixed(0)} MB`);
server.close();
process.exit(0);
