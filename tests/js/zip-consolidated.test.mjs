// Zip archives, OME's single-file .ozx, consolidated metadata and pasted URLs (issue 20), through
// the built package in Node: what the fixture manifests cannot show — requests at the server,
// the names errors give, hostile archives. Values are checked by the manifests
// (tests/fixtures/manifest-containers.json, manifest-zarrita.json) in every suite.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath, pathToFileURL } from "node:url";

import { startServer } from "../server.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const data = path.join(repo, "tests/fixtures/data");
const containers = JSON.parse(fs.readFileSync(path.join(repo, "tests/fixtures/manifest-containers.json"), "utf8"));
const tmpRoot = path.join(repo, "tests/.tmp");
fs.mkdirSync(tmpRoot, { recursive: true });
const tmp = fs.mkdtempSync(path.join(tmpRoot, "zip-"));

let api;
let server;
let base;

before(async () => {
  api = await import(pathToFileURL(path.join(repo, "pkg/index.js")).href);
  server = await startServer({ root: { "/fixtures": data, "/tmp": tmp } });
  base = server.url;
});

after(async () => {
  await server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The writer's values of a case of manifest-containers.json (its expected file), as bytes. */
const writers = (name) => fs.readFileSync(path.join(repo, "tests/fixtures", containers.cases.find((k) => k.name === name).expected));
const ELEMENT = { int8: 1, uint8: 1, int16: 2, uint16: 2, float16: 2, int32: 4, uint32: 4, float32: 4, int64: 8, uint64: 8, float64: 8 };

/** A read (`get` of a box at `origin`, or `getChunk`: shape and strides as returned) against the
 * writer's values of case `name`: its shape is `shape`, and every element is the writer's. */
function assertWriters(r, name, what, origin = null, shape = null) {
  const c = containers.cases.find((k) => k.name === name);
  const all = writers(name);
  const e = ELEMENT[c.dtype];
  const want = shape ?? c.shape;
  const at = origin ?? c.shape.map(() => 0);
  assert.deepEqual(Array.from(r.shape), want, `${what}: shape`);
  const got = Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength);
  const stride = Array.from(r.stride ?? want.map((_, k) => want.slice(k + 1).reduce((a, b) => a * b, 1)));
  const n = want.reduce((a, b) => a * b, 1);
  const idx = want.map(() => 0);
  for (let i = 0; i < n; i++) {
    let g = 0;
    let x = 0;
    for (let k = 0; k < want.length; k++) {
      g += idx[k] * stride[k];
      x = x * c.shape[k] + at[k] + idx[k];
    }
    if (!got.subarray(g * e, g * e + e).equals(all.subarray(x * e, x * e + e))) assert.fail(`${what}: element [${idx}] differs from the writer's (${name})`);
    for (let k = want.length - 1; k >= 0 && ++idx[k] === want[k]; k--) idx[k] = 0;
  }
}

/** Chunk `coords` of case `name` as read, against the writer's (clipped at the array's edge). */
function assertWritersChunk(r, name, coords, what) {
  const c = containers.cases.find((k) => k.name === name);
  const origin = coords.map((x, k) => x * c.chunkShape[k]);
  assertWriters(r, name, what, origin, origin.map((o, k) => Math.min(c.chunkShape[k], c.shape[k] - o)));
}

/** Requests the server saw while `work` ran. */
async function requests(work) {
  server.log.length = 0;
  const out = await work();
  return { out, log: server.log.map((e) => `${e.method} ${e.path}${e.range ? ` ${e.range}` : ""}`) };
}

// ------------------------------------------------------------------------------------------
// consolidated metadata

test("v3 consolidated metadata: opening the group and then every child costs one request in all", async () => {
  const url = `${base}/fixtures/containers/consolidated_v3.zarr`;
  const { out, log } = await requests(async () => {
    const g = await api.open(url);
    assert.ok(g instanceof api.Group);
    assert.equal(g.consolidated, true);
    const kids = g.children();
    const opened = [];
    for (const c of kids) {
      const node = await g.open(c.name);
      assert.equal(node instanceof api.ShardedArray, c.kind === "array", c.name);
      opened.push(node);
      // A child group lists its own members from the same metadata.
      if (c.kind === "group") for (const k of node.children()) opened.push(await node.open(k.name));
    }
    return { kids, opened: opened.length };
  });
  assert.deepEqual(log, ["GET /fixtures/containers/consolidated_v3.zarr/zarr.json"], log.join("\n"));
  assert.ok(out.kids.length >= 10, JSON.stringify(out.kids));
  assert.equal(out.opened, 13, "12 arrays and a group");
});

test("v2 .zmetadata: opening the group and every child costs two requests in all", async () => {
  const url = `${base}/fixtures/containers/consolidated_v2.zarr`;
  const { out, log } = await requests(async () => {
    const g = await api.open(url);
    const names = [];
    const walk = async (grp) => {
      for (const c of grp.children()) {
        const node = await grp.open(c.name);
        names.push(`${grp.url.slice(url.length)}/${c.name}`);
        if (node instanceof api.Group) await walk(node);
      }
    };
    await walk(g);
    return names;
  });
  assert.deepEqual(log, ["GET /fixtures/containers/consolidated_v2.zarr/zarr.json", "GET /fixtures/containers/consolidated_v2.zarr/.zmetadata"], log.join("\n"));
  assert.equal(out.length, 13, out.join(", "));
});

test("consolidated metadata is never wrong: a child it does not list is read from its own document", async () => {
  // A copy of the v3 group with one more array written after consolidation (its own zarr.json).
  const dir = path.join(tmp, "late.zarr");
  fs.cpSync(path.join(data, "containers/consolidated_v3.zarr"), dir, { recursive: true });
  fs.cpSync(path.join(dir, "u1_raw"), path.join(dir, "late"), { recursive: true });
  const g = await api.open(`${base}/tmp/late.zarr`);
  assert.ok(!g.children().some((c) => c.name === "late"));
  const { out, log } = await requests(async () => {
    const a = await g.openArray("late");
    const b = await g.openArray("u1_raw");
    return [await a.get(a.shape.map(() => null)), await b.get(b.shape.map(() => null))];
  });
  // The late array is a copy of u1_raw: both hold zarr-python's values of u1_raw.
  assertWriters(out[0], "ct_consv3_u1_raw", "the late array");
  assertWriters(out[1], "ct_consv3_u1_raw", "u1_raw");
  assert.ok(log.includes("GET /tmp/late.zarr/late/zarr.json"), log.join("\n"));
  assert.ok(!log.some((l) => l.startsWith("GET /tmp/late.zarr/u1_raw/zarr.json")), "a listed child costs no request");
});

// ------------------------------------------------------------------------------------------
// zip archives

const containerInfo = (p) => containers.containers.find((c) => c.path === p);

test("a stored zip (zarr-python ZipStore): its end and its start at once, then the chunks; neighbours merge", async () => {
  const info = containerInfo("containers/zp3_group.zip");
  const url = `${base}/fixtures/containers/zp3_group.zip`;
  const { out, log } = await requests(async () => {
    const g = await api.open(url);
    const a = await g.openArray("sharded_u16");
    const r = await a.get(a.shape.map(() => null));
    return { g, a, r };
  });
  // The archive is small: the end's (suffix) read holds all of it; the start's, asked for at
  // the same time, adds nothing here, and nothing else is asked for.
  assert.ok(info.size <= 128 << 10);
  assert.deepEqual(log.sort(), ["GET /fixtures/containers/zp3_group.zip bytes=-131072", "GET /fixtures/containers/zp3_group.zip bytes=0-65535"], log.join("\n"));
  assert.equal(out.g.url, url);
  assertWriters(out.r, "ct_zp3zip_sharded_u16", "sharded_u16");
});

test("a zip larger than the first read: its zarr.json documents from its start, the shard index and chunks by range", async () => {
  // zarr-python's layout (each node's zarr.json ahead of its chunks), the chunks pushed past the
  // first reads by a large entry ahead of them.
  const src = fs.readFileSync(path.join(data, "containers/zp3_group.zip"));
  const cases = [
    // Cold first chunk: both ends at once, the shard index, the chunk — plain's three plus one.
    ["late-chunks.zip", padZip(src, 600 << 10, "sharded_u16/c/0/0"), 4],
    // The documents not at the start either: the start's read served nothing, zarr.json by range.
    ["late-all.zip", padZip(src, 600 << 10), 5],
  ];
  for (const [name, bytes, cold] of cases) {
    fs.writeFileSync(path.join(tmp, name), bytes);
    const url = `${base}/tmp/${name}`;
    const { out, log } = await requests(async () => {
      const a = await api.openArray(url, { path: "sharded_u16" });
      const first = await a.getChunk(a.shape.map(() => 0));
      const n = log0();
      const all = await a.get(a.shape.map(() => null));
      return { first, all, n };
    });
    const ranges = log.filter((l) => l.startsWith(`GET /tmp/${name} bytes=`));
    assert.equal(ranges.length, log.length, log.join("\n"));
    assert.equal(out.n, cold, `${name}\n${log.join("\n")}`);
    assertWritersChunk(out.first, "ct_zp3zip_sharded_u16", [0, 0], `${name}: the first chunk`);
    assertWriters(out.all, "ct_zp3zip_sharded_u16", name);
  }
});

let logAtMark = 0;
function log0() {
  logAtMark = server.log.length;
  return logAtMark;
}

/** `zip` with a stored entry of `pad` zero bytes inserted before the entry `before` (the first
 * when not given; offsets rewritten). */
function padZip(zip, pad, before) {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const cdOffset = zip.readUInt32LE(eocd + 16);
  const cdSize = zip.readUInt32LE(eocd + 12);
  const central = Buffer.from(zip.subarray(cdOffset, cdOffset + cdSize));
  let at = 0;
  for (let p = 0; p < central.length && before !== undefined; ) {
    const n = central.readUInt16LE(p + 28);
    if (central.toString("latin1", p + 46, p + 46 + n) === before) at = central.readUInt32LE(p + 42);
    p += 46 + n + central.readUInt16LE(p + 30) + central.readUInt16LE(p + 32);
  }
  if (before !== undefined) assert.ok(at > 0, `no entry ${before}`);
  const name = Buffer.from("padding.bin");
  const body = Buffer.alloc(pad);
  const crc = zlib.crc32 ? zlib.crc32(body) : 0;
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt32LE(crc >>> 0, 14);
  local.writeUInt32LE(pad, 18);
  local.writeUInt32LE(pad, 22);
  local.writeUInt16LE(name.length, 26);
  const shift = 30 + name.length + pad;
  for (let p = 0; p < central.length; ) {
    const o = central.readUInt32LE(p + 42);
    if (o >= at) central.writeUInt32LE(o + shift, p + 42);
    p += 46 + central.readUInt16LE(p + 28) + central.readUInt16LE(p + 30) + central.readUInt16LE(p + 32);
  }
  const ours = Buffer.alloc(46);
  ours.writeUInt32LE(0x02014b50, 0);
  ours.writeUInt16LE(20, 4);
  ours.writeUInt16LE(20, 6);
  ours.writeUInt32LE(crc >>> 0, 16);
  ours.writeUInt32LE(pad, 20);
  ours.writeUInt32LE(pad, 24);
  ours.writeUInt16LE(name.length, 28);
  ours.writeUInt32LE(at, 42);
  const end = Buffer.from(zip.subarray(eocd));
  const entries = end.readUInt16LE(10) + 1;
  end.writeUInt16LE(entries, 8);
  end.writeUInt16LE(entries, 10);
  end.writeUInt32LE(cdSize + 46 + name.length, 12);
  end.writeUInt32LE(cdOffset + shift, 16);
  return Buffer.concat([zip.subarray(0, at), local, name, body, zip.subarray(at, cdOffset), ours, name, central, end]);
}

test("a deflated folder zip, a streamed one (data descriptors) and a zstd one (method 93): each entry one request, decompressed", async () => {
  for (const name of ["folder_deflate.zip", "folder_streamed.zip", "folder_zstd.zip"]) {
    const c = containers.cases.find((k) => k.path === `containers/${name}`);
    assert.equal(c.dtype, "int32");
    const expected = new Int32Array(new Uint8Array(fs.readFileSync(path.join(data, "..", c.expected))).buffer);
    // The archive is small enough for the first reads to hold all of it: padded (before its first
    // chunk and before the array's zarr.json, which follows the chunks) so that its chunk entries
    // are read when asked for, each by one request.
    const prefix = `${c.open.path}/`;
    let bytes = fs.readFileSync(path.join(data, c.path));
    bytes = padZip(bytes, 200 << 10, `${prefix}zarr.json`);
    bytes = padZip(bytes, 200 << 10, `${prefix}c/0/0`);
    fs.writeFileSync(path.join(tmp, name), bytes);
    const a = await api.openArray(`${base}/tmp/${name}`, c.open);
    assert.deepEqual(Array.from(a.shape), c.shape);
    const grid = c.shape.map((n, k) => Math.ceil(n / c.chunkShape[k]));
    let stored = 0;
    for (let y = 0; y < grid[0]; y++) {
      for (let x = 0; x < grid[1]; x++) {
        const { out: r, log } = await requests(() => a.getChunk([y, x]));
        // A stored chunk: one request for its entry (local header and data at once, also where the
        // local header leaves the sizes to a data descriptor); an absent one: none.
        const entry = `${prefix}c/${y}/${x}`;
        const present = bytes.includes(Buffer.from(entry));
        assert.equal(log.length, present ? 1 : 0, `${name} ${entry}: ${log.join(", ")}`);
        if (present) {
          assert.match(log[0], new RegExp(`^GET /tmp/${name.replace(".", "\\.")} bytes=\\d+-\\d+$`), `${name} ${entry}`);
          stored++;
        }
        // The writer's values (zarr-python's, read back through its ZipStore).
        const [h, w] = [Math.min(c.chunkShape[0], c.shape[0] - y * c.chunkShape[0]), Math.min(c.chunkShape[1], c.shape[1] - x * c.chunkShape[1])];
        assert.deepEqual(Array.from(r.shape), [h, w], `${name} ${entry}: shape`);
        for (let i = 0; i < h; i++) {
          for (let j = 0; j < w; j++) {
            const want = expected[(y * c.chunkShape[0] + i) * c.shape[1] + x * c.chunkShape[1] + j];
            const got = r.data[i * r.stride[0] + j * r.stride[1]];
            if (got !== want) assert.fail(`${name} ${entry}: element [${i}, ${j}] is ${got}, the writer's ${want}`);
          }
        }
      }
    }
    assert.equal(stored, 5, `${name}: 5 of the 6 chunks are stored`);
    // The whole array at once: the writer's values, and no request (each entry was read once,
    // and the store's cache holds entries this small).
    const { out: all, log } = await requests(() => a.get([null, null]));
    assert.deepEqual(Array.from(all.shape), c.shape);
    assert.deepEqual(Array.from(all.data), Array.from(expected), `${name}: the whole array`);
    assert.deepEqual(log, [], `${name}: entries asked for again`);
    a.close();
  }
});

test(".ozx: the archive comment's OME version is exposed; levels open through openMultiscale", async () => {
  const url = `${base}/fixtures/containers/image.ozx`;
  const info = containerInfo("containers/image.ozx");
  const ms = await api.openMultiscale(url);
  assert.ok(ms.levels.length >= 2);
  const g = await api.open(url);
  assert.ok(g instanceof api.Group);
  assert.equal(g.container?.kind, "zip");
  assert.equal(g.container?.comment, info.comment);
  assert.equal(g.container?.omeVersion, "0.5");
  ms.close();
});

/** A ZIP64 `zip` with a stored entry of `pad` zero bytes appended after its entries (RFC-9's
 * layout kept: the zarr.json documents stay first). */
function padZip64End(zip, pad) {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const locator = eocd - 20;
  assert.equal(zip.readUInt32LE(locator), 0x07064b50, "a ZIP64 archive");
  const record = Number(zip.readBigUInt64LE(locator + 8));
  const cdOffset = Number(zip.readBigUInt64LE(record + 48));
  const cdSize = Number(zip.readBigUInt64LE(record + 40));
  const name = Buffer.from("padding.bin");
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt32LE(zlib.crc32(Buffer.alloc(pad)) >>> 0, 14);
  local.writeUInt32LE(pad, 18);
  local.writeUInt32LE(pad, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  local.copy(central, 16, 14, 26); // crc and both sizes
  central.writeUInt16LE(name.length, 28);
  central.writeUInt32LE(cdOffset, 42);
  const shift = 30 + name.length + pad;
  const grow = 46 + name.length;
  const tail = Buffer.from(zip.subarray(record));
  const r = 0;
  const l = locator - record;
  const e = eocd - record;
  tail.writeBigUInt64LE(tail.readBigUInt64LE(r + 24) + 1n, r + 24);
  tail.writeBigUInt64LE(tail.readBigUInt64LE(r + 32) + 1n, r + 32);
  tail.writeBigUInt64LE(BigInt(cdSize + grow), r + 40);
  tail.writeBigUInt64LE(BigInt(cdOffset + shift), r + 48);
  tail.writeBigUInt64LE(BigInt(record + shift + grow), l + 8);
  tail.writeUInt16LE(tail.readUInt16LE(e + 8) + 1, e + 8);
  tail.writeUInt16LE(tail.readUInt16LE(e + 10) + 1, e + 10);
  tail.writeUInt32LE(cdSize + grow, e + 12);
  tail.writeUInt32LE(cdOffset + shift, e + 16);
  return Buffer.concat([zip.subarray(0, cdOffset), local, name, Buffer.alloc(pad), zip.subarray(cdOffset, cdOffset + cdSize), central, name, tail]);
}

test(".ozx larger than the first read: its start is read beside its end, and its zarr.json documents cost no request", async () => {
  const big = path.join(tmp, "big.ozx");
  fs.writeFileSync(big, padZip64End(fs.readFileSync(path.join(data, "containers/image.ozx")), 600 << 10));
  const url = `${base}/tmp/big.ozx`;
  const { out, log } = await requests(async () => {
    const ms = await api.openMultiscale(url);
    const level = ms.levels[0].array;
    const chunk = await level.getChunk(level.shape.map(() => 0));
    const n = server.log.length;
    const all = await level.get(level.shape.map(() => null));
    ms.close();
    return { chunk, n, all };
  });
  // The start and the end at once; the zarr.json documents (the root's, then each level's) come
  // with the start, and so does everything else of this small image (its entries lie in the
  // first 64 KiB, the padding after them): nothing more is asked for. As plain objects the
  // same first chunk costs three requests one after another (zarr.json, shard index, chunk).
  const first = log.slice(0, out.n);
  assert.deepEqual(first.sort(), ["GET /tmp/big.ozx bytes=-131072", "GET /tmp/big.ozx bytes=0-65535"], log.join("\n"));
  assert.equal(log.length, 2, log.join("\n"));
  // Every value read through the padded archive is the writer's (level 0 of image.ozx).
  assertWritersChunk(out.chunk, "ct_ozx_level0", [0, 0, 0], "big.ozx: the first chunk");
  assertWriters(out.all, "ct_ozx_level0", "big.ozx: level 0");

  // A server that ignores Range: the start's read is a hint and stops at its 64 KiB (TooLarge,
  // ignored); the end's brings the whole archive, once for every level's store (the directory
  // they share keeps it), and every value is still the writer's.
  const { out: again, log: log2 } = await requests(async () => {
    const ms = await api.openMultiscale(`${base}/__mode/ignore-range/tmp/big.ozx`);
    const a = ms.levels[0].array;
    const all = await a.get(a.shape.map(() => null));
    ms.close();
    return all;
  });
  assertWriters(again, "ct_ozx_level0", "big.ozx, Range ignored: level 0");
  assert.deepEqual(log2.sort(), ["GET /__mode/ignore-range/tmp/big.ozx bytes=-131072", "GET /__mode/ignore-range/tmp/big.ozx bytes=0-65535"], log2.join("\n"));
});

test("pasted URLs: |zip: pipelines, zarr3:// prefixes; n5:// and unknown stages are UnsupportedFormat", async () => {
  const zip = `${base}/fixtures/containers/zp3_group.zip`;
  const a = await api.openArray(`${zip}|zip:sharded_u16|zarr3:`);
  const b = await api.openArray(`zarr3://${zip}|zip:sharded_u16`);
  assert.deepEqual(a.shape, b.shape);
  const c = await api.openArray(zip, { store: "zip", path: "sharded_u16" });
  assert.deepEqual(c.shape, a.shape);
  for (const bad of [`n5://${base}/x`, `${zip}|ocdbt:`, `ftp://h/x`]) {
    await assert.rejects(api.open(bad), (e) => e.code === "UnsupportedFormat" && e.message.length > 0, bad);
  }
  // A link to a node's metadata document (copied from a bucket listing) opens the node.
  const d = await api.openArray(`${zip}|zip:sharded_u16/zarr.json`);
  assert.deepEqual(d.shape, a.shape);
  const v3 = `${base}/fixtures/zp/gzip_crc32c`;
  const v2 = `${base}/fixtures/zarrita/v2/data.zarr/1d.contiguous.lz4.i2`;
  for (const [node, doc] of [[v3, "zarr.json"], [v2, ".zarray"], [v2, ".zattrs"]]) {
    server.log.length = 0;
    const e = await api.openArray(`${node}/${doc}`);
    assert.equal(e.url, node, doc);
    assert.ok(!server.log.some((r) => r.path.includes(`${doc}/`)), JSON.stringify(server.log.map((r) => r.path)));
    e.close();
  }
  await assert.rejects(api.open(`${base}/fixtures/precomputed/png_u8/info`), (e) => e.code === "NotFound" && /its folder's URL/.test(e.message));
  const g = await api.open(`${base}/fixtures/containers/consolidated_v2.zarr/.zmetadata`);
  assert.ok(g instanceof api.Group);
  g.close();
});

test("inside an archive, a missing node is NotFound naming the path inside and the archive", async () => {
  const zip = `${base}/fixtures/containers/zp3_group.zip`;
  await assert.rejects(api.openArray(zip, { path: "no/such/array" }), (e) => {
    assert.equal(e.code, "NotFound", e.message);
    assert.match(e.message, /no\/such\/array/);
    assert.match(e.message, /zp3_group\.zip/);
    return true;
  });
  // The archive's root holds no node (a folder zipped from its parent, as zarrita's
  // zipped_from_parent): the message names the nodes it does hold.
  await assert.rejects(api.open(`${base}/fixtures/containers/folder_deflate.zip`), (e) => {
    assert.equal(e.code, "NotFound", e.message);
    assert.match(e.message, /folder_deflate\.zip/);
    assert.match(e.message, /"data\.zarr", "data\.zarr\/temps"/);
    return true;
  });
  // A URL that is not an archive at all.
  fs.writeFileSync(path.join(tmp, "not.zip"), "this is not a zip archive, just text");
  await assert.rejects(api.open(`${base}/tmp/not.zip`), (e) => e.code === "CorruptShard" && /not\.zip/.test(e.message));
});

test("openArray on a group says what it holds: an OME-Zarr image's levels, a consolidated group's arrays", async () => {
  await assert.rejects(api.openArray(`${base}/fixtures/containers/image.ozx`), (e) => {
    assert.equal(e.code, "NotAnArray", e.message);
    assert.match(e.message, /openMultiscale\(\)/);
    assert.match(e.message, /path "0"/);
    return true;
  });
  const g = await api.open(`${base}/fixtures/containers/consolidated_v3.zarr`);
  const first = g.children().find((c) => c.kind === "array").name;
  g.close();
  await assert.rejects(api.openArray(`${base}/fixtures/containers/consolidated_v3.zarr`), (e) => {
    assert.equal(e.code, "NotAnArray", e.message);
    assert.ok(e.message.includes(`its arrays: "${first}"`), e.message);
    return true;
  });
});

test("hostile archives: typed errors naming the archive, memory bounded, the module reads on", async () => {
  const good = fs.readFileSync(path.join(data, "containers/zp3_group.zip"));
  const eocd = good.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const eachEntry = (z, f) => {
    const cd = z.readUInt32LE(eocd + 16);
    for (let p = cd; p < eocd; p += 46 + z.readUInt16LE(p + 28) + z.readUInt16LE(p + 30) + z.readUInt16LE(p + 32)) f(p);
  };
  // [spoil, the code expected]
  const cases = {
    // The directory's offset past the end of the archive.
    "offset.zip": [(z) => z.writeUInt32LE(0xfffffff0, eocd + 16), "CorruptShard"],
    // 2^16 - 1 entries claimed in a small directory.
    "count.zip": [(z) => (z.writeUInt16LE(0xffff, eocd + 8), z.writeUInt16LE(0xffff, eocd + 10)), "CorruptShard"],
    // Every local header offset pointing at the same place: overlapping entries.
    "overlap.zip": [(z) => eachEntry(z, (p) => z.writeUInt32LE(0, p + 42)), "CorruptShard"],
    // Every local header offset past the directory (out of range).
    "outside.zip": [(z) => eachEntry(z, (p) => z.writeUInt32LE(0x7fffffff, p + 42)), "CorruptShard"],
    // Entries marked compressed with bzip2 (method 12).
    "bzip2.zip": [(z) => eachEntry(z, (p) => z.writeUInt16LE(12, p + 10)), "UnsupportedFormat"],
    // Entries marked encrypted (flag bit 0).
    "encrypted.zip": [(z) => eachEntry(z, (p) => z.writeUInt16LE(z.readUInt16LE(p + 8) | 1, p + 8)), "UnsupportedFormat"],
  };
  for (const [name, [spoil, code]] of Object.entries(cases)) {
    const z = Buffer.from(good);
    spoil(z);
    fs.writeFileSync(path.join(tmp, name), z);
    await assert.rejects(
      (async () => {
        const a = await api.openArray(`${base}/tmp/${name}`, { path: "sharded_u16" });
        await a.get(a.shape.map(() => null));
      })(),
      (e) => {
        assert.equal(e.code, code, `${name}: ${e.message}`);
        assert.match(e.message, new RegExp(name.replace(".", "\\.")), `${name}: ${e.message}`);
        return true;
      },
      name,
    );
  }
  // A ZIP64 end record claiming 2^32 entries in a directory of two.
  const meta1 = { zarr_format: 3, node_type: "array", shape: [4], data_type: "uint8", chunk_grid: { name: "regular", configuration: { chunk_shape: [4] } }, chunk_key_encoding: { name: "default" }, fill_value: 0, codecs: [{ name: "bytes" }] };
  const small = zipOf([["zarr.json", Buffer.from(JSON.stringify(meta1)), false], ["c/0", Buffer.from([1, 2, 3, 4]), false]]);
  fs.writeFileSync(path.join(tmp, "count64.zip"), zip64Claiming(small, 2 ** 32));
  await assert.rejects(api.openArray(`${base}/tmp/count64.zip`), (e) => {
    assert.equal(e.code, "CorruptShard", e.message);
    assert.match(e.message, /count64\.zip: .*4294967296 entries/);
    return true;
  });
  // Names with "..": never served, whichever way they are asked for.
  fs.writeFileSync(path.join(tmp, "dotdot.zip"), zipOf([["../up/zarr.json", Buffer.from(JSON.stringify(meta1)), false], ["a/../c/0", Buffer.from([1, 2, 3, 4]), false], ["zarr.json", Buffer.from(JSON.stringify(meta1)), false]]));
  await assert.rejects(api.openArray(`${base}/tmp/dotdot.zip`, { path: "../up" }), (e) => {
    assert.equal(e.code, "CorruptShard", e.message);
    assert.match(e.message, /dotdot\.zip: its name "\.\.\/up\/zarr\.json" leaves the archive's root/);
    return true;
  });
  const root = await api.openArray(`${base}/tmp/dotdot.zip`);
  assert.deepEqual([...(await root.get([null])).data], [0, 0, 0, 0], "c/0 is not read from a/../c/0");
  root.close();
  // A deflate bomb: an entry claiming 1 KiB that inflates to 64 MiB.
  const bomb = zipOf([["zarr.json", Buffer.from("{}"), false], ["c/0", zlib.deflateRawSync(Buffer.alloc(64 << 20)), true, 1024]]);
  fs.writeFileSync(path.join(tmp, "bomb.zip"), bomb);
  const meta = { zarr_format: 3, node_type: "array", shape: [1024], data_type: "uint8", chunk_grid: { name: "regular", configuration: { chunk_shape: [1024] } }, chunk_key_encoding: { name: "default" }, fill_value: 0, codecs: [{ name: "bytes" }] };
  fs.writeFileSync(path.join(tmp, "bomb.zip"), zipOf([["zarr.json", Buffer.from(JSON.stringify(meta)), false], ["c/0", zlib.deflateRawSync(Buffer.alloc(64 << 20)), true, 1024]]));
  const rss0 = process.memoryUsage().rss;
  const arr = await api.openArray(`${base}/tmp/bomb.zip`);
  // Its entry inflates past the size its headers declare: a corrupt chunk, stopped at that size.
  await assert.rejects(arr.get([null]), (e) => {
    assert.equal(e.code, "CorruptChunk", e.message);
    assert.match(e.message, /bomb\.zip\/c\/0: entry "c\/0" .* does not inflate/);
    return true;
  });
  assert.ok(process.memoryUsage().rss - rss0 < 48 << 20, "the bomb was not inflated past its declared size");
  // The module reads on: the writer's values.
  const ok = await api.openArray(`${base}/fixtures/containers/zp3_group.zip`, { path: "sharded_u16" });
  const want = containers.cases.find((k) => k.name === "ct_zp3zip_sharded_u16");
  const got = await ok.get(ok.shape.map(() => null));
  assert.deepEqual(Array.from(got.shape), want.shape);
  assert.deepEqual(Buffer.from(got.data.buffer, got.data.byteOffset, got.data.byteLength), fs.readFileSync(path.join(data, "..", want.expected)));
  ok.close();
});

/** `zip` with a ZIP64 end record and locator before its end record, claiming `count` entries. */
function zip64Claiming(zip, count) {
  const eocd = zip.length - 22;
  const cdSize = zip.readUInt32LE(eocd + 12);
  const cdOffset = zip.readUInt32LE(eocd + 16);
  const rec = Buffer.alloc(56);
  rec.writeUInt32LE(0x06064b50, 0);
  rec.writeBigUInt64LE(44n, 4);
  rec.writeUInt16LE(45, 12);
  rec.writeUInt16LE(45, 14);
  rec.writeBigUInt64LE(BigInt(count), 24);
  rec.writeBigUInt64LE(BigInt(count), 32);
  rec.writeBigUInt64LE(BigInt(cdSize), 40);
  rec.writeBigUInt64LE(BigInt(cdOffset), 48);
  const loc = Buffer.alloc(20);
  loc.writeUInt32LE(0x07064b50, 0);
  loc.writeBigUInt64LE(BigInt(eocd), 8);
  loc.writeUInt32LE(1, 16);
  const end = Buffer.from(zip.subarray(eocd));
  end.writeUInt16LE(0xffff, 8);
  end.writeUInt16LE(0xffff, 10);
  end.writeUInt32LE(0xffffffff, 12);
  end.writeUInt32LE(0xffffffff, 16);
  return Buffer.concat([zip.subarray(0, eocd), rec, loc, end]);
}

/** A zip of [name, bytes, deflated, declared size] entries, as Python's zipfile lays them out. */
function zipOf(entries) {
  const parts = [];
  const central = [];
  let at = 0;
  for (const [name, bytes, deflated, size] of entries) {
    const n = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(deflated ? 8 : 0, 8);
    local.writeUInt32LE(bytes.length, 18);
    local.writeUInt32LE(size ?? bytes.length, 22);
    local.writeUInt16LE(n.length, 26);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(deflated ? 8 : 0, 10);
    c.writeUInt32LE(bytes.length, 20);
    c.writeUInt32LE(size ?? bytes.length, 24);
    c.writeUInt16LE(n.length, 28);
    c.writeUInt32LE(at, 42);
    parts.push(local, n, bytes);
    central.push(c, n);
    at += 30 + n.length + bytes.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(at, 16);
  return Buffer.concat([...parts, cd, end]);
}
