#!/usr/bin/env node
// A zip of ~100,000 entries (a Zarr v2 array of 316 × 316 chunks of 2 × 2 uint16, stored, ZIP64:
// a 5.2 MB central directory), opened cold then one chunk read, shardfetch against zarrita.js
// 0.7.5's ZipFileStore, Node, loopback, in one process. The archive is written here
// (bench/data-zip-entries/, gitignored). `node bench/zip-entries.mjs [--reps N]`
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as zarr from "zarrita";
import { ZipFileStore } from "@zarrita/storage";
import { startServer } from "../tests/server.mjs";
import { startRecord } from "./results.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const reps = Number(process.argv[process.argv.indexOf("--reps") + 1] || 7);
const dir = path.join(here, "data-zip-entries");
const n = 316;
const value = (i, j, k) => (i * 7 + j * 13 + k) & 0xffff;

function write(file) {
  const meta = { zarr_format: 2, shape: [n * 2, n * 2], chunks: [2, 2], dtype: "<u2", compressor: null, fill_value: 0, filters: null, order: "C" };
  const files = [[".zarray", Buffer.from(JSON.stringify(meta))]];
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
    const b = Buffer.alloc(8);
    for (let k = 0; k < 4; k++) b.writeUInt16LE(value(i, j, k), 2 * k);
    files.push([`${i}.${j}`, b]);
  }
  const parts = [], central = [];
  let at = 0;
  for (const [name, body] of files) {
    const nb = Buffer.from(name), crc = zlib.crc32(body) >>> 0;
    const l = Buffer.alloc(30);
    l.writeUInt32LE(0x04034b50, 0); l.writeUInt16LE(20, 4); l.writeUInt32LE(crc, 14);
    l.writeUInt32LE(body.length, 18); l.writeUInt32LE(body.length, 22); l.writeUInt16LE(nb.length, 26);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0); c.writeUInt16LE(20, 4); c.writeUInt16LE(20, 6); c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(body.length, 20); c.writeUInt32LE(body.length, 24); c.writeUInt16LE(nb.length, 28); c.writeUInt32LE(at, 42);
    parts.push(l, nb, body);
    central.push(c, nb);
    at += 30 + nb.length + body.length;
  }
  const cd = Buffer.concat(central);
  // More than 65,535 entries: the ZIP64 end record and its locator before the end record.
  const z64 = Buffer.alloc(56);
  z64.writeUInt32LE(0x06064b50, 0); z64.writeBigUInt64LE(44n, 4); z64.writeUInt16LE(45, 12); z64.writeUInt16LE(45, 14);
  z64.writeBigUInt64LE(BigInt(files.length), 24); z64.writeBigUInt64LE(BigInt(files.length), 32);
  z64.writeBigUInt64LE(BigInt(cd.length), 40); z64.writeBigUInt64LE(BigInt(at), 48);
  const loc = Buffer.alloc(20);
  loc.writeUInt32LE(0x07064b50, 0); loc.writeBigUInt64LE(BigInt(at + cd.length), 8); loc.writeUInt32LE(1, 16);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(0xffff, 8); end.writeUInt16LE(0xffff, 10);
  end.writeUInt32LE(0xffffffff, 12); end.writeUInt32LE(0xffffffff, 16);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(file, Buffer.concat([...parts, cd, z64, loc, end]));
  return { entries: files.length, directory: cd.length };
}

const record = startRecord("zip-entries");
const file = path.join(dir, "entries.zip");
const facts = write(file);
const api = await import(pathToFileURL(path.join(here, "../pkg/index.js")).href);
const server = await startServer({ root: dir });
const url = `${server.url}/entries.zip`;
const libs = {
  shardfetch: async () => {
    const a = await api.openArray(url, { workers: false });
    return { chunk: async () => (await a.getChunk([100, 200])).data, close: () => a.close() };
  },
  "zarrita ZipFileStore": async () => {
    const a = await zarr.open.v2(zarr.root(ZipFileStore.fromUrl(url)), { kind: "array" });
    return { chunk: async () => (await a.getChunk([100, 200])).data, close: () => {} };
  },
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`entries.zip: ${facts.entries} entries, directory ${facts.directory} bytes, ${fs.statSync(file).size} bytes`);
console.log("| library | open: ms (median of " + reps + ") | then one chunk: ms |\n|---|---:|---:|");
for (const [name, open] of Object.entries(libs)) {
  const opens = [], chunks = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    const a = await open();
    const t1 = performance.now();
    const data = await a.chunk();
    opens.push(t1 - t0);
    chunks.push(performance.now() - t1);
    for (let k = 0; k < 4; k++) if (data[k] !== value(100, 200, k)) throw new Error(`${name}: value ${k} is ${data[k]}`);
    a.close();
  }
  console.log(`| ${name} | ${median(opens).toFixed(1)} | ${median(chunks).toFixed(1)} |`);
  record.rows.push({ library: name, reps, openMs: median(opens), chunkMs: median(chunks) });
}
console.log(`results: ${path.relative(process.cwd(), record.save({ archive: { ...facts, bytes: fs.statSync(file).size } }))}`);
await server.close?.();
process.exit(0);
