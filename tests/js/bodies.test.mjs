// Every answer the library does not read to its end is cancelled at once, never left on the
// wire (issue 43). Node's fetch — its bundled undici, before undici 8 — ends the process with an
// uncatchable `AssertionError: assert(!this.paused)` (undici#5360) when a server closes the
// connection (`Connection: close`) while an answer of more than 64 KiB sits unread under
// backpressure: Node 22 and 24 crash, Node 20's undici does not assert. Each case below runs in
// a child process of its own (a fresh one: the module not yet loaded, as a first `open` finds
// it) against a server in this file that writes every answer whole and closes at once; the
// child's `fetch` option records what became of each answer's body (read to its end,
// cancelled, failed — never left unread or half read), and a crash fails the case with its
// name. Cases: an answer that must wait for the module to load (the open's early request: a
// big zarr.json, a TIFF's first 64 KiB), an early request the open does not take (aborted),
// a Content-Length over the limit, a partial answer longer than asked (with and without a
// length), a whole object answered to a range (over the limit, and within it: then used), an
// error status (500, 404), a HEAD (answered with a body by a fetch that sends GET), a stall
// before the answer and one inside the body, an aborted read — each through the global fetch
// and through a custom `fetch` that does not pass the abort signal on (so that only
// cancelling the body, not aborting the request, keeps it off the wire).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const CHILD = "SHARDFETCH_BODIES_CASE";

// --- what the server holds ---------------------------------------------------------------------

/** Bytes of an answer the library is made to leave: above undici's 64 KiB, within the socket buffers. */
const BIG = 100_000;
const N = 50_000; // uint16 values of the array: one shard of two inner chunks of 25,000
const INNER = 25_000;
const value = (i) => (i * 7 + 3) & 0xffff;
const arrayMeta = JSON.stringify({
  zarr_format: 3,
  node_type: "array",
  shape: [N],
  data_type: "uint16",
  chunk_grid: { name: "regular", configuration: { chunk_shape: [N] } },
  chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
  fill_value: 0,
  codecs: [
    {
      name: "sharding_indexed",
      configuration: {
        chunk_shape: [INNER],
        codecs: [{ name: "bytes", configuration: { endian: "little" } }],
        index_codecs: [{ name: "bytes", configuration: { endian: "little" } }],
        index_location: "end",
      },
    },
  ],
  attributes: {},
});
/** The shard: two inner chunks of 50,000 bytes, then the index (offset, length of each). */
const shard = (() => {
  const data = Buffer.alloc(N * 2 + 32);
  for (let i = 0; i < N; i++) data.writeUInt16LE(value(i), i * 2);
  [0, INNER * 2, INNER * 2, INNER * 2].forEach((v, k) => data.writeBigUInt64LE(BigInt(v), N * 2 + k * 8));
  return data;
})();
/** A group whose zarr.json is larger than undici's 64 KiB (a big attribute, consolidated metadata). */
const PAD = "x".repeat(BIG);
const groupMeta = JSON.stringify({ zarr_format: 3, node_type: "group", attributes: { pad: PAD } });
const TIFF = "tests/fixtures/data/tiff/tf_ome_pyramid.ome.tif"; // 441 KiB: its first read asks 64 KiB
const filler = Buffer.alloc(BIG, 0x61);

/**
 * How the server answers one request (`sock` closed after each answer): `behaviour` names the
 * case's deviation, which applies to the shard (the array cases) or the first document.
 */
function answer(sock, req, behaviour) {
  const write = async (status, headers, body, { headersAfter = 0, bodyAfter = 0, length = true } = {}) => {
    await sleep(headersAfter);
    const h = { ...headers, Connection: "close" };
    if (length && body !== null) h["Content-Length"] = String(body.length);
    const text = Object.entries(h).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    sock.write(`HTTP/1.1 ${status} ${STATUS[status]}\r\n${text}\r\n`);
    await sleep(bodyAfter);
    if (body !== null && req.method !== "HEAD") sock.write(body);
    sock.end();
  };
  const json = (s) => write(200, { "Content-Type": "application/json" }, Buffer.from(s));
  const ranged = (bytes, range) => {
    const m = /^bytes=(\d*)-(\d*)$/.exec(range ?? "");
    if (!m) return write(200, {}, bytes);
    const [a, b] = m[1] === "" ? [bytes.length - Number(m[2]), bytes.length - 1] : [Number(m[1]), Math.min(Number(m[2] || bytes.length - 1), bytes.length - 1)];
    return write(206, { "Content-Range": `bytes ${a}-${b}/${bytes.length}` }, bytes.subarray(a, b + 1));
  };
  const { path: p, range } = req;
  if (p === "/g/zarr.json") {
    if (behaviour === "over-limit") return write(200, { "Content-Type": "application/json" }, Buffer.from(groupMeta));
    if (behaviour === "early-aborted") return write(200, { "Content-Type": "application/json" }, Buffer.from(groupMeta), { headersAfter: 150 });
    return json(groupMeta);
  }
  if (p === "/t/image.ome.tif") return ranged(fs.readFileSync(path.join(root, TIFF)), range);
  if (p === "/a/zarr.json") return json(arrayMeta);
  if (p !== "/a/c/0") return write(404, {}, Buffer.from("not found"));
  const suffix = range?.startsWith("bytes=-");
  if (suffix) {
    // The shard index: the case's deviation.
    switch (behaviour) {
      case "partial-longer":
        return write(206, { "Content-Range": `bytes ${shard.length - 32}-${shard.length - 1}/${shard.length}` }, filler);
      case "partial-longer-no-length":
        return write(206, { "Content-Range": `bytes ${shard.length - 32}-${shard.length - 1}/${shard.length}` }, filler, { length: false });
      case "whole-over-limit":
      case "whole-within-limit":
        return write(200, {}, shard);
      case "status-500":
        return write(500, { "Content-Type": "text/html" }, filler);
      case "status-404":
        return write(404, { "Content-Type": "text/html" }, filler);
      case "head":
        return write(416, { "Content-Range": `bytes */${shard.length}` }, Buffer.alloc(0));
      case "stall-headers":
        return write(200, {}, shard, { headersAfter: 900 });
      case "stall-body":
        return write(200, {}, shard, { bodyAfter: 900 });
      case "aborted-read":
        return write(200, {}, shard, { bodyAfter: 400 });
    }
  }
  return ranged(shard, range);
}

const STATUS = { 200: "OK", 206: "Partial Content", 404: "Not Found", 416: "Range Not Satisfiable", 500: "Internal Server Error" };
const sleep = (ms) => new Promise((r) => (ms > 0 ? setTimeout(r, ms) : r()));

/** A server of `behaviour`: each connection one request, answered whole, then closed. */
async function startServer(behaviour) {
  const sockets = new Set();
  /** Per connection: its answer written whole and the connection ended (or it closed first). */
  const ended = [];
  const seen = [];
  const server = net.createServer((sock) => {
    sockets.add(sock);
    ended.push(new Promise((r) => sock.once("finish", r).once("close", r)));
    sock.on("close", () => sockets.delete(sock));
    sock.on("error", () => {}); // a client that cancels resets the connection
    let head = "";
    sock.on("data", function onData(d) {
      head += d.toString("latin1");
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      sock.off("data", onData);
      const [line, ...lines] = head.slice(0, end).split("\r\n");
      const [method, target] = line.split(" ");
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      const req = { method, path: target.split("?")[0], range: headers.range };
      seen.push(`${method} ${req.path}${req.range ? ` ${req.range}` : ""}`);
      answer(sock, req, behaviour).catch(() => sock.destroy());
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    seen,
    /**
     * Every answer written and its connection ended by the server (the FIN on its way: what
     * the crash waits for), or `ms` passed; then `grace` ms more for the client to take it.
     */
    async settled(ms, grace) {
      let timer;
      await Promise.race([Promise.all(ended), new Promise((r) => (timer = setTimeout(r, ms)))]);
      clearTimeout(timer);
      await sleep(grace);
    },
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

// --- the fetch options -------------------------------------------------------------------------

/**
 * `inner`, recording what becomes of each answer's body: "read" (to its end), "cancelled",
 * "failed" (the stream errored: the request aborted or cut), "no body" — or "unread" / "reading"
 * (started, then left): what must not remain once a read has settled. The body handed on is a
 * byte stream that pulls the real one only when read, so that backpressure is as without it.
 */
function recording(inner) {
  const records = [];
  const pending = new Set();
  const f = (input, init = {}) => {
    const rec = { request: `${init.method ?? "GET"} ${new URL(String(input)).pathname}`, status: 0, body: "pending" };
    records.push(rec);
    const p = (async () => {
      let res;
      try {
        res = await inner(input, init);
      } catch (e) {
        rec.body = "rejected";
        throw e;
      }
      rec.status = res.status;
      if (res.body === null) {
        rec.body = "no body";
        return res;
      }
      rec.body = "unread";
      const src = res.body.getReader();
      const body = new ReadableStream({
        type: "bytes",
        async pull(c) {
          if (rec.body === "unread") rec.body = "reading";
          let got;
          try {
            got = await src.read();
          } catch (e) {
            rec.body = "failed";
            c.error(e);
            return;
          }
          if (got.done) {
            if (rec.body === "reading") rec.body = "read"; // (a cancel ends a read under way too)
            c.close();
            c.byobRequest?.respond(0);
          } else {
            c.enqueue(got.value.slice());
          }
        },
        cancel(reason) {
          if (rec.body !== "read" && rec.body !== "failed") rec.body = "cancelled";
          return src.cancel(reason).catch(() => undefined);
        },
      });
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    })();
    pending.add(p);
    p.then(
      () => pending.delete(p),
      () => pending.delete(p),
    );
    return p;
  };
  return { fetch: f, records, settled: () => Promise.allSettled([...pending]) };
}

/** The global fetch, and fetches a user might write (each passes the request on, but…). */
const FETCHES = {
  global: (input, init) => fetch(input, init),
  /** …not the abort signal (only cancelling the body stops an answer then). */
  "no-signal": (input, init) => fetch(input, { method: init.method, headers: init.headers }),
  /** …sends a GET for a HEAD (as a URL signed for GET only needs): the HEAD answer has a body. */
  "head-as-get": (input, init) => fetch(input, { ...init, method: "GET" }),
};

// --- the cases ---------------------------------------------------------------------------------

/**
 * Each case: what the server does (`behaviour` in `answer`), the read (`run`, with the array's
 * or group's URL base, the fetch option and an abort controller), what it must come to
 * (`expect`: "ok" or an error code) and the fetch options it runs through (`fetches`; "none":
 * the default global fetch, unrecorded — only a crash can fail it then).
 */
const CASES = {
  "early request: a zarr.json above 64 KiB answered while the module loads": {
    behaviour: "early",
    fresh: true,
    fetches: ["none", "global"],
    expect: "ok",
    run: async (api, base, opts) => {
      const g = await api.open(`${base}/g`, opts);
      assert.equal(g.attributes.pad, PAD, "the whole zarr.json was used");
    },
  },
  "early request: a TIFF's first 64 KiB answered while the module and its reader load": {
    behaviour: "early",
    fresh: true,
    fetches: ["none", "global"],
    expect: "ok",
    run: async (api, base, opts) => {
      const node = await api.open(`${base}/t/image.ome.tif`, opts);
      assert.ok(node, "opened");
    },
  },
  "early request the open does not take (aborted before the module loaded)": {
    behaviour: "early-aborted",
    fresh: true,
    fetches: ["global", "no-signal"],
    expect: "Aborted",
    run: async (api, base, opts) => {
      const ctl = new AbortController();
      const opening = api.open(`${base}/g`, { ...opts, signal: ctl.signal });
      ctl.abort();
      await opening;
    },
  },
  "a Content-Length over the limit (maxMetadataBytes)": {
    behaviour: "over-limit",
    fetches: ["global", "no-signal"],
    expect: "TooLarge",
    run: (api, base, opts) => api.open(`${base}/g`, { ...opts, maxMetadataBytes: 1024 }),
  },
  "a partial answer longer than asked (Content-Length)": {
    behaviour: "partial-longer",
    fetches: ["global", "no-signal"],
    expect: "CorruptShard",
    run: (api, base, opts) => readChunk(api, base, opts),
  },
  "a partial answer longer than asked (no Content-Length: the body ends at the close)": {
    behaviour: "partial-longer-no-length",
    fetches: ["global", "no-signal"],
    expect: "CorruptShard",
    run: (api, base, opts) => readChunk(api, base, opts),
  },
  "a whole object answered to a range, over the limit (maxDecodedBytes)": {
    behaviour: "whole-over-limit",
    fetches: ["global", "no-signal"],
    expect: "TooLarge",
    run: (api, base, opts) => readChunk(api, base, { ...opts, maxDecodedBytes: 60_000 }),
  },
  "a whole object answered to a range, within the limit (read and used)": {
    behaviour: "whole-within-limit",
    fetches: ["global"],
    expect: "ok",
    run: (api, base, opts) => readChunk(api, base, opts),
  },
  "an error status (500) with a body": {
    behaviour: "status-500",
    fetches: ["global", "no-signal"],
    expect: "HttpError",
    run: (api, base, opts) => readChunk(api, base, opts),
  },
  "an error status (404: missing, the fill value) with a body": {
    behaviour: "status-404",
    fetches: ["global", "no-signal"],
    expect: "ok",
    run: async (api, base, opts) => {
      const arr = await api.openArray(`${base}/a`, opts);
      const c = await arr.getChunk([0]);
      assert.ok(c.data.every((v) => v === 0), "the fill value");
      arr.close();
    },
  },
  "a HEAD (suffix ranges refused), answered with a body": {
    behaviour: "head",
    fetches: ["global", "head-as-get"],
    expect: "ok",
    run: (api, base, opts) => readChunk(api, base, opts),
  },
  "a stall before the answer (it comes after the read gave up)": {
    behaviour: "stall-headers",
    fetches: ["global", "no-signal"],
    expect: "Network",
    run: (api, base, opts) => readChunk(api, base, { ...opts, retry: { attempts: 1, stallMs: 300 } }),
  },
  "a stall inside the body": {
    behaviour: "stall-body",
    fetches: ["global", "no-signal"],
    expect: "Network",
    run: (api, base, opts) => readChunk(api, base, { ...opts, retry: { attempts: 1, stallMs: 300 } }),
  },
  "an aborted read": {
    behaviour: "aborted-read",
    fetches: ["global", "no-signal"],
    expect: "Aborted",
    run: async (api, base, opts) => {
      const arr = await api.openArray(`${base}/a`, opts);
      const ctl = new AbortController();
      setTimeout(() => ctl.abort(), 150);
      try {
        await arr.getChunk([0], { signal: ctl.signal });
      } finally {
        arr.close();
      }
    },
  },
};

/** Open the array and read its first inner chunk (two requests of the shard: index, chunk), checking its values. */
async function readChunk(api, base, opts) {
  const arr = await api.openArray(`${base}/a`, opts);
  try {
    const c = await arr.getChunk([0]);
    assert.equal(c.data.length, INNER);
    for (let i = 0; i < INNER; i++) if (c.data[i] !== value(i)) assert.fail(`value ${i}: ${c.data[i]}, not ${value(i)}`);
  } finally {
    arr.close();
  }
}

// --- child: one case through one fetch option --------------------------------------------------

async function child([name, via]) {
  const c = CASES[name];
  const api = await import(pathToFileURL(path.join(root, "pkg/index.js")).href);
  if (!c.fresh) await api.initialize(); // (no early request: the requests are the opener's own)
  const server = await startServer(c.behaviour);
  const rec = via === "none" ? undefined : recording(FETCHES[via]);
  let outcome = "ok";
  let message = "";
  try {
    await c.run(api, server.base, rec ? { fetch: rec.fetch } : {});
  } catch (e) {
    outcome = typeof e?.code === "string" ? e.code : `untyped ${e?.name}`;
    message = String(e?.message ?? e);
  }
  // Every answer arrived and its connection ended by the server, then a little more for the
  // client to see the end (where an answer left unread crashes Node 22 and 24) and for a
  // cancellation on arrival.
  await rec?.settled();
  await server.settled(3000, 200);
  server.close();
  process.stdout.write(`${JSON.stringify({ outcome, message, records: rec?.records ?? null, seen: server.seen })}\n`);
}

if (process.env[CHILD]) {
  await child(JSON.parse(process.env[CHILD]));
} else {
  const pkg = path.join(root, "pkg/index.js");
  for (const [name, c] of Object.entries(CASES)) {
    for (const via of c.fetches) {
      test(`answers not read are not left on the wire: ${name} (fetch: ${via})`, async () => {
        assert.ok(fs.existsSync(pkg), "pkg/ is built (npm run build)");
        const r = await run(name, via);
        const last = r.stdout.trim().split("\n").pop() ?? "";
        const crashed = /assert\(!this\.paused\)/.test(r.stderr) ? " — undici#5360's crash: an answer left unread when the server closed" : "";
        assert.equal(r.code, 0, `the child exited with ${r.code ?? r.signal}${crashed}\n${r.stderr.slice(-3000)}`);
        const got = JSON.parse(last);
        assert.equal(got.outcome, c.expect, `${got.outcome}: ${got.message}`);
        if (got.records !== null) {
          const left = got.records.filter((x) => !["read", "cancelled", "failed", "no body", "rejected"].includes(x.body));
          assert.deepEqual(left, [], `answers left unread or half read: ${JSON.stringify(got.records)}`);
          assert.ok(got.records.length > 0, "the fetch option was used");
        }
        console.log(`# ${name} (${via}): ${got.outcome}; ${got.records ? got.records.map((x) => `${x.request} ${x.status} ${x.body}`).join(", ") : got.seen.join(", ")}`);
      });
    }
  }
}

/** This file as a child running one case; its output and exit. */
function run(name, via) {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
      env: { ...process.env, [CHILD]: JSON.stringify([name, via]) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => p.kill(), 60_000);
    p.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
