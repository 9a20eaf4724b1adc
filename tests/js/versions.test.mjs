// Objects that change under an open array (issue 43), through the built package: in Node, and
// in headless Chromium on another origin (where ETag is seen only when the server exposes it).
// The fixtures of tests/fixtures/manifest-versions.json — every store kind, each version written by
// its own writer — are served by tests/server.mjs at the same URLs, switched from version a to b
// (and c, whose metadata changed) at a chosen request. Every result must be one version's values
// (per chunk; per object for a region), or a Changed error; never a mix, never another error.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

import { startServer } from "../server.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const fixtures = path.join(repo, "tests/fixtures");
const manifest = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-versions.json"), "utf8"));

/** A case of the manifest, with what the checks need. */
function prepare(c) {
  const dir = c.root.replace("/{version}", "");
  const versions = {};
  for (const [v, d] of Object.entries(c.versions)) {
    const b = fs.readFileSync(path.join(fixtures, d.expected));
    versions[v] = {
      values: new Uint16Array(b.buffer, b.byteOffset, b.byteLength / 2),
      shape: d.shape,
      metadataChanged: d.metadataChanged === true,
      // Grid indexes as the writer gives them (a precomputed volume's without its channel axis).
      layout: c.layout[v].map(([g, object]) => [[...g, ...Array(d.shape.length - g.length).fill(0)], object]),
    };
  }
  return { ...c, dir, prefix: `/v/${dir}`, versions, pinned: c.kind === "icechunk" };
}
const cases = manifest.cases.map(prepare);
const dirs = [...new Set(cases.map((c) => c.dir))];

let api;
let server;
let pageServer;
let browser;

before(async () => {
  api = await import(pathToFileURL(path.join(repo, "pkg/index.js")).href);
  const versions = {};
  for (const dir of dirs) {
    const vs = Object.keys(cases.find((c) => c.dir === dir).versions).sort();
    versions[`/v/${dir}`] = vs.map((v) => path.join(fixtures, "data", dir, v));
  }
  server = await startServer({ root: { "/fx": fixtures }, versions });
  pageServer = await startServer({ root: { "/": repo } });
});

after(async () => {
  await browser?.close();
  await server?.close();
  await pageServer?.close();
});

const index = (c, v) => Object.keys(c.versions).sort().indexOf(v);

/** The URL and options that open `c` on the server at `base` (a mode prefix, or ""). */
function where(c, base, mode = "") {
  const at = `${base}${mode ? `/__mode/${mode}` : ""}${c.prefix}${c.open ? `/${c.open}` : ""}`;
  return { url: at, options: { ...c.options } };
}

/** Element `at` of version `v`, if inside its shape. */
function value(c, v, at) {
  const { shape, values } = c.versions[v];
  let i = 0;
  for (let k = 0; k < shape.length; k++) {
    if (at[k] >= shape[k]) return undefined;
    i = i * shape[k] + at[k];
  }
  return values[i];
}

/**
 * The versions (of the array's `shape`) whose values the box holds, all of it: `data` with
 * `shape` and `stride` (elements), its first element at array coordinates `origin`.
 */
function versionsOf(c, arrayShape, data, shape, stride, origin) {
  const out = [];
  for (const [v, ver] of Object.entries(c.versions)) {
    if (ver.shape.join() !== arrayShape.join()) continue;
    let all = true;
    const n = shape.reduce((a, b) => a * b, 1);
    const idx = shape.map(() => 0);
    for (let e = 0; e < n && all; e++) {
      let at = 0;
      for (let k = 0; k < shape.length; k++) at += idx[k] * stride[k];
      all = value(c, v, idx.map((i, k) => i + origin[k])) === data[at];
      for (let k = shape.length - 1; k >= 0; k--) {
        if (++idx[k] < shape[k]) break;
        idx[k] = 0;
      }
    }
    if (all) out.push(v);
  }
  return out;
}

const cStride = (shape) => shape.map((_, k) => shape.slice(k + 1).reduce((a, b) => a * b, 1));

/** The versions each object of a whole-array region holds (a store of several objects has no version of its own). */
function regionVersions(c, arrayShape, r) {
  const layout = Object.values(c.versions).find((v) => v.shape.join() === arrayShape.join()).layout;
  const stride = cStride(r.shape);
  const byObject = new Map();
  for (const [g, object] of layout) {
    const origin = g.map((i, k) => i * c.chunkShape[k]);
    const box = origin.map((o, k) => Math.min(c.chunkShape[k], r.shape[k] - o));
    const at = origin.reduce((s, o, k) => s + o * stride[k], 0);
    const vs = versionsOf(c, arrayShape, r.data.subarray(at), box, stride, origin);
    byObject.set(object, byObject.has(object) ? byObject.get(object).filter((v) => vs.includes(v)) : vs);
  }
  return byObject;
}

/** What a read gave: the versions it may be of, or "Changed"; anything else throws. */
async function outcome(what, work, check) {
  try {
    return check(await work());
  } catch (e) {
    if (e?.code === "Changed") {
      assert.match(e.message, /\/v\//, `${what}: ${e.message}`);
      return "Changed";
    }
    throw new Error(`${what}: ${e?.code} ${e?.message ?? e}`);
  }
}

/**
 * A viewer's reads — the first and last chunks, every chunk together, the whole array, the first
 * chunk again — each checked. Returns the outcomes.
 */
async function reads(c, a, what) {
  const layout = Object.values(c.versions).find((v) => v.shape.join() === a.shape.join())?.layout;
  assert.ok(layout, `${what}: opened at shape ${a.shape}`);
  const grid = layout.map(([g]) => g);
  const origin = (g) => g.map((i, k) => i * c.chunkShape[k]);
  const chunk = (g) => (r) => {
    const vs = versionsOf(c, a.shape, r.data, r.shape, r.stride, origin(g));
    assert.ok(vs.length > 0, `${what}: chunk ${g} holds values of no version`);
    return vs;
  };
  const out = [];
  for (const g of [grid[0], grid[grid.length - 1]]) out.push(await outcome(`${what}: chunk ${g}`, () => a.getChunk(g), chunk(g)));
  const together = await Promise.all(
    grid.map((g) => outcome(`${what}: batch chunk ${g}`, () => a.getChunk(g), chunk(g))),
  );
  out.push(...together);
  out.push(
    await outcome(
      `${what}: region`,
      () => a.get(a.shape.map(() => null)),
      (r) => {
        for (const [object, vs] of regionVersions(c, a.shape, r)) {
          assert.ok(vs.length > 0, `${what}: the region's chunks of ${object} are of no one version`);
        }
        return [...new Set([...regionVersions(c, a.shape, r).values()].flat())];
      },
    ),
  );
  out.push(await outcome(`${what}: chunk ${grid[0]} again`, () => a.getChunk(grid[0]), chunk(grid[0])));
  return out;
}

/** Requests under the case's prefix since `from` (log index). */
const asked = (c, from) => server.log.slice(from).filter((e) => e.path.includes(c.prefix)).length;

for (const c of cases) {
  test(`${c.name} (${c.kind}): switched at every request of a viewer's reads, one version per result`, async () => {
    const { url, options } = where(c, server.url);
    for (const to of Object.keys(c.versions).filter((v) => v !== "a")) {
      // Requests of the reads without a switch: the switch lands before each of them.
      server.setVersion(c.prefix, 0);
      const from = server.log.length;
      const quiet = await api.openArray(url, { ...options, workers: false });
      const plain = await reads(c, quiet, `${c.name} quiet`);
      assert.ok(plain.every((o) => o !== "Changed" && o.includes("a")), `${c.name}: without a switch ${JSON.stringify(plain)}`);
      quiet.close();
      const total = asked(c, from);
      let newer = 0;
      let any = false;
      for (let at = 1; at <= total; at++) {
        server.setVersion(c.prefix, 0);
        server.switchAt(c.prefix, index(c, to), at);
        const what = `${c.name} a→${to} at request ${at}`;
        const start = server.log.length;
        let a;
        try {
          a = await api.openArray(url, { ...options, workers: false });
        } catch (e) {
          if (e?.code === "Changed") continue;
          throw new Error(`${what}: open: ${e?.code} ${e?.message}`);
        }
        const out = await reads(c, a, what);
        newer += out.filter((o) => o !== "Changed" && !o.every((v) => v === "a")).length;
        any ||= asked(c, start) > at + 1;
        a.close();
      }
      if (!c.versions[to].metadataChanged && !c.pinned && any) assert.ok(newer > 0, `${c.name} a→${to}: the new version was never read`);
      if (c.pinned) assert.equal(newer, 0, `${c.name}: a snapshot resolved at open is the one read`);
    }
    server.setVersion(c.prefix, 0);
  });
}

/** The whole array read, the switch, then two reads: per `recheck`. */
async function warmSwitch(c, to, recheck, base, read, mode = "") {
  const { url, options } = where(c, base, mode);
  server.setVersion(c.prefix, 0);
  const a = await read.open(url, { ...options, recheck });
  const sel = a.shape.map(() => null);
  const first = await read.get(a, sel);
  assert.ok(first.versions?.includes("a"), `${c.name}: before the switch ${JSON.stringify(first)}`);
  server.setVersion(c.prefix, index(c, to));
  if (typeof recheck === "number") await new Promise((r) => setTimeout(r, recheck + 50));
  const what = `${c.name} warm a→${to} (recheck ${recheck}${mode ? `, ${mode}` : ""})`;
  const results = [];
  for (let k = 0; k < 2; k++) {
    const from = server.log.length;
    const got = await read.get(a, sel);
    const askedNow = asked(c, from) > 0;
    if (got.error) {
      assert.equal(got.error.code, "Changed", `${what}: read ${k}: ${got.error.code} ${got.error.message}`);
      assert.ok(k === 0 || c.versions[to].metadataChanged, `${what}: read ${k} still Changed`);
      results.push("Changed");
      continue;
    }
    const isNew = !c.versions[to].metadataChanged && got.versions.includes(to);
    const isOld = got.versions.includes("a") && (!askedNow || c.pinned) && typeof recheck !== "number";
    assert.ok(isNew || isOld, `${what}: read ${k} gave ${JSON.stringify(got.versions)} (asked the server: ${askedNow})`);
    results.push(got.versions);
  }
  await read.close(a);
  return results;
}

/** Reads through the package in Node, the versions of a whole-array region classified (one per object). */
function inNode(c) {
  return {
    open: (url, options) => api.openArray(url, options),
    async get(a, sel) {
      let r;
      try {
        r = await a.get(sel);
      } catch (e) {
        return { error: { code: e?.code, message: e?.message } };
      }
      return { versions: common(c, a.shape, r) };
    },
    close: async (a) => a.close(),
  };
}

/** The versions every object of a whole-array region is of (each object must be of one). */
function common(c, shape, r) {
  const byObject = regionVersions(c, shape, r);
  for (const [object, vs] of byObject) assert.ok(vs.length > 0, `${c.name}: the region's chunks of ${object} are of no one version`);
  return [...new Set([...byObject.values()].flat())].filter((v) => [...byObject.values()].every((vs) => vs.includes(v)));
}

test("warm arrays switched between reads: the new version, or Changed where the metadata changed (Node; ETag, Last-Modified only, none)", async () => {
  for (const c of cases) {
    for (const to of Object.keys(c.versions).filter((v) => v !== "a")) {
      for (const recheck of ["open", 200]) {
        for (const mode of ["", "hide-etag"]) await warmSwitch(c, to, recheck, server.url, inNode(c), mode);
      }
    }
  }
});

test("where nothing changes, validators cost no request (the same requests with and without them)", async () => {
  for (const c of cases) {
    const logs = [];
    for (const mode of ["no-validators", "", "hide-etag"]) {
      server.setVersion(c.prefix, 0);
      const { url, options } = where(c, server.url, mode);
      const from = server.log.length;
      const a = await api.openArray(url, { ...options, workers: false });
      await reads(c, a, `${c.name} ${mode}`);
      a.close();
      logs.push(server.log.slice(from).map((e) => `${e.method} ${e.path.replace(/^\/__mode\/[^/]+/, "")} ${e.range ?? ""}`));
    }
    assert.deepEqual(logs[1], logs[0], `${c.name}: with validators`);
    assert.deepEqual(logs[2], logs[0], `${c.name}: ETag hidden`);
  }
});

test("stats count the changes seen; conditional reads refuse a stale answer (If-Match: 412, If-Range: the new whole)", async () => {
  const c = cases.find((x) => x.name === "zarr3_sharded");
  for (const conditional of [false, "if-match", "if-range"]) {
    server.setVersion(c.prefix, 0);
    const { url, options } = where(c, server.url);
    const a = await api.openArray(url, { ...options, conditional, workers: false });
    await a.getChunk([0, 0]);
    server.setVersion(c.prefix, 1);
    const from = server.log.length;
    const r = await a.getChunk([1, 1]);
    assert.deepEqual(versionsOf(c, a.shape, r.data, r.shape, r.stride, [16, 16]), ["b"], `${conditional}`);
    const log = server.log.slice(from);
    if (conditional === "if-match") assert.ok(log.some((e) => e.status === 412), JSON.stringify(log));
    if (conditional === "if-range") assert.ok(log.some((e) => e.condition === "whole"), JSON.stringify(log));
    if (conditional === false) assert.ok(log.every((e) => e.condition === undefined), JSON.stringify(log));
    assert.equal(a.stats().changes, 1, `${conditional}`);
    a.close();
  }
  server.setVersion(c.prefix, 0);
});

// ---- Chromium: the page on another origin than the data ----

/** A page in a context of its own (its own HTTP and preflight caches). */
async function page() {
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  const context = await browser.newContext();
  const p = await context.newPage();
  p.on("close", () => void context.close().catch(() => {}));
  const errors = [];
  p.on("pageerror", (e) => errors.push(e.message));
  await p.goto(`${pageServer.url}/tests/js/blank.html`);
  await p.evaluate(async (pkg) => {
    window.api = await import(pkg);
    window.arrays = [];
  }, `${pageServer.url}/pkg/index.js`);
  return { p, errors };
}

/** Reads in the page; the versions classified here. */
function inPage(p, c) {
  return {
    open: (url, options) => p.evaluate(async ([url, options]) => (window.arrays.push(await window.api.openArray(url, options)), window.arrays.length - 1), [url, options]),
    async get(id, sel) {
      const got = await p.evaluate(
        async ([id, sel]) => {
          try {
            const r = await window.arrays[id].get(sel);
            return { data: Array.from(r.data), shape: r.shape };
          } catch (e) {
            return { error: { code: e?.code, message: e?.message } };
          }
        },
        [id, sel],
      );
      if (got.error) return got;
      return { versions: common(c, got.shape, { data: Uint16Array.from(got.data), shape: got.shape }) };
    },
    close: (id) => p.evaluate((id) => window.arrays[id].close(), id),
  };
}

test("in Chromium, another origin: warm arrays switched between reads, with ETag exposed, hidden, and a CDN's caching", async () => {
  const { p, errors } = await page();
  try {
    for (const c of cases) {
      for (const to of Object.keys(c.versions).filter((v) => v !== "a")) {
        const read = inPage(p, c);
        // `get` takes the array's shape from the page's result.
        const wrapped = {
          ...read,
          open: async (url, options) => {
            const id = await read.open(url, options);
            const shape = await p.evaluate((id) => window.arrays[id].shape, id);
            return { id, shape };
          },
          get: (a, sel) => read.get(a.id, sel),
          close: (a) => read.close(a.id),
        };
        for (const mode of ["", "hide-etag", "cacheable"]) await warmSwitch(c, to, "open", server.url, wrapped, mode);
        await warmSwitch(c, to, 200, server.url, wrapped, "hide-etag");
      }
    }
    assert.deepEqual(errors, []);
  } finally {
    await p.close();
  }
});

test("in Chromium: what the conditional reads cost in preflights (If-Match and If-Range are not CORS-safelisted)", async () => {
  const c = cases.find((x) => x.name === "zarr3_sharded");
  const counts = {};
  for (const conditional of [false, "if-match", "if-range"]) {
    // A fresh context each: no preflight cached from another run.
    const { p } = await page();
    try {
      server.setVersion(c.prefix, 0);
      const { url, options } = where(c, server.url);
      const from = server.log.length;
      await p.evaluate(
        async ([url, options]) => {
          const a = await window.api.openArray(url, options);
          await a.get(a.shape.map(() => null));
          for (const g of [[0, 0], [1, 1], [2, 2], [3, 3]]) await a.getChunk(g);
          a.close();
        },
        [url, { ...options, conditional }],
      );
      const log = server.log.slice(from);
      counts[String(conditional)] = { requests: log.length, preflights: log.filter((e) => e.method === "OPTIONS").length };
    } finally {
      await p.close();
    }
  }
  console.log(`# preflights: ${JSON.stringify(counts)}`);
  // The reads themselves are the same; the condition's header is not safelisted, so each object
  // read by range under it costs one preflight (cached per URL), and none without: the figures
  // the README gives (9 requests; 13, of which 4 preflights, with either).
  assert.deepEqual(counts.false, { requests: 9, preflights: 0 });
  for (const how of ["if-match", "if-range"]) {
    assert.equal(counts[how].requests - counts[how].preflights, counts.false.requests, how);
    assert.equal(counts[how].preflights, 4, how);
  }
});

test("in Chromium, decoding workers: a region read while its object changes, at every request, is of one version per object, for every store kind", async () => {
  const { p, errors } = await page();
  try {
    for (const name of cases.map((c) => c.name)) {
      const c = cases.find((x) => x.name === name);
      const { url, options } = where(c, server.url);
      // One request per chunk or two (neighbours apart), chunks decoded in two workers.
      const o = { ...options, workers: 2, mergeMax: 300, mergeGap: 0 };
      server.setVersion(c.prefix, 0);
      const from = server.log.length;
      // The two kinds read with the workers for certain (zstd chunks, a deflate TIFF); the others
      // as they come (a kind whose chunks are small or uncompressed, NetCDF-3's, is decoded on the
      // page's thread), each at every request all the same.
      const decoded = ["zarr3_sharded", "tiff"].includes(name);
      const warm = await p.evaluate(async ([url, o, tries]) => {
        const a = await window.api.openArray(url, o);
        // The workers start after a first read, and take a moment to be ready.
        for (let k = 0; k < tries && a.stats().workerJobs === 0; k++) {
          await a.get(a.shape.map(() => null));
          await new Promise((r) => setTimeout(r, 100));
        }
        const id = window.arrays.push(a) - 1;
        return { id, jobs: a.stats().workerJobs };
      }, [url, o, decoded ? 50 : 1]);
      if (decoded) assert.ok(warm.jobs > 0, `${name}: the workers decoded nothing`);
      const total = asked(c, from);
      let newer = 0;
      let askedAfter = 0;
      for (let at = 0; at < total; at++) {
        server.setVersion(c.prefix, 0);
        const a = await p.evaluate(async ([url, o]) => {
          const a = await window.api.openArray(url, o);
          await a.get(a.shape.map(() => null));
          return window.arrays.push(a) - 1;
        }, [url, o]);
        server.switchAt(c.prefix, 1, at);
        const before = server.log.length;
        const got = await inPage(p, c).get(a, c.versions.a.shape.map(() => null));
        askedAfter += server.log.length - before;
        if (got.error) assert.equal(got.error.code, "Changed", `${name} at ${at}: ${got.error.message}`);
        else if (!got.versions.every((v) => v === "a")) newer++;
        await p.evaluate((id) => window.arrays[id].close(), a);
      }
      // As in Node: an Icechunk array reads the snapshot its branch was resolved to at open; a
      // kind whose second read is served from what its first kept (a small zip read whole)
      // asks nothing and so sees no change.
      const to = Object.keys(c.versions)[1];
      if (c.pinned) assert.equal(newer, 0, `${name}: a snapshot resolved at open is the one read`);
      else if (!c.versions[to].metadataChanged && askedAfter > 0) assert.ok(newer > 0, `${name}: the new version was never read`);
    }
    assert.deepEqual(errors, []);
  } finally {
    await p.close();
  }
  server.setVersion(cases[0].prefix, 0);
});
