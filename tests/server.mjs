#!/usr/bin/env node
// Dependency-free static file server for shardfetch's tests and demo.
//
//   node tests/server.mjs --root <dir> [--root /prefix=dir ...] [--port <p|0>] [--host 127.0.0.1]
//
// Prints exactly one line `LISTENING http://127.0.0.1:<port>` on stdout when ready.
//
// Features: GET/HEAD with single byte ranges (`bytes=a-b`, `bytes=a-`, `bytes=-n`), 206/416,
// CORS (incl. OPTIONS preflight), content types, an in-memory request log (`GET /__log`,
// `GET /__log?reset=1`, `POST /__log/reset`) and misbehaving-server modes selected by a path
// prefix `/__mode/<mode>[+<mode>...]/...` (prefixes may also be repeated):
//   ignore-range       always 200 with the full body, no Content-Range, no Accept-Ranges
//   no-suffix          416 (without Content-Range) for suffix ranges `bytes=-n`
//   no-suffix-400      400 for suffix ranges
//   no-content-range   206 answers without a Content-Range header
//   no-content-length  HEAD and GET answers without Content-Length (chunked transfer encoding)
//   forbid-missing     403 instead of 404 for missing files
//   always-500         every request answers 500
//   faults-<pct>       <pct> % of requests meet a transient fault, picked at random among: 503
//                      with Retry-After: 0, 500, a reset before the answer, a body cut short
//                      (connection closed mid-body), a 206 for other bytes than asked (honest
//                      Content-Range), a stall (headers and half the body, then nothing until the
//                      client gives up). One request (path + range) meets at most 3 faults in
//                      all and at most one wrong range, so a client retrying 5 times always
//                      gets through, whoever else asks the same; the fault log is in `GET /__log` (entry.fault).
//   silent             never answers (the connection stays open until the client gives up)
//   always-truncated   every GET body is cut short: half of it, then the connection closes
//   bad-content-range  206 answers whose body is shifted one byte on, with a Content-Range a
//                      client can see but not trust: malformed (`bytes a-b`, no total)
//   other-content-range  the same body, its Content-Range naming the bytes it holds (one on)
//   long-content-range   the bytes asked for plus one more, the Content-Range naming those asked
//   hide-etag          ETag sent but not exposed to cross-origin pages (a browser hides it, as it
//                      does on a bucket whose CORS rule lists no ExposeHeaders); Node sees it
//   no-validators      neither ETag nor Last-Modified
//   cacheable          `Cache-Control: public, max-age=3600` (a CDN's): a browser may answer from
//                      its cache without asking; `If-None-Match` is answered 304 when it matches
//
// Every answer for a file carries its version as S3 and GCS give it: `ETag` (the MD5 of its
// content, quoted), `Last-Modified` (its mtime; under a versioned prefix, an hour per version), and
// honours `If-Match` / `If-Unmodified-Since` (412) and `If-Range` (the whole object when it does
// not match). `versions: { "/prefix": [dirA, dirB, …] }` serves the files under a prefix from one
// of several folders — the same URLs, other versions — switched with `setVersion(prefix, i)` or,
// at a chosen request, `switchAt(prefix, i, n)` (the n-th request from now under that prefix,
// 0-based, is answered from version i: a file rewritten in place between two requests).
//
// A link can be simulated for every answer (`--latency-ms`, `--mbps`, or `link` in startServer):
// each answer (preflights too) waits one round trip before its headers, and all bodies share one
// link of that bandwidth, sent in 16 KiB pieces in turn.
//
// Also usable as a module: `const { url, close, log } = await startServer({ root, port })`, where
// root is a dir, a `/prefix=dir` spec, an array of those, or an object {"/prefix": dir}.

import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const MODES = new Set([
  "ignore-range",
  "no-suffix",
  "no-suffix-400",
  "no-content-range",
  "no-content-length",
  "forbid-missing",
  "always-500",
  "silent",
  "always-truncated",
  "bad-content-range",
  "other-content-range",
  "long-content-range",
  "hide-etag",
  "no-validators",
  "cacheable",
]);
const FAULTS = ["slow-down", "500", "reset", "truncated", "wrong-range", "stall"];
const isMode = (m) => MODES.has(m) || /^faults-\d+(\.\d+)?$/.test(m);

const CONTENT_TYPES = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".html": "text/html; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".ts": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

const CORS_HEADERS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": "Content-Range, Content-Length, Accept-Ranges, ETag",
};

const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  "Access-Control-Allow-Headers": "Range, Content-Type, If-Match, If-Range, If-Unmodified-Since, If-None-Match, *",
  "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
  "Access-Control-Max-Age": "600",
};

/** Normalise root specs into a list of {prefix, dir}, longest prefix first. */
export function parseRoots(root) {
  const specs = [];
  if (root == null) root = ".";
  if (typeof root === "string") root = [root];
  if (Array.isArray(root)) {
    for (const spec of root) {
      const eq = spec.indexOf("=");
      if (spec.startsWith("/") && eq > 0) specs.push([spec.slice(0, eq), spec.slice(eq + 1)]);
      else specs.push(["/", spec]);
    }
  } else {
    for (const [prefix, dir] of Object.entries(root)) specs.push([prefix, dir]);
  }
  const roots = specs.map(([prefix, dir]) => {
    let p = "/" + prefix.replace(/^\/+|\/+$/g, "");
    if (p !== "/") p += "/";
    return { prefix: p, dir: path.resolve(dir) };
  });
  roots.sort((a, b) => b.prefix.length - a.prefix.length);
  return roots;
}

/** Parse a Range header against a size. Returns null (ignore: serve all), {suffix:true,...},
 * {start, end} (inclusive), or {unsatisfiable: true}. Only single ranges are supported;
 * anything else is ignored as RFC 9110 allows. */
export function parseRange(header, size) {
  if (!header) return null;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m) return null;
  const [, a, b] = m;
  if (a === "" && b === "") return null;
  if (a === "") {
    const n = Number(b);
    if (n === 0 || size === 0) return { suffix: true, unsatisfiable: true };
    return { suffix: true, start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(a);
  let end = b === "" ? size - 1 : Number(b);
  if (b !== "" && end < start) return null; // syntactically invalid: ignore
  if (start >= size) return { suffix: false, unsatisfiable: true };
  if (end >= size) end = size - 1;
  return { suffix: false, start, end };
}

function contentType(file) {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream";
}

/** Split `/__mode/a+b/__mode/c/rest` into modes and the remaining path. */
function extractModes(pathname) {
  const modes = new Set();
  for (;;) {
    const m = /^\/__mode\/([^/]+)(\/.*)?$/.exec(pathname);
    if (!m) break;
    for (const mode of m[1].split(/[+,]/)) modes.add(mode);
    pathname = m[2] ?? "/";
  }
  return { modes, pathname };
}

/** Map a URL path to a file path, or null when outside every root. */
function resolveFile(roots, pathname) {
  for (const { prefix, dir } of roots) {
    let rest;
    if (prefix === "/") rest = pathname;
    else if (pathname.startsWith(prefix)) rest = pathname.slice(prefix.length - 1);
    else if (pathname + "/" === prefix) rest = "/";
    else continue;
    const file = path.resolve(dir, "." + path.posix.normalize("/" + rest));
    if (file !== dir && !file.startsWith(dir + path.sep)) return null;
    return file;
  }
  return null;
}

/** A shared link: one round trip per answer, bodies paced to `mbps` in 16 KiB pieces. */
function makeLink({ latencyMs = 0, mbps = 0 } = {}) {
  let free = 0; // when the link finishes what is queued (performance.now() ms)
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  return {
    active: latencyMs > 0 || mbps > 0,
    rtt: () => (latencyMs > 0 ? sleep(latencyMs) : null),
    /** Write `buf` to `res` at the link's pace; resolves when written (false: closed). */
    async write(res, buf, end = true) {
      const PIECE = 16 << 10;
      for (let at = 0; at < buf.length; at += PIECE) {
        const piece = buf.subarray(at, Math.min(buf.length, at + PIECE));
        if (mbps > 0) {
          const now = performance.now();
          free = Math.max(free, now) + (piece.length * 8) / (mbps * 1000);
          if (free - now > 1) await sleep(free - now);
        }
        if (res.destroyed) return false;
        res.write(piece);
      }
      if (end) res.end();
      return true;
    },
  };
}

/** A TCP port free on loopback now (for a server another program starts: nginx, moto). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

/** `"<md5>"` of a file's content, cached by path, size and mtime. */
const etags = new Map();
async function etagOf(file, st) {
  const key = `${file}\0${st.size}\0${st.mtimeMs}`;
  let tag = etags.get(key);
  if (tag === undefined) {
    const { createHash } = await import("node:crypto");
    tag = `"${createHash("md5").update(await fsp.readFile(file)).digest("hex")}"`;
    etags.set(key, tag);
  }
  return tag;
}

/**
 * The HTTP/2 server's certificate: self-signed for 127.0.0.1 and localhost, committed (a test
 * key, nothing to keep secret) so no tool is needed to make one. Browsers speak HTTP/2 only
 * over TLS; the tests' and the benchmark's Chromium are told to ignore certificate errors.
 */
function certificate() {
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), "tls");
  return { key: fs.readFileSync(path.join(dir, "localhost-key.pem")), cert: fs.readFileSync(path.join(dir, "localhost-cert.pem")) };
}

/**
 * `http2`: serve HTTP/2 over TLS (HTTP/1.1 too, by ALPN), with a self-signed certificate: the
 * URL is then `https://`.
 */
export async function startServer({ root = ".", port = 0, host = "127.0.0.1", quiet = true, link: linkSpec, versions = {}, http2: h2 = false, timingAllowOrigin = false } = {}) {
  // `timingAllowOrigin`: answers say `Timing-Allow-Origin: *`, so a page of another origin sees
  // their resource timing in full (their protocol among it), as a CDN configured for it does.
  const cors = timingAllowOrigin ? { ...CORS_HEADERS, "Timing-Allow-Origin": "*" } : CORS_HEADERS;
  // Versioned prefixes: each a root whose folder is the current version's.
  const versioned = Object.entries(versions).map(([prefix, dirs]) => {
    const r = parseRoots({ [prefix]: dirs[0] })[0];
    return { ...r, dirs: dirs.map((d) => path.resolve(d)), current: 0, pending: null };
  });
  const roots = [...versioned, ...parseRoots(root)].sort((a, b) => b.prefix.length - a.prefix.length);
  const versionOf = (prefix) => {
    const p = "/" + prefix.replace(/^\/+|\/+$/g, "") + "/";
    const v = versioned.find((r) => r.prefix === p);
    if (!v) throw new Error(`no versioned prefix ${prefix}`);
    return v;
  };
  const setVersion = (prefix, i) => {
    const v = versionOf(prefix);
    v.current = i;
    v.dir = v.dirs[i];
    v.pending = null;
  };
  const switchAt = (prefix, i, n) => {
    versionOf(prefix).pending = { version: i, left: n };
  };
  const log = [];
  const link = makeLink(linkSpec);
  // Faults per request (path + range): [how many in all, had a wrong range]. In all, not in a
  // row: another client's success for the same request must not give this one more faults
  // than its retries can take (concurrent opens of one Icechunk repository all read `repo`).
  const streaks = new Map();
  let seed = 0x2545f491;
  const random = () => {
    // xorshift32: reproducible fault sequences for a given request order.
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const pickFault = (rate, key, ranged) => {
    const [run, hadWrong] = streaks.get(key) ?? [0, false];
    if (run >= 3 || random() >= rate) return null;
    let f = FAULTS[Math.floor(random() * FAULTS.length)];
    if (f === "wrong-range" && (hadWrong || !ranged)) f = "500";
    streaks.set(key, [run + 1, hadWrong || f === "wrong-range"]);
    return f;
  };

  const listener = (req, res) => {
    handle(req, res).catch((err) => {
      if (!quiet) console.error(err);
      if (!res.headersSent) {
        res.writeHead(500, { ...cors, "Content-Type": "text/plain" });
        res.end("internal error\n");
      } else res.destroy();
    });
  };
  const server = h2 ? http2.createSecureServer({ ...certificate(), allowHTTP1: true }, listener) : http.createServer(listener);
  const sessions = new Set();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });

  async function handle(req, res) {
    const u = new URL(req.url, "http://localhost");
    const entry = {
      method: req.method,
      path: u.pathname,
      range: req.headers.range ?? null,
      status: 0,
      bytes: 0,
    };

    // --- control endpoints (not logged) ---
    if (u.pathname === "/__log" || u.pathname === "/__log/") {
      const body = JSON.stringify(log);
      if (u.searchParams.has("reset")) log.length = 0;
      res.writeHead(200, {
        ...cors,
        "Content-Type": "application/json",
        "Cache-Control": "no-store",
        "Content-Length": Buffer.byteLength(body),
      });
      res.end(req.method === "HEAD" ? undefined : body);
      return;
    }
    if (u.pathname === "/__log/reset") {
      log.length = 0;
      res.writeHead(204, { ...cors, "Cache-Control": "no-store" });
      res.end();
      return;
    }

    entry.t = performance.now();
    log.push(entry);
    // A client that gives up (an AbortSignal) closes the connection before the answer is out.
    res.on("close", () => {
      if (!res.writableFinished) entry.aborted = true;
    });
    const send = async (status, headers, body) => {
      entry.status = status;
      await link.rtt();
      const h = { ...cors, ...headers };
      res.writeHead(status, h);
      if (req.method === "HEAD" || body == null) {
        res.end();
      } else {
        entry.bytes = body.length;
        await link.write(res, body);
      }
    };
    const sendText = (status, text, extra = {}) =>
      send(status, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(text), ...extra }, Buffer.from(text));

    if (req.method === "OPTIONS") {
      entry.status = 204;
      await link.rtt();
      res.writeHead(204, PREFLIGHT_HEADERS);
      res.end();
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendText(405, "method not allowed\n", { Allow: "GET, HEAD, OPTIONS" });
      return;
    }

    let pathname;
    try {
      pathname = decodeURIComponent(u.pathname);
    } catch {
      sendText(400, "bad path\n");
      return;
    }
    if (pathname.includes("\0")) {
      sendText(400, "bad path\n");
      return;
    }
    const ex = extractModes(pathname);
    const modes = ex.modes;
    pathname = ex.pathname;
    for (const m of modes) {
      if (!isMode(m)) {
        sendText(400, `unknown mode ${m}\n`);
        return;
      }
    }
    if (modes.size) entry.modes = [...modes];
    if (modes.has("always-500")) {
      sendText(500, "internal server error (always-500 mode)\n");
      return;
    }
    if (modes.has("silent")) {
      entry.status = -1;
      return; // the socket stays open; the client's stall timeout or abort ends it
    }
    const faultMode = [...modes].find((m) => m.startsWith("faults-"));
    const fault = faultMode
      ? pickFault(Number(faultMode.slice(7)) / 100, `${pathname} ${req.headers.range ?? ""}`, !!req.headers.range)
      : modes.has("always-truncated")
        ? "truncated"
        : null;
    if (fault) entry.fault = fault;
    if (fault === "slow-down") {
      sendText(503, "SlowDown\n", { "Retry-After": "0" });
      return;
    }
    if (fault === "500") {
      sendText(500, "internal error\n");
      return;
    }
    if (fault === "reset") {
      req.socket.destroy();
      return;
    }

    const missing = () =>
      modes.has("forbid-missing") ? sendText(403, "forbidden\n") : sendText(404, "not found\n");

    // A versioned prefix switches before the request it was told to switch at.
    const under = versioned.find((r) => pathname.startsWith(r.prefix));
    if (under?.pending) {
      if (under.pending.left === 0) setVersion(under.prefix, under.pending.version);
      else under.pending.left -= 1;
    }
    if (under) entry.version = under.current;
    let file = resolveFile(roots, pathname);
    if (file == null) {
      missing();
      return;
    }
    let st;
    try {
      st = await fsp.stat(file);
      if (st.isDirectory()) {
        // No listings; serve index.html when there is one (for the demo pages).
        file = path.join(file, "index.html");
        st = await fsp.stat(file);
      }
      if (!st.isFile()) throw new Error("not a file");
    } catch {
      missing();
      return;
    }

    const size = st.size;
    const ignoreRange = modes.has("ignore-range");
    const noContentLength = modes.has("no-content-length");
    const headers = {
      "Content-Type": contentType(file),
      "Cache-Control": "no-cache",
    };
    if (!ignoreRange) headers["Accept-Ranges"] = "bytes";
    // The version, as S3 and GCS show it; and the conditions of RFC 9110.
    const etag = await etagOf(file, st);
    const modified = new Date(under ? Date.UTC(2026, 0, 1, under.current) : st.mtimeMs).toUTCString();
    if (!modes.has("no-validators")) {
      headers.ETag = etag;
      headers["Last-Modified"] = modified;
    }
    if (modes.has("hide-etag")) headers["Access-Control-Expose-Headers"] = "Content-Range, Content-Length, Accept-Ranges";
    const ifMatch = req.headers["if-match"];
    const ifUnmodified = req.headers["if-unmodified-since"];
    if ((ifMatch !== undefined && ifMatch !== etag) || (ifUnmodified !== undefined && ifUnmodified !== modified)) {
      entry.condition = "failed";
      sendText(412, "precondition failed\n", headers);
      return;
    }
    // A cached copy confirmed (a browser's `cache: "no-cache"` revalidation).
    const ifNoneMatch = req.headers["if-none-match"];
    if (ifNoneMatch !== undefined && ifNoneMatch.split(",").some((t) => t.trim().replace(/^W\//, "") === etag)) {
      entry.condition = "not-modified";
      entry.status = 304;
      await link.rtt();
      res.writeHead(304, { ...cors, ...headers });
      res.end();
      return;
    }
    if (modes.has("cacheable")) headers["Cache-Control"] = "public, max-age=3600";
    const ifRange = req.headers["if-range"];
    const rangeHeader = ifRange !== undefined && ifRange !== etag && ifRange !== modified ? undefined : req.headers.range;
    if (ifRange !== undefined) entry.condition = rangeHeader === undefined ? "whole" : "range";

    let range = ignoreRange ? null : parseRange(rangeHeader, size);
    if (range?.suffix && modes.has("no-suffix-400")) {
      sendText(400, "suffix ranges not supported\n");
      return;
    }
    if (range?.suffix && modes.has("no-suffix")) {
      // Misbehaving: claim the suffix range cannot be satisfied, without telling the size.
      sendText(416, "range not satisfiable\n");
      return;
    }
    if (range?.unsatisfiable) {
      sendText(416, "range not satisfiable\n", { "Content-Range": `bytes */${size}` });
      return;
    }

    let status = 200;
    let start = 0;
    let end = size - 1;
    if (range) {
      status = 206;
      start = range.start;
      end = range.end;
      if (!modes.has("no-content-range")) headers["Content-Range"] = `bytes ${start}-${end}/${size}`;
    }

    if (status === 206 && end + 1 < size) {
      // Misbehaving ranges: the body one byte on (or longer), the header not to be believed.
      if (modes.has("bad-content-range")) {
        start += 1;
        end += 1;
        headers["Content-Range"] = `bytes ${start - 1}-${end - 1}`;
      } else if (modes.has("other-content-range")) {
        start += 1;
        end += 1;
        headers["Content-Range"] = `bytes ${start}-${end}/${size}`;
      } else if (modes.has("long-content-range")) {
        end += 1;
        headers["Content-Range"] = `bytes ${start}-${end - 1}/${size}`;
      }
    }
    const length = end - start + 1;
    if (fault === "wrong-range" && status === 206 && end + 1 < size) {
      // Other bytes than asked, with a Content-Range saying which.
      start += 1;
      end += 1;
      if (headers["Content-Range"]) headers["Content-Range"] = `bytes ${start}-${end}/${size}`;
    }
    entry.status = status;
    await link.rtt();
    if (noContentLength) {
      // Chunked transfer encoding, no Content-Length, for HEAD as well.
      res.removeHeader("Content-Length");
      res.writeHead(status, { ...cors, ...headers, ...(h2 ? {} : { "Transfer-Encoding": "chunked" }) });
      if (req.method === "HEAD" || length <= 0) {
        res.end();
        return;
      }
    } else {
      res.writeHead(status, { ...cors, ...headers, "Content-Length": String(Math.max(0, length)) });
      if (req.method === "HEAD" || length <= 0) {
        res.end();
        return;
      }
    }
    const fh = await fsp.open(file, "r");
    try {
      const buf = Buffer.alloc(length);
      let off = 0;
      while (off < length) {
        const { bytesRead } = await fh.read(buf, off, length - off, start + off);
        if (bytesRead === 0) break;
        off += bytesRead;
      }
      entry.bytes = off;
      const body = off === length ? buf : buf.subarray(0, off);
      if ((fault === "truncated" || fault === "stall") && body.length > 1 && req.method === "GET") {
        // Half the body, then a closed connection (truncated) or nothing more (stall).
        await link.write(res, body.subarray(0, body.length >> 1), false);
        entry.bytes = body.length >> 1;
        if (fault === "truncated") res.socket?.destroy();
        return;
      }
      await link.write(res, body);
    } finally {
      await fh.close();
    }
  }

  server.keepAliveTimeout = 5000;
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address();
  const url = `${h2 ? "https" : "http"}://${host}:${addr.port}`;
  const close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections?.();
      for (const s of sessions) s.destroy();
    });
  return { url, port: addr.port, close, log, roots, server, setVersion, switchAt };
}

function parseArgs(argv) {
  const opts = { root: [], port: 0, host: "127.0.0.1", quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`missing value for ${a}`);
      return argv[++i];
    };
    if (a === "--root") opts.root.push(next());
    else if (a.startsWith("--root=")) opts.root.push(a.slice(7));
    else if (a === "--port") opts.port = Number(next());
    else if (a.startsWith("--port=")) opts.port = Number(a.slice(7));
    else if (a === "--host") opts.host = next();
    else if (a === "--latency-ms") (opts.link ??= {}).latencyMs = Number(next());
    else if (a === "--mbps") (opts.link ??= {}).mbps = Number(next());
    else if (a === "-h" || a === "--help") {
      console.log("usage: node tests/server.mjs --root <dir|/prefix=dir> [--root ...] [--port <p|0>] [--host 127.0.0.1] [--latency-ms N] [--mbps N]");
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (opts.root.length === 0) opts.root.push(".");
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) throw new Error("bad --port");
  return opts;
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href;
if (isMain) {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(String(e.message ?? e));
    process.exit(2);
  }
  const { url, close } = await startServer(opts);
  process.stdout.write(`LISTENING ${url}\n`);
  const stop = () => close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
