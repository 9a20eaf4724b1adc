// An S3 API server (issue 15): moto in server mode (tests/s3/requirements.txt, in the venv
// scripts/ensure-tools.sh makes), started by the test; a private bucket filled with boto3
// (tests/s3/setup_bucket.py). Every fixture is read through per-object presigned URLs made in
// the `fetch` option — each request signed for its own method and object, as S3 requires,
// and checked so by a proxy in front of moto (which checks no signature itself), which also
// plays a bucket without list permission (403 for a missing key) and a server refusing suffix
// ranges (the HEAD fallback). The requests the proxy and moto saw are logged.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import http from "node:http";
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";
import { freePort } from "../server.mjs";
import { checkFixtures, loadManifests } from "./check-fixtures.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const fixturesDir = path.join(root, "tests/fixtures");
const venv = process.env.S3_VENV ?? path.join(root, "tests/.tmp/venv-s3");
const api = await import(pathToFileURL(path.join(root, "pkg/index.js")).href);
const manifest = await loadManifests(async (rel) => JSON.parse(fs.readFileSync(path.join(fixturesDir, rel), "utf8")));
const loadExpected = async (rel) => new Uint8Array(fs.readFileSync(path.join(fixturesDir, rel)));
const KEY = "test";
const SECRET = "test";

/**
 * A presigned URL (S3 query-string authentication) of `url` for `method`: what a backend
 * hands a viewer, object by object. The signature covers the method and the object, so a
 * URL signed for GET does not serve a HEAD, nor another object.
 */
function presign(url, method) {
  const u = new URL(url);
  const expires = Math.floor(Date.now() / 1000) + 600;
  const toSign = `${method}\n\n\n${expires}\n${decodeURIComponent(u.pathname)}`;
  const signature = crypto.createHmac("sha1", SECRET).update(toSign).digest("base64");
  u.search = new URLSearchParams({ AWSAccessKeyId: KEY, Expires: String(expires), Signature: signature }).toString();
  return u.href;
}

/** Whether `url`'s query string signs `method` on its object, unexpired (what S3 checks). */
function signedFor(url, method) {
  const u = new URL(url, "http://x");
  const q = u.searchParams;
  const expires = Number(q.get("Expires"));
  if (q.get("AWSAccessKeyId") !== KEY || !(expires * 1000 > Date.now())) return false;
  const toSign = `${method}\n\n\n${expires}\n${decodeURIComponent(u.pathname)}`;
  return crypto.createHmac("sha1", SECRET).update(toSign).digest("base64") === q.get("Signature");
}

let moto;
let motoLog = "";
let base;
let proxy;
const seen = [];

/**
 * In front of moto, what moto leaves out of S3: every request's signature checked against its
 * own method and object (moto checks none: 403 SignatureDoesNotMatch otherwise), and two
 * buckets' behaviours under path prefixes — `/no-list/` answers 403 AccessDenied for a missing
 * key (S3 without s3:ListBucket), `/no-suffix/` refuses suffix ranges (416, as some S3-like
 * servers do), so that the HEAD + range fallback is signed too.
 */
async function startProxy(target) {
  const log = [];
  const server = http.createServer((req, res) => {
    let url = req.url;
    const mode = /^\/(no-list|no-suffix)\//.exec(url)?.[1];
    if (mode) url = url.slice(mode.length + 1);
    const ok = signedFor(req.url, req.method);
    const range = req.headers.range;
    log.push({ method: req.method, path: new URL(url, "http://x").pathname, range, ok, mode });
    if (!ok) {
      res.writeHead(403, { "Content-Type": "application/xml" }).end("<Error><Code>SignatureDoesNotMatch</Code></Error>");
      return;
    }
    if (mode === "no-suffix" && range?.startsWith("bytes=-")) {
      res.writeHead(416).end();
      return;
    }
    const up = http.request(`${target}${url}`, { method: req.method, headers: { ...(range ? { range } : {}) } }, (r) => {
      if (mode === "no-list" && r.statusCode === 404) {
        r.resume();
        res.writeHead(403, { "Content-Type": "application/xml" }).end("<Error><Code>AccessDenied</Code></Error>");
        return;
      }
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on("error", () => res.destroy());
    up.end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, log, close: () => new Promise((r) => server.close(r)) };
}

/** The `fetch` option of a viewer whose objects are private: every request presigned. */
const signingFetch = (input, init = {}) => {
  const method = (init.method ?? "GET").toUpperCase();
  const signed = presign(String(input), method);
  seen.push({ method, url: signed, range: new Headers(init.headers).get("range") });
  return fetch(signed, init);
};

before(async () => {
  const bin = path.join(venv, "bin");
  assert.ok(fs.existsSync(path.join(bin, "moto_server")), `${venv}: moto (scripts/ensure-tools.sh makes this venv)`);
  const port = await freePort();
  moto = spawn(path.join(bin, "moto_server"), ["-H", "127.0.0.1", "-p", String(port)], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  moto.stderr.on("data", (d) => {
    stderr += d;
    motoLog += d;
  });
  base = `http://127.0.0.1:${port}`;
  for (let k = 0; ; k++) {
    try {
      if ((await fetch(`${base}/`)).status < 500) break;
    } catch {}
    if (k > 200 || moto.exitCode !== null) throw new Error(`moto did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await promisify(execFile)(path.join(bin, "python"), [path.join(root, "tests/s3/setup_bucket.py"), base]);
  proxy = await startProxy(base);
});

after(async () => {
  // What moto itself saw (its request log), by method and status.
  const lines = motoLog.split("\n").map((l) => /"(GET|HEAD|PUT|POST|OPTIONS) [^"]*" (\d{3})/.exec(l)).filter(Boolean);
  const by = {};
  for (const m of lines) by[`${m[1]} ${m[2]}`] = (by[`${m[1]} ${m[2]}`] ?? 0) + 1;
  console.log(`# moto's own log: ${lines.length} requests ${JSON.stringify(by)}`);
  await proxy?.close();
  moto?.kill();
});

test("S3 (moto): a private bucket refuses unsigned reads with a typed error naming the URL", async () => {
  await assert.rejects(api.openArray(`${base}/fixtures/zp/shard_gzip_end`), (e) => {
    assert.equal(e.code, "HttpError", e.message);
    assert.equal(e.status, 403);
    assert.ok(e.message.includes("/fixtures/zp/shard_gzip_end"), e.message);
    return true;
  });
});

test("S3 (moto): every fixture reads through presigned URLs made per request in the fetch option", async () => {
  seen.length = 0;
  proxy.log.length = 0;
  // Eight cases at a time: moto answers each request slowly.
  const r = await checkFixtures(api, `${proxy.url}/fixtures`, manifest, loadExpected, { open: { fetch: signingFetch }, concurrency: 8, chunksInFlight: 8 });
  assert.ok(manifest.cases.length > 0);
  assert.equal(r.count, manifest.cases.length + manifest.groups.length, "every case and group checked");
  assert.equal(r.failed, 0, r.failures.join("\n"));
  const by = {};
  for (const s of seen) {
    const kind = `${s.method}${s.range ? (s.range.startsWith("bytes=-") ? " suffix" : " range") : ""}`;
    by[kind] = (by[kind] ?? 0) + 1;
  }
  console.log(`# S3 (moto) saw ${seen.length} presigned requests: ${JSON.stringify(by)}`);
  assert.ok(seen.every((s) => new URL(s.url).searchParams.has("Signature")), "every request signed");
  assert.ok(by["GET suffix"] > 0 && by["GET range"] > 0, "shard indexes by suffix, chunks by range");
  const bad = proxy.log.filter((e) => !e.ok);
  assert.equal(bad.length, 0, `signatures that do not match their request: ${JSON.stringify(bad.slice(0, 3))}`);
  assert.equal(proxy.log.length, seen.length, "the server saw every request the fetch option sent");
});

test("S3: a signature made for another method or object is refused (the check above can fail)", async () => {
  const url = `${proxy.url}/fixtures/zp/shard_gzip_end/zarr.json`;
  assert.equal((await fetch(presign(url, "GET"))).status, 200);
  assert.equal((await fetch(presign(url, "GET"), { method: "HEAD" })).status, 403, "a GET signature for a HEAD");
  const other = presign(`${proxy.url}/fixtures/zp/dt_int8/zarr.json`, "GET");
  assert.equal((await fetch(`${url}?${new URL(other).searchParams}`)).status, 403, "another object's signature");
});

test("S3: the HEAD + range fallback (a server refusing suffix ranges) is signed per request too", async () => {
  proxy.log.length = 0;
  const c = manifest.cases.find((k) => k.name === "zp_shard_gzip_end");
  const r = await checkFixtures(api, `${proxy.url}/no-suffix/fixtures`, manifest, loadExpected, { cases: [c.name], groups: false, open: { fetch: signingFetch } });
  assert.equal(r.count, 1);
  assert.equal(r.failed, 0, r.failures.join("\n"));
  const heads = proxy.log.filter((e) => e.method === "HEAD");
  console.log(`# S3 no-suffix: ${proxy.log.length} requests, ${heads.length} HEAD`);
  assert.ok(heads.length > 0, "the fallback ran");
  assert.ok(proxy.log.every((e) => e.ok), "every request, HEAD included, signed for itself");
});

test("S3 without list permission: a missing key is 403 — an HttpError naming the URL, or with treat403AsMissing the fill value", async () => {
  const c = manifest.cases.find((k) => k.name === "zp_shard_gzip_end"); // shard c/0/1 was never written
  const arr = await api.openArray(`${proxy.url}/no-list/fixtures/${c.path}`, { fetch: signingFetch });
  const perShard = arr.shardShape.map((s, k) => s / arr.chunkShape[k]);
  const inMissing = [0, perShard[1]]; // the first inner chunk of shard (0, 1)
  await assert.rejects(arr.getChunk(inMissing), (e) => {
    assert.equal(e.code, "HttpError", e.message);
    assert.equal(e.status, 403);
    assert.ok(e.message.includes(`${c.path}/c/0/1`), e.message);
    return true;
  });
  arr.close();
  // One array per kind of absent object — each writer's suite, key encoding and what is
  // missing (a chunk, a shard, in nested shards) — not all 180 with one: 403-as-missing is the
  // store's, whatever the codecs (the test above reads every array through the same bucket).
  const kinds = new Map();
  for (const k of manifest.cases.filter((k) => k.features?.some((f) => f.startsWith("missing_")))) {
    const what = k.features.filter((f) => /^(missing_|key_|sharding$|nested_sharding$)/.test(f)).sort().join(",");
    if (!kinds.has(`${k.path.split("/")[0]}|${what}`)) kinds.set(`${k.path.split("/")[0]}|${what}`, k.name);
  }
  const r = await checkFixtures(api, `${proxy.url}/no-list/fixtures`, manifest, loadExpected, {
    cases: [...kinds.values()],
    groups: false,
    open: { fetch: signingFetch, treat403AsMissing: true },
    concurrency: 8,
  });
  console.log(`# S3 no-list: ${r.count} arrays, one of each kind of absent object`);
  assert.ok(kinds.size >= 20, `${kinds.size} kinds of arrays with missing chunks or shards`);
  assert.equal(r.count, kinds.size, "one array of each kind checked");
  assert.equal(r.failed, 0, r.failures.join("\n"));
});

test("S3 (moto): a suffix range longer than the object, and a range past its end", async () => {
  const url = `${base}/fixtures/zp/shard_gzip_end/zarr.json`;
  const size = fs.statSync(path.join(fixturesDir, "data/zp/shard_gzip_end/zarr.json")).size;
  const long = await fetch(presign(url, "GET"), { headers: { Range: `bytes=-${size + 1000}` } });
  const body = new Uint8Array(await long.arrayBuffer());
  console.log(`# S3 (moto): bytes=-${size + 1000} of a ${size}-byte object → ${long.status}, Content-Range ${long.headers.get("content-range")}, ${body.length} bytes`);
  assert.ok(long.status === 206 || long.status === 200);
  assert.equal(body.length, size, "the whole object, never more");
  const past = await fetch(presign(url, "GET"), { headers: { Range: `bytes=${size + 10}-${size + 20}` } });
  await past.arrayBuffer();
  assert.equal(past.status, 416);
  // The library opens and reads through it whatever the answer: a chunk of a sharded array.
  const arr = await api.openArray(`${proxy.url}/fixtures/zp/shard_gzip_end`, { fetch: signingFetch });
  const c = await arr.getChunk([0, 0]);
  assert.equal(c.data.length, arr.chunkShape.reduce((a, b) => a * b, 1));
  arr.close();
});
