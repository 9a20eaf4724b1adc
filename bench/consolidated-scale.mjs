#!/usr/bin/env node
// Consolidated groups at scale (Node, loopback, one process): a Zarr v2 group whose .zmetadata
// lists 3,000 arrays (.zarray and .zattrs each, as xarray writes a dataset of many variables;
// 2.3 MB) and a Zarr v3 group whose zarr.json holds the consolidated_metadata of 3,000 arrays
// (4.4 MB). Cold open of the group, its children listed, 20 of them opened; against fetch +
// JSON.parse of the same document and zarrita.js 0.7.5 (withConsolidatedMetadata, v2 and v3).
// Documents written here (bench/data-consolidated/, gitignored).
// `node bench/consolidated-scale.mjs [--reps N]`
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as zarr from "zarrita";
import { startServer } from "../tests/server.mjs";
import { startRecord } from "./results.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const reps = Number(process.argv[process.argv.indexOf("--reps") + 1] || 7);
const dir = path.join(here, "data-consolidated");
const N = 3000;
const attrs = (i) => ({ long_name: `Variable number ${i}`, units: "K", _ARRAY_DIMENSIONS: ["time", "lat", "lon"], history: "x".repeat(200) });

function write() {
  const v2 = { ".zgroup": { zarr_format: 2 }, ".zattrs": { title: "many variables" } };
  const v3 = {};
  for (let i = 0; i < N; i++) {
    v2[`var${i}/.zarray`] = { zarr_format: 2, shape: [100, 200, 300], chunks: [10, 20, 30], dtype: "<f4", compressor: { id: "zstd", level: 3 }, fill_value: "NaN", filters: null, order: "C", dimension_separator: "." };
    v2[`var${i}/.zattrs`] = attrs(i);
    v3[`var${i}`] = {
      zarr_format: 3, node_type: "array", shape: [100, 200, 300], data_type: "float32",
      chunk_grid: { name: "regular", configuration: { chunk_shape: [10, 20, 30] } },
      chunk_key_encoding: { name: "default", configuration: { separator: "/" } }, fill_value: "NaN",
      codecs: [{ name: "bytes", configuration: { endian: "little" } }, { name: "zstd", configuration: { level: 3, checksum: false } }],
      attributes: attrs(i), dimension_names: ["time", "lat", "lon"],
    };
  }
  fs.mkdirSync(path.join(dir, "v2.zarr"), { recursive: true });
  fs.mkdirSync(path.join(dir, "v3.zarr"), { recursive: true });
  // Indented, as zarr-python and xarray write them.
  fs.writeFileSync(path.join(dir, "v2.zarr/.zgroup"), JSON.stringify({ zarr_format: 2 }));
  fs.writeFileSync(path.join(dir, "v2.zarr/.zmetadata"), JSON.stringify({ zarr_consolidated_format: 1, metadata: v2 }, null, 4));
  const group = { zarr_format: 3, node_type: "group", attributes: { title: "many variables" }, consolidated_metadata: { kind: "inline", must_understand: false, metadata: v3 } };
  fs.writeFileSync(path.join(dir, "v3.zarr/zarr.json"), JSON.stringify(group, null, 2));
}

write();
const api = await import(pathToFileURL(path.join(here, "../pkg/index.js")).href);
const server = await startServer({ root: dir });
const picks = Array.from({ length: 20 }, (_, k) => `var${k * 150}`);
const docs = { v2: "v2.zarr/.zmetadata", v3: "v3.zarr/zarr.json" };
const libs = {
  shardfetch: async (v) => {
    const g = await api.open(`${server.url}/${v}.zarr`, { workers: false });
    const t = performance.now();
    const names = g.children().map((c) => c.name);
    for (const p of picks) (await g.openArray(p)).close();
    return { names, t };
  },
  "zarrita withConsolidatedMetadata": async (v) => {
    const store = await zarr.withConsolidatedMetadata(new zarr.FetchStore(`${server.url}/${v}.zarr`), { format: v });
    const g = await zarr.open(zarr.root(store), { kind: "group" });
    const t = performance.now();
    const names = store.contents().filter((c) => c.path !== "/" && c.path.split("/").length === 2).map((c) => c.path.slice(1));
    for (const p of picks) await zarr.open(g.resolve(p), { kind: "array" });
    return { names, t };
  },
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const record = startRecord("consolidated-scale");
console.log(`documents: v2 .zmetadata ${fs.statSync(path.join(dir, docs.v2)).size} bytes, v3 zarr.json ${fs.statSync(path.join(dir, docs.v3)).size} bytes; ${N} arrays each`);
console.log(`| library | version | open: ms | children + 20 arrays: ms | fetch + JSON.parse: ms |\n|---|---|---:|---:|---:|`);
for (const v of ["v2", "v3"]) {
  for (const [name, run] of Object.entries(libs)) {
    const opens = [], rests = [], parses = [];
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now();
      let out;
      try {
        out = await run(v);
      } catch (e) {
        console.log(`| ${name} | ${v} | fails: ${String(e.message ?? e).slice(0, 80)} | | |`);
        record.rows.push({ library: name, version: v, error: String(e.message ?? e) });
        break;
      }
      const t1 = performance.now();
      if (out.names.length !== N) throw new Error(`${name} ${v}: ${out.names.length} children`);
      opens.push(out.t - t0);
      rests.push(t1 - out.t);
      const res = await fetch(`${server.url}/${docs[v]}`);
      JSON.parse(await res.text());
      parses.push(performance.now() - t1);
    }
    if (opens.length) console.log(`| ${name} | ${v} | ${median(opens).toFixed(1)} | ${median(rests).toFixed(1)} | ${median(parses).toFixed(1)} |`);
    if (opens.length) record.rows.push({ library: name, version: v, reps, openMs: median(opens), childrenAnd20ArraysMs: median(rests), fetchParseMs: median(parses) });
  }
}
console.log(`results: ${path.relative(process.cwd(), record.save({ arrays: N, documentBytes: { v2: fs.statSync(path.join(dir, docs.v2)).size, v3: fs.statSync(path.join(dir, docs.v3)).size } }))}`);
await server.close?.();
process.exit(0);
