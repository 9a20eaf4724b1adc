// Node: a full read decoded inline against the same read decoded by the worker_threads pool
// (issue 15). Loopback server (tests/server.mjs) on bench/data (run `npm run bench` once, or
// bench/generate.py, to make it); every read is checked against the writer's checksum.
//   node bench/node-workers.mjs [--datasets u16_zstd,u16_gzip] [--reps 7] [--workers 1,2] [--out FILE]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startServer } from "../tests/server.mjs";
import { checksum } from "./checksum.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const datasets = arg("datasets", "u16_zstd,u16_gzip,u8_3d_zstd,u16_blosc_zstd").split(",");
const reps = Number(arg("reps", "7"));
const pools = arg("workers", "1,2").split(",").map(Number);
const api = await import(pathToFileURL(path.join(here, "..", "pkg", "index.js")).href);
const server = await startServer({ root: { "/data": path.join(here, "data") } });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const rows = [];
for (const name of datasets) {
  const info = JSON.parse(fs.readFileSync(path.join(here, "data", name, "bench.json"), "utf8"));
  const url = `${server.url}/data/${name}`;
  const configs = [{ label: "inline", workers: false }, ...pools.map((n) => ({ label: `pool of ${n}`, workers: n }))];
  const times = new Map(configs.map((c) => [c.label, []]));
  const jobs = new Map(configs.map((c) => [c.label, 0]));
  // One array per configuration, warmed by a read (its indexes cached, its pool started), then
  // the configurations alternate so that load from elsewhere hits them alike.
  const arrays = new Map();
  for (const c of configs) {
    const arr = await api.openArray(url, { workers: c.workers });
    await arr.get(arr.shape.map(() => null));
    for (let k = 0; k < 50 && c.workers && arr.stats().workerJobs === 0; k++) {
      await new Promise((r) => setTimeout(r, 20));
      await arr.get(arr.shape.map(() => null));
    }
    arrays.set(c.label, arr);
  }
  for (let r = 0; r < reps; r++) {
    for (const c of r % 2 ? [...configs].reverse() : configs) {
      const arr = arrays.get(c.label);
      const before = arr.stats().workerJobs;
      const t0 = performance.now();
      const out = await arr.get(arr.shape.map(() => null));
      times.get(c.label).push(performance.now() - t0);
      jobs.set(c.label, jobs.get(c.label) + arr.stats().workerJobs - before);
      const got = checksum(out.data, out.shape, out.stride);
      if (got[0] !== info.full[0] || got[1] !== info.full[1]) throw new Error(`${name} ${c.label}: wrong checksum`);
    }
  }
  const inline = median(times.get("inline"));
  for (const c of configs) {
    const ms = median(times.get(c.label));
    const t = times.get(c.label);
    rows.push({ dataset: name, config: c.label, medianMs: ms, minMs: Math.min(...t), maxMs: Math.max(...t), workerJobs: jobs.get(c.label), vsInline: inline / ms });
  }
  for (const a of arrays.values()) a.close();
}
await server.close?.();

console.log(`| dataset | decoding | median ms (min–max) | chunks decoded in workers | speed vs inline |`);
console.log(`|---|---|---|---|---|`);
for (const r of rows) {
  console.log(`| ${r.dataset} | ${r.config} | ${r.medianMs.toFixed(0)} (${r.minMs.toFixed(0)}–${r.maxMs.toFixed(0)}) | ${r.workerJobs} | ${r.vsInline.toFixed(2)}× |`);
}
const out = arg("out");
if (out) {
  const meta = { date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, load: os.loadavg(), reps, command: process.argv.slice(1).join(" ") };
  fs.writeFileSync(out, JSON.stringify({ ...meta, rows }, null, 1) + "\n");
}
process.exit(0);
