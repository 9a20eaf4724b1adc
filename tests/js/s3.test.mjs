// An S3 API server (issue 15): moto in server mode (tests/s3/requirements.txt, in the venv
// scripts/ensure-tools.sh makes), started by the test; a private bucket filled with boto3
// (tests/s3/setup_bucket.py). Every fixture is read through per-object presigned URLs made in
// the `fetch` option — each request signed for its own method and object, as S3 requires;
// the requests the server saw are logged.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
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

let moto;
let base;
const seen = [];

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
  moto.stderr.on("data", (d) => (stderr += d));
  base = `http://127.0.0.1:${port}`;
  for (let k = 0; ; k++) {
    try {
      if ((await fetch(`${base}/`)).status < 500) break;
    } catch {}
    if (k > 200 || moto.exitCode !== null) throw new Error(`moto did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await promisify(execFile)(path.join(bin, "python"), [path.join(root, "tests/s3/setup_bucket.py"), base]);
});

after(() => {
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
  const r = await checkFixtures(api, `${base}/fixtures`, manifest, loadExpected, { open: { fetch: signingFetch } });
  assert.ok(r.count >= manifest.cases.length, `${r.count} cases ran`);
  assert.equal(r.failed, 0, r.failures.join("\n"));
  const by = {};
  for (const s of seen) {
    const kind = `${s.method}${s.range ? (s.range.startsWith("bytes=-") ? " suffix" : " range") : ""}`;
    by[kind] = (by[kind] ?? 0) + 1;
  }
  console.log(`# S3 (moto) saw ${seen.length} presigned requests: ${JSON.stringify(by)}`);
  assert.ok(seen.every((s) => new URL(s.url).searchParams.has("Signature")), "every request signed");
  assert.ok(by["GET suffix"] > 0 && by["GET range"] > 0, "shard indexes by suffix, chunks by range");
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
  const arr = await api.openArray(`${base}/fixtures/zp/shard_gzip_end`, { fetch: signingFetch });
  const c = await arr.getChunk([0, 0]);
  assert.equal(c.data.length, arr.chunkShape.reduce((a, b) => a * b, 1));
  arr.close();
});
