// Real storage servers (issue 15): every fixture read through nginx (Debian's package, a stock
// static config plus the CORS headers a user adds), started by the test itself; the requests
// it saw are logged. Node reads every fixture; headless Chromium reads one cross-origin (CORS,
// preflights and all).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { freePort, startServer } from "../server.mjs";
import { checkFixtures, loadManifests } from "./check-fixtures.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const fixturesDir = path.join(root, "tests/fixtures");
const tmp = path.join(root, "tests/.tmp/nginx");
const NGINX = process.env.NGINX_PATH ?? "/usr/sbin/nginx";
const api = await import(pathToFileURL(path.join(root, "pkg/index.js")).href);
const manifest = await loadManifests(async (rel) => JSON.parse(fs.readFileSync(path.join(fixturesDir, rel), "utf8")));
const loadExpected = async (rel) => new Uint8Array(fs.readFileSync(path.join(fixturesDir, rel)));

/** A stock static site, plus what a user adds for a viewer on another origin. */
function nginxConf(port) {
  // As root, nginx's workers would switch to `nobody`, who may not traverse this checkout.
  const user = process.getuid?.() === 0 ? "user root;" : "";
  return `
${user}
worker_processes 1;
daemon off;
pid ${tmp}/nginx.pid;
error_log ${tmp}/error.log warn;
events { worker_connections 256; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  # The combined format, plus which connection served each request (keep-alive).
  log_format withconn '$remote_addr - - [$time_local] "$request" $status $body_bytes_sent conn=$connection n=$connection_requests';
  access_log ${tmp}/access.log withconn;
  client_body_temp_path ${tmp}/body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
  sendfile on;
  keepalive_timeout 65;
  server {
    listen 127.0.0.1:${port};
    root ${fixturesDir};
    location / {
      # CORS for a viewer on another origin: Range is not a safelisted header for suffix
      # ranges, and the reader needs Content-Range and Content-Length.
      add_header Access-Control-Allow-Origin "*" always;
      add_header Access-Control-Expose-Headers "Content-Range, Content-Length, ETag" always;
      if ($request_method = OPTIONS) {
        add_header Access-Control-Allow-Origin "*";
        add_header Access-Control-Allow-Methods "GET, HEAD, OPTIONS";
        add_header Access-Control-Allow-Headers "Range";
        add_header Access-Control-Max-Age 86400;
        return 204;
      }
    }
  }
}
`;
}

let nginx;
let base;
let browser;

before(async () => {
  assert.ok(fs.existsSync(NGINX), `${NGINX} (Debian's nginx; scripts/ensure-tools.sh installs it)`);
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const port = await freePort();
  fs.writeFileSync(path.join(tmp, "nginx.conf"), nginxConf(port));
  nginx = spawn(NGINX, ["-c", path.join(tmp, "nginx.conf"), "-p", tmp], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  nginx.stderr.on("data", (d) => (stderr += d));
  base = `http://127.0.0.1:${port}`;
  for (let k = 0; ; k++) {
    try {
      const r = await fetch(`${base}/manifests.json`);
      if (r.ok) break;
    } catch {}
    if (k > 100 || nginx.exitCode !== null) throw new Error(`nginx did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
});

after(async () => {
  await browser?.close();
  nginx?.kill();
});

/** The access log's lines since `from` once there are `n` of them: checked at each change of the
 * file (nginx appends a request's line once its answer is sent, maybe after the reader has it),
 * failing after `ms`. */
function logLines(from, n, ms) {
  const file = path.join(tmp, "access.log");
  return new Promise((resolve, reject) => {
    let watcher = null;
    const timer = setTimeout(() => {
      watcher?.close();
      reject(new Error(`nginx logged ${accessLog(from).length} of ${n} requests after ${ms} ms`));
    }, ms);
    const check = () => {
      const lines = accessLog(from);
      if (lines.length < n) return false;
      watcher?.close();
      clearTimeout(timer);
      resolve(lines);
      return true;
    };
    if (!check()) watcher = fs.watch(file, check);
    check(); // (a line written between the first check and the watch)
  });
}

/** The access log's lines since `from` (bytes), as "METHOD path status range". */
function accessLog(from = 0) {
  const text = fs.readFileSync(path.join(tmp, "access.log"), "utf8").slice(from);
  return text.split("\n").filter(Boolean);
}

test("nginx: every fixture reads like its writer wrote it (Node)", async () => {
  const r = await checkFixtures(api, `${base}/data`, manifest, loadExpected, {});
  assert.ok(manifest.cases.length > 0);
  assert.equal(r.count, manifest.cases.length + manifest.groups.length, "every case and group checked");
  assert.equal(r.failed, 0, r.failures.join("\n"));
  const lines = accessLog();
  const methods = {};
  const statuses = {};
  for (const l of lines) {
    const m = /"(\w+) [^"]*" (\d{3})/.exec(l);
    if (!m) continue;
    methods[m[1]] = (methods[m[1]] ?? 0) + 1;
    statuses[m[2]] = (statuses[m[2]] ?? 0) + 1;
  }
  const connections = new Set(lines.map((l) => /conn=(\d+)/.exec(l)?.[1]).filter(Boolean));
  const most = Math.max(...lines.map((l) => Number(/ n=(\d+)/.exec(l)?.[1] ?? 0)));
  console.log(`# nginx saw ${lines.length} requests on ${connections.size} connections (up to ${most} on one): ${JSON.stringify(methods)}, statuses ${JSON.stringify(statuses)}`);
  assert.ok(statuses["206"] > 0, "nginx answered ranges");
  // HTTP/1.1 keep-alive: connections are reused, not one per request.
  assert.ok(connections.size * 4 < lines.length && most > 10, `${lines.length} requests on ${connections.size} connections`);
});

test("nginx: If-Range with its ETag gives the range; a stale one gives the whole object", async () => {
  const url = `${base}/data/zp/shard_gzip_end/c/0/0`;
  const head = await fetch(url, { method: "HEAD" });
  const etag = head.headers.get("etag");
  assert.ok(etag, "nginx sends an ETag");
  const fresh = await fetch(url, { headers: { Range: "bytes=0-9", "If-Range": etag } });
  assert.equal(fresh.status, 206);
  await fresh.arrayBuffer();
  const stale = await fetch(url, { headers: { Range: "bytes=0-9", "If-Range": '"0-0"' } });
  assert.equal(stale.status, 200, "a changed object is sent whole: a reader must not take it for the range");
  await stale.arrayBuffer();
  // The library reads a sharded array through nginx with 2 requests cold (suffix index, chunk).
  const arr = await api.openArray(`${base}/data/zp/shard_gzip_end`);
  const from = fs.statSync(path.join(tmp, "access.log")).size;
  await arr.getChunk([0, 0]);
  // nginx writes a request's log line once its answer is sent, maybe after the reader has it:
  // wait for the two lines (the chunk's own), then check that they are all there is.
  const lines = await logLines(from, 2, 10_000);
  assert.equal(lines.length, 2, lines.join("\n"));
  assert.ok(lines.every((l) => l.includes("/data/zp/shard_gzip_end/c/0/0") && / 206 /.test(l)), lines.join("\n"));
  arr.close();
});

test("nginx: a page on another origin reads a sharded array (CORS, suffix-range preflight)", async () => {
  const page = await startServer({ root: { "/pkg": path.join(root, "pkg") } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  const tab = await browser.newPage();
  try {
    await tab.goto(`${page.url}/pkg/package.json`);
    const c = manifest.cases.find((k) => k.name === "zp_shard_gzip_end");
    const expected = fs.readFileSync(path.join(fixturesDir, c.expected));
    const got = await tab.evaluate(
      async ({ pkg, url }) => {
        const { openArray } = await import(pkg);
        const arr = await openArray(url);
        const r = await arr.get(arr.shape.map(() => null));
        // One chunk of a fresh array: its shard's index is read by a suffix range (preflighted).
        await (await openArray(url)).getChunk([0, 0]);
        return Array.from(new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength));
      },
      { pkg: `${page.url}/pkg/index.js`, url: `${base}/data/${c.path}` },
    );
    assert.deepEqual(Uint8Array.from(got), new Uint8Array(expected));
    const preflights = accessLog().filter((l) => l.includes('"OPTIONS '));
    console.log(`# nginx: the page's reads made ${preflights.length} CORS preflight(s)`);
    assert.ok(preflights.length >= 1, "the suffix range was preflighted, and nginx answered it");
  } finally {
    await tab.close();
    await page.close();
  }
});
