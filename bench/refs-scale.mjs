#!/usr/bin/env node
// Reference sets at scale (Node, loopback): one chunk, then a 100 x 100 window (100 chunks), from a
// cold open of a 40,000-chunk array described by a kerchunk JSON file (1.6 MB) or by fsspec's
// Parquet reference set of the same references (78 KB in 4 record files), shardfetch against
// zarrita.js 0.7.5's ReferenceStore (JSON only; given absolute target URLs, as it resolves no
// relative one). Requests and bytes from the server's log;
// every value checked. Data: `/tmp/venv-containers/bin/python bench/generate_refs.py`.
// `node bench/refs-scale.mjs [--reps N]`
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as zarr from "zarrita";
import { ReferenceStore } from "@zarrita/storage";
import { startServer } from "../tests/server.mjs";
import { startRecord } from "./results.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const reps = Number(process.argv[process.argv.indexOf("--reps") + 1] || 7);
const api = await import(pathToFileURL(path.join(here, "../pkg/index.js")).href);
const server = await startServer({ root: path.join(here, "data-refs") });
// zarrita resolves no relative target: its copy of the JSON names data.bin by absolute URL.
const json = fs.readFileSync(path.join(here, "data-refs/refs.json"), "utf8");
fs.writeFileSync(path.join(here, "data-refs/refs-absolute.json"), json.replaceAll('"data.bin"', JSON.stringify(`${server.url}/data.bin`)));
const value = (i, j) => (i * 7 + j * 13) % 65536;

function check(data, [y0, x0], [h, w], what) {
  for (let i = 0; i < h; i++) for (let j = 0; j < w; j++) {
    if (data[i * w + j] !== value(y0 + i, x0 + j)) throw new Error(`${what}: (${y0 + i}, ${x0 + j}) is ${data[i * w + j]}`);
  }
}

const libs = {
  "shardfetch, JSON": async (url) => {
    const a = await api.openArray(`${url}/refs.json`, { path: "x", workers: false });
    return { chunk: async () => (await a.getChunk([123, 77])).data, window: async () => (await a.get([[1000, 1100], [1000, 1100]])).data, close: () => a.close() };
  },
  "shardfetch, Parquet": async (url) => {
    const a = await api.openArray(`${url}/refs.parq`, { path: "x", workers: false });
    return { chunk: async () => (await a.getChunk([123, 77])).data, window: async () => (await a.get([[1000, 1100], [1000, 1100]])).data, close: () => a.close() };
  },
  "zarrita ReferenceStore, JSON": async (url) => {
    const store = await ReferenceStore.fromUrl(`${url}/refs-absolute.json`);
    const a = await zarr.open.v2(zarr.root(store).resolve("x"), { kind: "array" });
    return {
      chunk: async () => (await zarr.get(a, [zarr.slice(1230, 1240), zarr.slice(770, 780)])).data,
      window: async () => (await zarr.get(a, [zarr.slice(1000, 1100), zarr.slice(1000, 1100)])).data,
      close: () => {},
    };
  },
};

const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const record = startRecord("refs-scale");
console.log("| library, references | open + one chunk: ms | requests | bytes | then a 100 × 100 window: ms | requests | bytes |");
console.log("|---|---:|---:|---:|---:|---:|---:|");
for (const [name, open] of Object.entries(libs)) {
  const rows = [];
  for (let r = 0; r < reps; r++) {
    server.log.length = 0;
    const t0 = performance.now();
    const a = await open(server.url);
    const c = await a.chunk();
    const t1 = performance.now();
    check(c, [1230, 770], [10, 10], `${name} chunk`);
    const first = server.log.splice(0);
    const t2 = performance.now();
    const w = await a.window();
    const t3 = performance.now();
    check(w, [1000, 1000], [100, 100], `${name} window`);
    const second = server.log.splice(0);
    a.close();
    const sum = (log) => log.reduce((s, e) => s + e.bytes, 0);
    rows.push([t1 - t0, first.length, sum(first), t3 - t2, second.length, sum(second)]);
  }
  const col = (k) => median(rows.map((r) => r[k]));
  console.log(`| ${name} | ${col(0).toFixed(1)} | ${col(1)} | ${col(2).toLocaleString("en")} | ${col(3).toFixed(1)} | ${col(4)} | ${col(5).toLocaleString("en")} |`);
  record.rows.push({ library: name, reps, openAndChunkMs: col(0), openAndChunkRequests: col(1), openAndChunkBytes: col(2), windowMs: col(3), windowRequests: col(4), windowBytes: col(5) });
}
// What opening the JSON file is measured against (issue 24: at most 3x): fetch + JSON.parse.
const parse = [];
for (let r = 0; r < reps; r++) {
  const t = performance.now();
  await (await fetch(`${server.url}/refs.json`)).json();
  parse.push(performance.now() - t);
}
const opens = [];
for (let r = 0; r < reps; r++) {
  const t = performance.now();
  const a = await api.openArray(`${server.url}/refs.json`, { path: "x", workers: false });
  opens.push(performance.now() - t);
  a.close();
}
console.log(`\nrefs.json: fetch + JSON.parse ${median(parse).toFixed(1)} ms, shardfetch openArray ${median(opens).toFixed(1)} ms`);
console.log(`results: ${path.relative(process.cwd(), record.save({ refsJson: { fetchParseMs: median(parse), shardfetchOpenMs: median(opens) } }))}`);
await server.close();
