// Reference files (kerchunk JSON) through the built package: what the fixture tests cannot
// show — the requests the server sees (one per HDF5 target for chunks wanted together, none for
// inline chunks), relative and rewritten target URLs, and hostile reference files.
// Run: node --test tests/js/containers.test.mjs (after `npm run build`).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { startServer } from "../server.mjs";


/**
 * A copy keeping its modification time (`cp -p`): the target as its writer left it, older than
 * the reference file naming it. (A target newer than its reference file costs a HEAD of that file
 * and a read again, once: README, When files change.)
 */
function copyAsWritten(from, to) {
  fs.copyFileSync(from, to);
  const st = fs.statSync(from);
  fs.utimesSync(to, st.atime, st.mtime);
}

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const dataDir = path.join(repo, "tests/fixtures/data");
const expectedDir = path.join(repo, "tests/fixtures");
const kerchunk = path.join(dataDir, "containers/kerchunk");
const manifest = JSON.parse(fs.readFileSync(path.join(repo, "tests/fixtures/manifest-containers.json"), "utf8"));
const pkgEntry = path.join(repo, "pkg/index.js");

const tmpRoot = path.join(repo, "tests/.tmp");
fs.mkdirSync(tmpRoot, { recursive: true });
const tmpDir = fs.mkdtempSync(path.join(tmpRoot, "containers-"));

/** @type {import("../../pkg/index.js")} */
let api;
let server;
let base;
const REFS = "/fixtures/containers/kerchunk/refs.json";
const H5 = "/fixtures/containers/kerchunk/sample.h5";

before(async () => {
  if (!fs.existsSync(pkgEntry)) throw new Error(`${pkgEntry} missing: run \`npm run build\` first`);
  api = await import(pathToFileURL(pkgEntry).href);
  server = await startServer({ root: { "/fixtures": dataDir, "/tmp": tmpDir } });
  base = server.url;
});

after(async () => {
  await server?.close();
  fs.rmSync(tmpDir, { recursive: true, force: true });
});

const caseNamed = (name) => manifest.cases.find((c) => c.name === name);

/** The writer's values of a case, as bytes. */
const expected = (name) => new Uint8Array(fs.readFileSync(path.join(expectedDir, caseNamed(name).expected)));

const bytesOf = (data) => new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

/** The requests the server saw since `from` (paths and ranges). */
const seen = (from) => server.log.slice(from).map((e) => ({ method: e.method, path: e.path, range: e.range, status: e.status }));

/** A reference file written into the served temp dir; its URL. */
function serve(rel, doc) {
  const file = path.join(tmpDir, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof doc === "string" ? doc : JSON.stringify(doc));
  return `${base}/tmp/${rel}`;
}

/** The fixture's refs.json, parsed. */
const fixtureRefs = () => JSON.parse(fs.readFileSync(path.join(kerchunk, "refs.json"), "utf8"));

async function expectCode(promise, code, what) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `${what}: expected ${code}, but it succeeded`);
  assert.ok(err instanceof api.ShardfetchError, `${what}: not a ShardfetchError: ${err?.stack ?? err}`);
  assert.equal(err.code, code, `${what}: ${err.code} (${err.message}), expected ${code}`);
  return err;
}

test("a server that ignores Range: the HDF5 file a reference file's arrays share is downloaded once for all", async () => {
  const from = server.log.length;
  const g = await api.open(`${base}/__mode/ignore-range${REFS}`, { workers: false });
  const names = ["gzip_i16", "plain_f32"];
  for (const name of names) {
    const arr = await g.openArray(name);
    assert.deepEqual(bytesOf((await arr.get(arr.shape.map(() => null))).data), expected(`ct_kerchunk_${name}`), name);
    arr.close();
  }
  const h5 = seen(from).filter((e) => e.path.endsWith(".h5"));
  assert.deepEqual(h5.map((e) => e.status), [200], `one whole download for ${names.length} arrays: ${JSON.stringify(h5)}`);
  g.close?.();
});

test("chunks of one HDF5 target wanted together are one request; metadata comes from the reference file", async () => {
  const from = server.log.length;
  const arr = await api.openArray(`${base}${REFS}`, { path: "gzip_i16", workers: false });
  const opened = seen(from);
  assert.deepEqual(
    opened.map((e) => [e.path, e.range]),
    [[REFS, null]],
    `opening reads the reference file once and nothing else: ${JSON.stringify(opened)}`,
  );
  assert.deepEqual(arr.shape, [40, 36]);
  assert.equal(arr.attributes.units, "counts");
  const { data } = await arr.get([null, null]);
  assert.deepEqual(bytesOf(data), expected("ct_kerchunk_gzip_i16"));
  const reads = seen(from).slice(1);
  // 8 chunks stored (one unwritten: fill), all in sample.h5: one ranged request.
  assert.equal(reads.length, 1, `one request for 8 chunks: ${JSON.stringify(reads)}`);
  assert.equal(reads[0].path, H5);
  assert.match(reads[0].range ?? "", /^bytes=9974-\d+$/);
  assert.equal(arr.stats().requests, 2);
  assert.equal(arr.stats().mergedRequests, 1);
  // Read again: the kept bytes answer (no request).
  await arr.get([[0, 16], null]);
  assert.equal(server.log.length, from + 2);
  arr.close();
});

test("inline chunks (text and base64) need no request; a group's children open from the same file", async () => {
  const from = server.log.length;
  const group = await api.open(`${base}${REFS}`);
  assert.ok(group instanceof api.Group, "the root is a v2 group");
  assert.equal(group.attributes.title, "kerchunk fixture");
  const listed = group.children().map((c) => `${c.name}:${c.kind}`).sort();
  assert.deepEqual(listed, ["gzip_i16:array", "plain_f32:array", "tiny_i16:array", "tiny_u2:array"], "children from the file's keys");
  for (const [child, name] of [
    ["tiny_i16", "ct_kerchunk_tiny_i16"],
    ["tiny_u2", "ct_kerchunk_tiny_u2"],
  ]) {
    const arr = await group.openArray(child, { workers: false });
    const before = server.log.length;
    const { data } = await arr.get([null]);
    assert.deepEqual(bytesOf(data), expected(name), child);
    assert.equal(server.log.length, before, `${child}: an inline chunk costs no request`);
    arr.close();
  }
  assert.ok(seen(from).every((e) => e.path === REFS), JSON.stringify(seen(from)));
});

test("relative target URLs resolve against the reference file's URL", async () => {
  fs.mkdirSync(path.join(tmpDir, "h5"), { recursive: true });
  copyAsWritten(path.join(kerchunk, "sample.h5"), path.join(tmpDir, "h5/sample.h5"));
  const doc = fixtureRefs();
  for (const [k, v] of Object.entries(doc.refs)) {
    if (!Array.isArray(v)) continue;
    // gzip_i16 beside the file's parent's parent, plain_f32 on the server's root.
    doc.refs[k] = [k.startsWith("gzip_i16") ? "../../h5/./sample.h5" : H5, v[1], v[2]];
  }
  const url = serve("rel/a/refs.json", doc);
  const from = server.log.length;
  const g = await api.openArray(url, { path: "gzip_i16", workers: false });
  assert.deepEqual(bytesOf((await g.get([null, null])).data), expected("ct_kerchunk_gzip_i16"));
  const p = await api.openArray(url, { path: "plain_f32", workers: false });
  assert.deepEqual(bytesOf((await p.get([null, null])).data), expected("ct_kerchunk_plain_f32"));
  const targets = seen(from).filter((e) => e.path.endsWith(".h5"));
  assert.deepEqual(
    targets.map((e) => e.path),
    ["/tmp/h5/sample.h5", H5],
    JSON.stringify(targets),
  );
  g.close();
  p.close();
});

test("resolveUrl rewrites every target, seeing s3:// as written and relative ones resolved", async () => {
  fs.mkdirSync(path.join(tmpDir, "moved"), { recursive: true });
  copyAsWritten(path.join(kerchunk, "sample.h5"), path.join(tmpDir, "moved/sample.h5"));
  const asked = [];
  const resolveUrl = (u) => {
    asked.push(u);
    return u.replace(`${base}/fixtures/containers/kerchunk/`, `${base}/tmp/moved/`).replace("s3://bucket/", `${base}/tmp/moved/`);
  };
  const from = server.log.length;
  const arr = await api.openArray(`${base}${REFS}`, { path: "gzip_i16", resolveUrl, workers: false });
  assert.deepEqual(bytesOf((await arr.get([null, null])).data), expected("ct_kerchunk_gzip_i16"));
  assert.deepEqual(asked, [`${base}/fixtures/containers/kerchunk/sample.h5`], "once per target, resolved");
  const reads = seen(from).filter((e) => e.path.endsWith(".h5"));
  assert.deepEqual(reads.map((e) => e.path), ["/tmp/moved/sample.h5"]);
  arr.close();
  // A Parquet set: once per record file that names the target (gzip_i16: 5 records, the one
  // holding the missing chunk too).
  asked.length = 0;
  const pfrom = server.log.length;
  const parr = await api.openArray(`${base}${PARQ}`, { path: "gzip_i16", resolveUrl, workers: false });
  assert.deepEqual(bytesOf((await parr.get([null, null])).data), expected("ct_kerchunk_parq_gzip_i16"));
  assert.deepEqual(asked, Array(5).fill(`${base}/fixtures/containers/kerchunk/sample.h5`), "once per record file");
  assert.deepEqual(seen(pfrom).filter((e) => e.path.endsWith(".h5")).map((e) => e.path), ["/tmp/moved/sample.h5"]);
  parr.close();

  // s3:// reaches resolveUrl as written; without it, it would go to the public S3 endpoint.
  const doc = fixtureRefs();
  for (const [k, v] of Object.entries(doc.refs)) if (Array.isArray(v)) doc.refs[k] = ["s3://bucket/sample.h5", v[1], v[2]];
  const url = serve("s3refs/refs.json", doc);
  asked.length = 0;
  const s3 = await api.openArray(url, { path: "plain_f32", resolveUrl, workers: false });
  assert.deepEqual(bytesOf((await s3.get([null, null])).data), expected("ct_kerchunk_plain_f32"));
  assert.deepEqual(asked, ["s3://bucket/sample.h5"]);

  // A throwing or non-string resolveUrl is an error naming the reference file.
  const thrown = await expectCode(
    api.openArray(url, { path: "plain_f32", resolveUrl: () => { throw new Error("no signer"); } }),
    "InvalidSelection",
    "a throwing resolveUrl",
  );
  assert.match(thrown.message, /resolveUrl\(s3:\/\/bucket\/sample\.h5\): no signer/);
  assert.ok(thrown.message.includes(url), thrown.message);
  const async = await expectCode(api.openArray(url, { path: "plain_f32", resolveUrl: async (u) => u }), "InvalidSelection", "an async resolveUrl");
  assert.match(async.message, /resolveUrl\(s3:\/\/bucket\/sample\.h5\): returned a Promise/);
  s3.close();
});

test("store: \"references\" reads any URL as a reference file; other .json documents are read once and left alone", async () => {
  const url = serve("named/refs.kerchunk", fs.readFileSync(path.join(kerchunk, "refs_gen.json"), "utf8").replaceAll("grid_u16.raw", "/fixtures/containers/kerchunk/grid_u16.raw"));
  const arr = await api.openArray(url, { store: "references", path: "grid", workers: false });
  assert.deepEqual(bytesOf((await arr.get([null, null])).data), expected("ct_refs_gen_grid"));
  arr.close();
  // Without the hint a URL not ending in .json is a store of its own: not read as references.
  await expectCode(api.openArray(url, { path: "grid" }), "NotFound", "no hint, no .json");
  // A .json document that is no reference file: one request for it, then the usual probing.
  const other = serve("other/package.json", { name: "x", version: 1 });
  const from = server.log.length;
  await expectCode(api.openArray(other), "NotFound", "another JSON document");
  const sameDoc = seen(from).filter((e) => e.path === "/tmp/other/package.json");
  assert.equal(sameDoc.length, 1, JSON.stringify(seen(from)));
  // …and with the hint, an error saying what it is not (a value no reference is).
  const pkg = serve("other/pkg.json", { name: "x", private: true });
  const e = await expectCode(api.openArray(pkg, { store: "references" }), "InvalidMetadata", "forced on another document");
  assert.ok(e.message.includes(pkg) && e.message.includes("private"), e.message);
  // A Parquet reference set is a directory: without its .zmetadata, NotFound saying so (one request).
  const before = server.log.length;
  const pq = await expectCode(api.openArray(`${base}/tmp/refs.parquet/`), "NotFound", "parquet");
  assert.match(pq.message, /\.zmetadata of a Parquet reference set/);
  assert.deepEqual(seen(before).map((e) => e.path), ["/tmp/refs.parquet/.zmetadata"]);
});

const PARQ = "/fixtures/containers/kerchunk/refs.parq";

test("Parquet references (fastparquet, pyarrow): metadata from .zmetadata, each record file read once for all its chunks", async () => {
  for (const [dir, stem] of [[PARQ, "ct_kerchunk_parq"], ["/fixtures/containers/kerchunk/refs_pyarrow.parq", "ct_kerchunk_parqa"]]) {
    const group = await api.open(`${base}${dir}`);
    assert.deepEqual(group.children().map((c) => c.name ?? c).sort(), ["gzip_i16", "plain_f32", "tiny_i16", "tiny_u2"]);
    const from = server.log.length;
    const arr = await api.openArray(`${base}${dir}`, { path: "gzip_i16", workers: false });
    assert.deepEqual(bytesOf((await arr.get([null, null])).data), expected(`${stem}_gzip_i16`));
    const reads = seen(from);
    assert.equal(reads.filter((e) => e.path === `${dir}/.zmetadata`).length, 1, JSON.stringify(reads));
    // 9 chunks, 2 rows a record: records 0–4, each read once (the missing chunk's too).
    const records = reads.filter((e) => e.path.startsWith(`${dir}/gzip_i16/refs.`)).map((e) => e.path).sort();
    assert.deepEqual(records, [0, 1, 2, 3, 4].map((k) => `${dir}/gzip_i16/refs.${k}.parq`), JSON.stringify(reads));
    // Chunks are ranges of sample.h5, merged as a shard's are: fewer requests than chunks.
    const h5 = reads.filter((e) => e.path === H5);
    assert.ok(h5.length >= 1 && h5.length < 8, JSON.stringify(h5));
    arr.close();
    group.close?.();
  }
});

test("hostile Parquet references: a record_size of 0, a record file cut in half — typed errors naming the file", async () => {
  const dir = "/fixtures/containers/kerchunk/hostile";
  const zero = await expectCode(api.openArray(`${base}${dir}/refs_record_size_0.parq`, { path: "gzip_i16" }), "InvalidMetadata", "record_size 0");
  assert.ok(zero.message.includes(`${dir}/refs_record_size_0.parq/.zmetadata`), zero.message);
  // The cut set beside the HDF5 file its references name (relative: `sample.h5`, absent from the
  // fixtures' hostile/, where every target would be missing and read as the fill value).
  const copy = path.join(tmpDir, "hostile");
  fs.cpSync(path.join(dataDir, "containers/kerchunk/hostile/refs_truncated.parq"), path.join(copy, "refs_truncated.parq"), { recursive: true });
  copyAsWritten(path.join(kerchunk, "sample.h5"), path.join(copy, "sample.h5"));
  const cut = await api.openArray(`${base}/tmp/hostile/refs_truncated.parq`, { path: "gzip_i16", workers: false });
  const e = await expectCode(cut.getChunk([0, 0]), "CorruptShard", "a record file cut in half");
  assert.ok(e.message.includes("/tmp/hostile/refs_truncated.parq/gzip_i16/refs.0.parq"), e.message);
  // Chunks of other records still read: the writer's values (chunk [2, 2], 8 × 4 at the corner).
  const c = caseNamed("ct_kerchunk_parq_gzip_i16");
  const all = new Int16Array(expected(c.name).slice().buffer);
  const ok = await cut.getChunk([2, 2]);
  const [h, w] = [c.shape[0] - 2 * c.chunkShape[0], c.shape[1] - 2 * c.chunkShape[1]];
  assert.deepEqual(Array.from(ok.shape), [h, w]);
  for (let i = 0; i < h; i++) {
    for (let j = 0; j < w; j++) {
      const want = all[(2 * c.chunkShape[0] + i) * c.shape[1] + 2 * c.chunkShape[1] + j];
      assert.equal(ok.data[i * ok.stride[0] + j * ok.stride[1]], want, `chunk [2, 2] element [${i}, ${j}]`);
    }
  }
  assert.ok(server.log.some((l) => l.path === "/tmp/hostile/sample.h5" && l.status === 206), "read from the HDF5 file, not the fill value");
  cut.close();
});

test("hostile reference files are typed errors naming the file (and key); the module keeps working", async () => {
  const refs = fixtureRefs();
  const zarray = refs.refs["plain_f32/.zarray"];
  const withChunk = (value) => ({ version: 1, refs: { ".zgroup": '{"zarr_format":2}', "a/.zarray": zarray, "a/0.0": value } });
  const h5 = `${base}${H5}`;
  const cases = [
    // Past the target's end: the server answers 416.
    { name: "past-end", doc: withChunk([h5, 1_000_000, 1200]), open: "ok", read: "CorruptShard", names: ["a/0.0"] },
    { name: "bad-base64", doc: withChunk("base64:!!!!"), open: "ok", read: "CorruptChunk", names: ["a/0.0"] },
    { name: "base64-length", doc: withChunk("base64:QUJDRA=Q"), open: "ok", read: "CorruptChunk", names: ["a/0.0"] },
    { name: "negative-offset", doc: withChunk([h5, -1, 1200]), open: "InvalidMetadata", names: ["a/0.0"] },
    { name: "negative-length", doc: withChunk([h5, 0, -1200]), open: "InvalidMetadata", names: ["a/0.0"] },
    { name: "overflow", doc: withChunk([h5, 18446744073709551000, 1200]), open: "InvalidMetadata", names: ["a/0.0"] },
    { name: "huge-length", doc: withChunk([h5, 0, 9007199254740991]), open: "ok", read: "TooLarge", names: ["a/0.0"] },
    { name: "number", doc: withChunk(12), open: "InvalidMetadata", names: ["a/0.0"] },
    { name: "object", doc: withChunk({ url: h5 }), open: "InvalidMetadata", names: ["a/0.0"] },
    { name: "two-items", doc: withChunk([h5, 0]), open: "InvalidMetadata", names: ["a/0.0"] },
    {
      name: "cycle",
      doc: { ...withChunk(["{{a}}", 0, 1200]), templates: { a: "{{b}}", b: "{{a}}" } },
      open: "InvalidMetadata",
      names: ["cycle"],
    },
    {
      name: "gen-1e9",
      doc: {
        version: 1,
        refs: { ".zgroup": '{"zarr_format":2}', "a/.zarray": zarray },
        gen: [{ key: "a/{{i}}.{{j}}", url: h5, offset: "{{i * 1200}}", length: "1200", dimensions: { i: { stop: 1_000_000 }, j: { stop: 1_000 } } }],
      },
      open: "TooLarge",
      names: ["1000000000 keys"],
    },
    { name: "version-3", doc: { ...withChunk([h5, 8760, 1200]), version: 3 }, open: "UnsupportedFormat", names: ["version 3"] },
    { name: "truncated", doc: JSON.stringify(withChunk([h5, 8760, 1200])).slice(0, 60), open: "InvalidMetadata", names: [] },
  ];
  for (const c of cases) {
    const url = serve(`hostile/${c.name}.json`, c.doc);
    const what = `${c.name}`;
    if (c.open !== "ok") {
      const e = await expectCode(api.openArray(url, { path: "a", workers: false }), c.open, what);
      for (const n of [url, ...c.names]) assert.ok(e.message.includes(n), `${what}: ${e.message} lacks ${n}`);
      continue;
    }
    const arr = await api.openArray(url, { path: "a", workers: false, maxDecodedBytes: 1 << 20 });
    const e = await expectCode(arr.getChunk([0, 0]), c.read, what);
    for (const n of [url, ...c.names]) assert.ok(e.message.includes(n), `${what}: ${e.message} lacks ${n}`);
    if (c.name === "past-end") {
      assert.ok(server.log.some((l) => l.path === H5 && l.status === 416), "the server answered 416");
    }
    arr.close();
  }
  // Too large for maxMetadataBytes: refused, named.
  const big = serve("hostile/big.json", withChunk([h5, 8760, 1200]));
  const e = await expectCode(api.openArray(big, { path: "a", maxMetadataBytes: 100 }), "TooLarge", "maxMetadataBytes");
  assert.ok(e.message.includes(big) && e.message.includes("maxMetadataBytes"), e.message);
  // The same module still reads.
  const ok = await api.openArray(`${base}${REFS}`, { path: "plain_f32", workers: false });
  assert.deepEqual(bytesOf((await ok.get([null, null])).data), expected("ct_kerchunk_plain_f32"));
  ok.close();
});

test("a trapped module is replaced and a reference file's array reopens, resolveUrl kept", async () => {
  fs.mkdirSync(path.join(tmpDir, "moved2"), { recursive: true });
  copyAsWritten(path.join(kerchunk, "sample.h5"), path.join(tmpDir, "moved2/sample.h5"));
  const resolveUrl = (u) => u.replace("/fixtures/containers/kerchunk/", "/tmp/moved2/");
  const arr = await api.openArray(`${base}${REFS}`, { path: "gzip_i16", resolveUrl, workers: false });
  await expectCode(api.__trapForTesting(false), "Internal", "the trap");
  const from = server.log.length;
  assert.deepEqual(bytesOf((await arr.get([null, null])).data), expected("ct_kerchunk_gzip_i16"));
  // Rebuilt without its caches: the reference file again, then the target, rewritten.
  assert.deepEqual(seen(from).map((e) => e.path), [REFS, "/tmp/moved2/sample.h5"]);
  arr.close();
});
