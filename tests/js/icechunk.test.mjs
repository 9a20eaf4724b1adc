// Icechunk repositories (issue 22) through the built package in Node: what the fixture manifest
// cannot show — the requests the server sees (repo file, snapshot, each manifest once, chunks
// merged), virtual chunks, groups, a module trap, hostile repositories. Values of every case are
// checked by tests/fixtures/manifest-icechunk.json in every suite.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { startServer } from "../server.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const fixtures = path.join(repo, "tests/fixtures");
const manifest = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-icechunk.json"), "utf8"));

let api;
let server;
let base;

before(async () => {
  api = await import(pathToFileURL(path.join(repo, "pkg/index.js")).href);
  server = await startServer({ root: { "/fixtures": path.join(fixtures, "data") } });
  base = server.url;
});

after(async () => {
  await server?.close();
});

/** Requests the server saw while `work` ran, as `GET path [range]` (the repository's part). */
async function requests(work) {
  server.log.length = 0;
  const out = await work();
  const log = server.log.map((e) => `${e.method} ${e.path.replace(/^\/fixtures\/icechunk\//, "")}${e.range ? ` ${e.range}` : ""}`);
  return { out, log };
}

const v2 = () => `${base}/fixtures/icechunk/v2.icechunk`;
const expected = (name, Type) => {
  const b = fs.readFileSync(path.join(fixtures, "expected/icechunk", `${name}.bin`));
  return new Type(b.buffer, b.byteOffset, b.byteLength / Type.BYTES_PER_ELEMENT);
};
const caseOf = (name) => manifest.cases.find((c) => c.name === name);

/** Chunk `coords` of a 2-d case as its writer wrote it (its expected file, clipped at the edge). */
function writersChunk(name, Type, coords) {
  const c = caseOf(name);
  const all = expected(name, Type);
  const [h, w] = coords.map((x, k) => Math.min(c.chunkShape[k], c.shape[k] - x * c.chunkShape[k]));
  const out = new Type(h * w);
  for (let i = 0; i < h; i++) {
    for (let j = 0; j < w; j++) out[i * w + j] = all[(coords[0] * c.chunkShape[0] + i) * c.shape[1] + coords[1] * c.chunkShape[1] + j];
  }
  return { shape: [h, w], data: out };
}

/** A chunk as read (shape, strides) against the writer's. */
function assertWritersChunk(r, name, Type, coords, what) {
  const want = writersChunk(name, Type, coords);
  assert.deepEqual(Array.from(r.shape), want.shape, `${what}: shape`);
  const got = new Type(want.data.length);
  for (let i = 0; i < want.shape[0]; i++) for (let j = 0; j < want.shape[1]; j++) got[i * want.shape[1] + j] = r.data[i * r.stride[0] + j * r.stride[1]];
  assert.deepEqual(got, want.data, `${what}: values differ from the writer's (${name}, chunk [${coords}])`);
}

async function expectCode(promise, code, what) {
  await assert.rejects(promise, (e) => {
    assert.equal(e.code, code, `${what}: ${e.message}`);
    return true;
  });
}

test("a branch: the repo file and the snapshot at open, the manifest once, then one request per chunk file", async () => {
  const { out: a, log } = await requests(() => api.openArray(v2(), { store: "icechunk", path: "raw" }));
  assert.equal(log.length, 2, log.join("\n"));
  assert.equal(log[0], "GET v2.icechunk/repo");
  assert.match(log[1], /^GET v2\.icechunk\/snapshots\/[0-9A-Z]{20}$/);
  assert.deepEqual(a.shape, [40, 50]);
  assert.equal(a.container.kind, "icechunk");
  assert.equal(a.container.snapshot, manifest.snapshots.v2.second);
  assert.equal(a.container.comment, "second");
  const first = await requests(() => a.getChunk([0, 0]));
  assert.equal(first.log.length, 2, first.log.join("\n"));
  assert.match(first.log[0], /^GET v2\.icechunk\/manifests\/[0-9A-Z]{20}$/);
  assert.match(first.log[1], /^GET v2\.icechunk\/chunks\/[0-9A-Z]{20}/);
  const more = await requests(() => Promise.all([a.getChunk([1, 0]), a.getChunk([1, 1]), a.getChunk([2, 3])]));
  assert.equal(more.log.length, 2, `two chunk files; the missing chunk (2, 3) none: ${more.log.join("\n")}`);
  assert.ok(more.log.every((l) => l.includes("/chunks/")), more.log.join("\n"));
  const all = await a.get([null, null]);
  assert.deepEqual(all.data, expected("ic2_main_raw", Uint16Array));
});

test("a shard's chunks wanted together share one request; the manifest is not read again", async () => {
  const a = await api.openArray(v2(), { branch: "main", path: "sharded" });
  const { out, log } = await requests(() => a.get([[0, 32], [0, 24]]));
  const manifests = log.filter((l) => l.includes("/manifests/"));
  const chunks = log.filter((l) => l.includes("/chunks/"));
  assert.equal(manifests.length, 1, log.join("\n"));
  assert.ok(chunks.length <= 2 && chunks.every((l) => l.includes("bytes=")), `the shard's index and one merged range at most: ${log.join("\n")}`);
  const want = expected("ic2_main_sharded", Int32Array);
  for (let y = 0; y < 32; y++) for (let x = 0; x < 24; x++) assert.equal(out.data[y * 24 + x], want[y * 48 + x]);
  const again = await requests(() => a.get([[32, 64], [0, 24]]));
  assert.ok(!again.log.some((l) => l.includes("/manifests/")), again.log.join("\n"));
});

test("inline chunks need no request; tags, branches and snapshots read their own values", async () => {
  const small = await api.openArray(v2(), { store: "icechunk", path: "small" });
  await small.getChunk([0]);
  const { log } = await requests(() => small.get([null]));
  assert.deepEqual(log, [], "inline chunks come with the manifest");
  for (const [name, Type] of [["ic2_tag_raw", Uint16Array], ["ic2_dev_small", Float32Array], ["ic2_snapshot_raw", Uint16Array], ["ic2_dev_only", Uint8Array]]) {
    const c = caseOf(name);
    const a = await api.openArray(`${base}/fixtures/${c.path}`, c.open);
    assert.deepEqual((await a.get(c.shape.map(() => null))).data, expected(name, Type), name);
  }
  // The tag and main differ (two commits).
  assert.notDeepEqual(expected("ic2_tag_raw", Uint16Array), expected("ic2_main_raw", Uint16Array));
});

test("Neuroglancer's pipeline: |icechunk:@branch., @tag., @<snapshot>, no @", async () => {
  const first = manifest.snapshots.v2.first;
  for (const [url, snapshot] of [
    [`${v2()}|icechunk:raw`, manifest.snapshots.v2.second],
    [`${v2()}|icechunk:@branch.main/raw|zarr3:`, manifest.snapshots.v2.second],
    [`${v2()}|icechunk:@tag.v1/raw`, first],
    [`${v2()}|icechunk:@${first}/raw`, first],
  ]) {
    const a = await api.openArray(url);
    assert.equal(a.container.snapshot, snapshot, url);
  }
  const { log } = await requests(() => api.openArray(`${v2()}|icechunk:@${first}/raw`));
  assert.equal(log.length, 1, `a snapshot id: no repo file: ${log.join("\n")}`);
  await expectCode(api.openArray(`${v2()}|icechunk:@tag.nope/raw`), "NotFound", "an unknown tag");
  await expectCode(api.openArray(v2(), { branch: "main", tag: "v1", path: "raw" }), "InvalidSelection", "two versions");
  await expectCode(api.openArray(v2(), { snapshot: "../../etc/passwd", path: "raw" }), "InvalidSelection", "a bad id");
});

test("a group lists its children from the snapshot; they open at its snapshot without a request", async () => {
  const g = await api.open(v2(), { store: "icechunk" });
  assert.ok(g instanceof api.Group);
  assert.deepEqual(g.attributes.title, "icechunk fixture");
  assert.deepEqual(g.children().map((c) => `${c.name}:${c.kind}`).sort(), ["group:group", "raw:array", "sharded:array", "small:array"]);
  const { out: f8, log } = await requests(async () => (await g.open("group")).open("sub/f8"));
  assert.deepEqual(log, [], log.join("\n"));
  assert.equal(f8.container.snapshot, g.container.snapshot);
  const all = await f8.get([null, null]);
  const want = expected("ic2_main_f8", Float64Array);
  for (let i = 0; i < want.length; i++) assert.ok(Object.is(all.data[i], want[i]) || (Number.isNaN(all.data[i]) && Number.isNaN(want[i])));
});

test("spec v1: refs at fixed paths, no listing", async () => {
  const url = `${base}/fixtures/icechunk/v1.icechunk`;
  const { out: a, log } = await requests(() => api.openArray(url, { tag: "v1", path: "raw" }));
  assert.deepEqual(log.slice(0, 3), ["GET v1.icechunk/repo", "GET v1.icechunk/refs/tag.v1/ref.json", "GET v1.icechunk/refs/tag.v1/ref.json.deleted"]);
  assert.equal(log.length, 4);
  assert.deepEqual((await a.get([null, null])).data, expected("ic1_tag_raw", Uint16Array));
});

test("virtual chunks: s3:// and vcc:// locations in a container read by range; others refused", async () => {
  const v = manifest.virtual;
  const bucket = `${base}/fixtures/${v.served}`;
  let asked = [];
  const fetchVia = (input, init) => {
    const u = String(input);
    asked.push(u);
    return fetch(u.startsWith(v.https) ? bucket + u.slice(v.https.length) : u, init);
  };
  // (Spec v1: the container is declared in config.yaml.)
  for (const c of [...v.cases, manifest.virtual_v1]) {
    const a = await api.openArray(`${base}/fixtures/${c.path}`, { ...c.open, fetch: fetchVia });
    assert.deepEqual((await a.get([null, null])).data, expected(c.name, Uint16Array), c.name);
    assert.equal(a.container.kind, "icechunk");
  }
  assert.ok(asked.some((u) => u.startsWith(v.https)), asked.join("\n"));
  asked = [];
  const refused = await api.openArray(`${base}/fixtures/icechunk/virtual.icechunk`, { ...v.refused.open, fetch: fetchVia });
  const e = await refused.getChunk(v.refused.coords).catch((x) => x);
  assert.equal(e.code, v.refused.code, e.message);
  assert.match(e.message, /s3:\/\/other-bucket\/virtual\.bin/);
  assert.ok(!asked.some((u) => u.includes("other-bucket")), asked.join("\n"));
});

test("virtual chunks through resolveUrl: the caller's endpoint, no request to the public one", async () => {
  const v = manifest.virtual;
  const bucket = `${base}/fixtures/${v.served}`;
  const seen = [];
  const resolveUrl = (u) => {
    seen.push(u);
    return u.startsWith(v.bucket) ? bucket + u.slice(v.bucket.length) : undefined;
  };
  const asked = [];
  const fetchVia = (input, init) => {
    asked.push(String(input));
    return fetch(input, init);
  };
  const c = v.cases[0];
  const a = await api.openArray(`${base}/fixtures/${c.path}`, { ...c.open, resolveUrl, fetch: fetchVia });
  assert.deepEqual((await a.get([null, null])).data, expected(c.name, Uint16Array), c.name);
  assert.ok(seen.length > 0 && seen.every((u) => u.startsWith(v.bucket)), seen.join("\n"));
  assert.ok(!asked.some((u) => u.includes("amazonaws.com")), asked.join("\n"));
  assert.ok(asked.some((u) => u.startsWith(bucket)), asked.join("\n"));
  const thrower = () => {
    throw new Error("no signer for this bucket");
  };
  const b = await api.openArray(`${base}/fixtures/${c.path}`, { ...c.open, resolveUrl: thrower, fetch: fetchVia });
  const e = await b.getChunk([0, 0]).catch((x) => x);
  assert.equal(e.code, "InvalidSelection", e.message);
  assert.match(e.message, /virtual\.icechunk\/virt\/c\/0\/0: .*no signer for this bucket/);
});

test("a trap (a bug): an Icechunk array is rebuilt at the snapshot it read", async () => {
  const a = await api.openArray(v2(), { tag: "v1", path: "raw" });
  assertWritersChunk(await a.getChunk([1, 1]), "ic2_tag_raw", Uint16Array, [1, 1], "before the trap");
  await expectCode(api.__trapForTesting(true), "Internal", "the trap");
  const { out: after, log } = await requests(() => a.getChunk([1, 1]));
  assertWritersChunk(after, "ic2_tag_raw", Uint16Array, [1, 1], "after the trap");
  assert.ok(!log.includes("GET v2.icechunk/repo"), `the tag is not resolved again: ${log.join("\n")}`);
});

test("hostile repositories: typed errors, bounded, and the module keeps serving", async () => {
  const good = await api.openArray(v2(), { store: "icechunk", path: "raw" });
  for (const h of manifest.hostile) {
    const url = `${base}/fixtures/${h.path}`;
    const got = await api
      .openArray(url, h.open)
      .then((a) => a.get([null, null]))
      .then(
        () => null,
        (e) => e,
      );
    if (h.code === null) assert.equal(got, null, `${h.name}: ${got?.message}`);
    else {
      assert.ok(got !== null, `${h.name}: read`);
      assert.equal(got.code, h.code, `${h.name} (${h.what}): ${got.message}`);
    }
    // Still alive: a good array reads its writer's values.
    assertWritersChunk(await good.getChunk([0, 0]), "ic2_default_raw", Uint16Array, [0, 0], `after ${h.name}`);
  }
});
