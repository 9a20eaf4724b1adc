// Memory and hostile answers (issue 24), through the built package (pkg/): what a long-lived
// reader holds after reading, what a hostile server can make one read download, and answers
// whose Content-Range cannot be trusted. Run: node --test tests/js/memory.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

import { startServer } from "../server.mjs";
import { startSynth } from "./synth.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const pkgEntry = path.join(repo, "pkg/index.js");
const MiB = 2 ** 20;

let api;
let synth;
let files;

before(async () => {
  if (!fs.existsSync(pkgEntry)) throw new Error(`${pkgEntry} missing: run \`npm run build\` first`);
  api = await import(pathToFileURL(pkgEntry).href);
  // 64 MiB per pass: 8192² uint8, shards of 4096², inner chunks of 1024² (1 MiB).
  synth = await startSynth({ shape: [8192, 8192], shard: [4096, 4096], chunk: [1024, 1024] });
  files = await startServer({ root: { "/fixtures": path.join(repo, "tests/fixtures/data") } });
});

after(async () => {
  await synth?.close();
  await files?.close();
});

/** Run `node --expose-gc` on a script; resolve to its last stdout line as JSON. */
function child(script, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--expose-gc", path.join(here, script), ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("exit", (code) => {
      const last = out.trim().split("\n").pop();
      if (code !== 0 || !last) reject(new Error(`${script} exited ${code}: ${err.slice(-2000)}`));
      else resolve(JSON.parse(last));
    });
  });
}

// SHARDFETCH_MEMORY_MIB=1024 measures the issue's 1 GiB (BENCHMARKS.md); 256 in npm test.
const READ_MIB = Number(process.env.SHARDFETCH_MEMORY_MIB ?? 256);

test(`Node holds no bytes it read: ${READ_MIB} MiB through 1 MiB chunks, array closed, GC → ≤ 32 MiB of ArrayBuffers and WebAssembly memory left`, async () => {
  // Two configurations the issue saw leak: the defaults, and a 1 MiB store cache.
  for (const options of [{}, { cacheBytes: MiB }]) {
    const r = await child("memory-child.mjs", [pathToFileURL(pkgEntry).href, synth.url, JSON.stringify(options), String(READ_MIB)]);
    const what = JSON.stringify(options);
    console.log(
      `# ${what}: read ${r.read} MiB; ArrayBuffers held every 64 MiB: ${r.held.join(", ")} MiB, after close: ${r.end} MiB; ` +
        `the module's memory (${r.wasmStart} MiB at the start) grew ${r.wasm.join(", ")} MiB, ${r.wasmEnd} MiB at the end`,
    );
    assert.equal(r.read, READ_MIB);
    assert.equal(r.held.length, READ_MIB / 64);
    // The module's memory is this thread's only when no worker decoded.
    assert.equal(r.workerJobs, 0, `${what}: chunks decoded in workers, whose memory is not counted here`);
    // Both kinds of memory together: ArrayBuffers (what the wrapper and the results hold) and
    // the module's own (its caches, buffers). (Before the fix each 1 MiB read stayed held: 256
    // MiB here.)
    r.held.forEach((h, i) => assert.ok(h + r.wasm[i] <= 32, `${what}: ${h} MiB of ArrayBuffers + ${r.wasm[i]} MiB of module memory held while reading`));
    assert.ok(r.end + r.wasmEnd <= 32, `${what}: ${r.end} MiB of ArrayBuffers + ${r.wasmEnd} MiB of module memory held after close`);
    // The module's memory never shrinks: it stops growing after the first 64 MiB, whatever is read after.
    assert.ok(r.wasmEnd - r.wasm[0] <= 2, `${what}: the module's memory grew ${r.wasm.join(", ")} MiB every 64 MiB read`);
  }
});

// ------------------------------------------------------------------------------------------
// A hostile shard index, served with or without Content-Length.

/**
 * One shard of 16 inner chunks (1024² uint8) whose index points anywhere up to 1 PiB with
 * lengths up to 1 TiB; the object claims to be 2 PiB long. Every other answer streams garbage
 * for as long as the client reads, whatever was asked (up to 4 GiB), its length told by
 * `length`:
 * - `none`: no Content-Length (chunked transfer encoding), the issue's case;
 * - `object`: a Content-Length agreeing with the answer's claim, the whole object's (2 PiB) for
 *   a plain GET, the bytes asked for a range (then exactly those bytes are sent);
 * - `overlong`: a Content-Length of 1 TiB for every answer, far past what a range asked.
 * Each request's log entry: `sent`, the body bytes the server handed to the socket;
 * `intent`, those it meant to send; `cut`, whether the client closed the connection first, and
 * `closedAt` when (epoch ms).
 */
async function startHostile({ length = "none" } = {}) {
  const meta = {
    zarr_format: 3,
    node_type: "array",
    shape: [4096, 4096],
    data_type: "uint8",
    chunk_grid: { name: "regular", configuration: { chunk_shape: [4096, 4096] } },
    chunk_key_encoding: { name: "default" },
    fill_value: 0,
    codecs: [
      {
        name: "sharding_indexed",
        configuration: { chunk_shape: [1024, 1024], codecs: [{ name: "bytes" }], index_codecs: [{ name: "bytes", configuration: { endian: "little" } }] },
      },
    ],
  };
  const TOTAL = 2n ** 51n;
  const index = Buffer.alloc(16 * 16);
  const spans = [];
  for (let k = 0; k < 16; k++) {
    const [offset, len] = [
      [BigInt(k) * 2n ** 20n, 2n ** 20n],
      [2n ** 50n - BigInt(k) * 2n ** 30n, 2n ** 40n],
      [BigInt(k) * 2n ** 44n, 3n * 2n ** 20n],
      [BigInt(k) * 977n, 40n * 2n ** 20n],
    ][k % 4];
    index.writeBigUInt64LE(offset, k * 16);
    index.writeBigUInt64LE(len, k * 16 + 8);
    spans.push(Number(len));
  }
  const log = [];
  const garbage = Buffer.alloc(64 << 10, 7);
  let streaming = 0;
  const server = http.createServer(async (req, res) => {
    // How many answers are still streaming (the child waits for none before it reads on).
    if (req.url === "/__streaming") return res.end(String(streaming));
    const entry = { url: req.url, range: req.headers.range ?? null, sent: 0, intent: 0, cut: false };
    log.push(entry);
    if (req.url.endsWith("/zarr.json")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(meta));
      return;
    }
    const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? "");
    if (m && m[1] === "") {
      const n = BigInt(index.length);
      const told = length === "none" ? {} : { "content-length": String(index.length) };
      res.writeHead(206, { "content-range": `bytes ${TOTAL - n}-${TOTAL - 1n}/${TOTAL}`, ...told });
      res.end(index);
      entry.sent = entry.intent = index.length;
      return;
    }
    const asked = m ? Number(m[2]) - Number(m[1]) + 1 : null;
    const told = { none: null, object: asked ?? TOTAL, overlong: 2 ** 40 }[length];
    const headers = told == null ? {} : { "content-length": String(told) };
    if (m) res.writeHead(206, { ...headers, "content-range": `bytes ${m[1]}-${m[2]}/${TOTAL}` });
    else res.writeHead(200, headers);
    // Up to 4 GiB of garbage (no more than a Content-Length told), as fast as the client takes it.
    entry.intent = Math.min(4 * 1024 * MiB, length === "object" ? Number(told) : Infinity);
    let closed = false;
    let wake = () => {};
    streaming++;
    res.on("close", () => {
      streaming--;
      closed = true;
      entry.closedAt = Date.now();
      wake();
    });
    while (!closed && entry.sent < entry.intent) {
      const piece = garbage.subarray(0, Math.min(garbage.length, entry.intent - entry.sent));
      entry.sent += piece.length;
      if (!res.write(piece)) await new Promise((r) => ((wake = r), res.once("drain", r)));
    }
    entry.cut = closed && entry.sent < entry.intent;
    if (!closed) res.end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}/a.zarr`,
    log,
    spans,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/**
 * The one outcome a read of the hostile array must have: `chunk` [y, x] (inner chunk y * 4 + x of
 * the index) or null (the whole array, every span). A span above the limit is refused before any
 * request (TooLarge); one within it is asked for by range, and then: an answer running past the
 * bytes asked for is cut (CorruptShard, "runs past"); exactly those bytes (Content-Length
 * `object`) are the chunk's when they are its 1 MiB, else a chunk of the wrong size (CorruptChunk).
 */
function expectedOutcome(spans, chunk, length, limit) {
  const mine = chunk == null ? spans : [spans[chunk[0] * 4 + chunk[1]]];
  if (mine.some((n) => n > limit)) return "TooLarge";
  if (length !== "object") return "CorruptShard";
  return mine.every((n) => n === MiB) ? "ok" : "CorruptChunk";
}

/** The bytes a Range header asks for (`bytes=a-b`), or null (none, or a suffix). */
function askedOf(entry) {
  const m = /^bytes=(\d+)-(\d+)$/.exec(entry.range ?? "");
  return m ? Number(m[2]) - Number(m[1]) + 1 : null;
}

/** Bytes a request may carry: what it asked for (a plain GET: the limit), at most the limit. */
function allowed(entry, limit) {
  const a = askedOf(entry);
  return a == null ? limit : Math.min(limit, a);
}

// One network buffer: what the server has handed to the socket but the client never read
// when it hangs up — the server's send buffer (tcp_wmem: up to 4 MiB on Linux), the client's
// receive buffer (grown as it reads) and the fetch stream's read-ahead. Measured on loopback:
// 2.7–2.9 MiB when the client reads nothing of a body, up to 7.5 MiB (mostly 3–6) when it
// reads one up to the length asked. Far less than a limit: a client that read on to the limit
// instead of stopping at the length asked (1 MiB of 32) fails here.
const BUFFER = 12 * MiB;

/**
 * Read the hostile array (`reads`: the whole array, or each inner chunk) in a child process
 * and check the issue's bounds: every request asks for at most the limit, carries at most
 * what it asked for (or the limit) plus one buffer, is cut (the connection dropped) when the
 * server would send more; in all at most the limits allow plus one buffer per request cut;
 * every read a typed error naming the shard (or, where the server sent exactly the bytes
 * asked for, its bytes); peak memory growth at most the limit + 64 MiB.
 */
async function hostileRead({ length, reads, maxDecoded }) {
  const hostile = await startHostile({ length });
  try {
    const options = maxDecoded ? { maxDecodedBytes: maxDecoded } : {};
    const r = await child("hostile-child.mjs", [pathToFileURL(pkgEntry).href, hostile.url, JSON.stringify(options), reads]);
    const limit = maxDecoded ?? 512 * MiB;
    const log = hostile.log;
    const sent = log.reduce((s, e) => s + e.sent, 0);
    const cut = log.filter((e) => e.cut);
    const ranged = log.filter((e) => askedOf(e) != null);
    const over = cut.filter((e) => askedOf(e) != null).map((e) => e.sent - askedOf(e));
    // Without a length: what the client says it took of an answer running past the length asked.
    const took = length !== "none" ? [] : r.outcomes.map((o) => /runs past the (\d+) bytes asked for \((\d+) or more\)/.exec(o.message ?? "")).filter(Boolean);
    const label = `${length === "none" ? "chunked" : `Content-Length ${length}`}, ${reads}, maxDecodedBytes ${limit / MiB} MiB`;
    const codes = r.outcomes.map((o) => o.code);
    console.log(
      `# ${label}: ${log.length} requests (${ranged.length} ranged, largest asked ${(Math.max(0, ...ranged.map(askedOf)) / MiB).toFixed(0)} MiB, ${cut.length} cut), ` +
        `${(sent / MiB).toFixed(1)} MiB sent` +
        (over.length ? `, a cut range's bytes sent past the length asked ${(Math.min(...over) / MiB).toFixed(2)}–${(Math.max(...over) / MiB).toFixed(2)} MiB` : "") +
        (took.length ? ` (the client took ≤ ${Math.max(...took.map((t) => t[2] - t[1]))} bytes past the length asked)` : "") +
        "; " +
        `peak RSS +${r.grew.toFixed(0)} MiB, ${r.ms.toFixed(0)} ms: ${[...new Set(codes)].map((c) => `${codes.filter((x) => x === c).length}× ${c}`).join(", ")}`,
    );
    for (const e of log) {
      const a = askedOf(e);
      if (a != null) assert.ok(a <= limit, `${label}: asked for ${e.range}, above the limit`);
      assert.ok(e.sent <= allowed(e, limit) + BUFFER, `${label}: ${e.range ?? "GET"}: ${e.sent} bytes sent, ${allowed(e, limit)} allowed`);
      // More than allowed on offer: the client hung up there, not when its process ended (the
      // child waits up to 1.5 s after its reads for every answer to close, then exits).
      if (e.intent > allowed(e, limit)) {
        assert.ok(e.cut, `${label}: ${e.range ?? "GET"}: the connection was not dropped (${e.sent} of ${e.intent} bytes sent)`);
        assert.ok(e.closedAt < r.pauseEnd, `${label}: ${e.range ?? "GET"}: the connection closed ${e.closedAt - r.readsEnd} ms after the reads settled, after the child's pause`);
      }
    }
    const most = log.reduce((s, e) => s + allowed(e, limit), 0) + Math.max(1, cut.length) * BUFFER;
    assert.ok(sent <= most, `${label}: ${sent} bytes sent in all, ${most} allowed`);
    assert.ok(r.outcomes.length > 0, `${label}: no read ran (${r.code}: ${r.message})`);
    for (const o of r.outcomes) {
      const what = `${label}: chunk ${o.chunk ?? "all"}`;
      assert.equal(o.code, expectedOutcome(hostile.spans, o.chunk, length, limit), `${what}: ${o.code}: ${o.message ?? ""}`);
      if (o.code === "ok") {
        // Only the bytes asked for, each with a length saying so: the library cannot tell them from data.
        assert.ok(o.filler, `${what}: values other than the server's`);
        continue;
      }
      if (o.code === "CorruptShard") assert.match(o.message, /runs past the \d+ bytes asked for/, what);
      assert.match(o.message, /a\.zarr\/c\/0\/0/, what);
    }
    assert.ok(r.grew <= limit / MiB + 64, `${label}: peak RSS grew ${r.grew.toFixed(0)} MiB (limit ${limit / MiB} MiB + 64)`);
    assert.ok(r.alive, `${label}: the module reads on after it`);
    return { r, log, limit, sent };
  } finally {
    await hostile.close();
  }
}

test("a hostile shard index with chunked answers: no request carries more than it asked for or the limit, memory bounded, a typed error", async () => {
  for (const maxDecoded of [64 * MiB, undefined]) {
    const { r, sent, limit } = await hostileRead({ length: "none", reads: "array", maxDecoded });
    // The index has spans of 1 TiB: the whole array is refused before any chunk is asked for.
    assert.equal(r.code, "TooLarge", r.message);
    // One read: in all, no more than its limit and one buffer (the issue saw 3 GiB).
    assert.ok(sent <= limit + BUFFER, `${sent} bytes sent in all (limit ${limit} + one buffer)`);
  }
});

test("a hostile shard index with chunked answers to Range requests (getChunk of each inner chunk): each cut at the length asked, the connection dropped, a typed error", async () => {
  for (const maxDecoded of [32 * MiB, undefined]) {
    const { r, log, limit } = await hostileRead({ length: "none", reads: "chunks", maxDecoded });
    assert.equal(r.outcomes.length, 16);
    // The index's spans within the limit were asked for, by range, and each answer cut there.
    const ranged = log.filter((e) => askedOf(e) != null);
    const within = limit >= 40 * MiB ? 12 : 8;
    assert.equal(ranged.length, within, `${ranged.length} ranged requests: ${ranged.map((e) => e.range).join(", ")}`);
    for (const e of ranged) assert.ok(e.cut && e.sent >= askedOf(e), `${e.range}: ${e.sent} bytes sent, cut ${e.cut}`);
    // The spans above the limit (1 TiB; 40 MiB under 32 MiB) are refused unasked; the rest cut.
    const codes = r.outcomes.map((o) => o.code);
    assert.equal(codes.filter((c) => c === "TooLarge").length, 16 - within, codes.join(", "));
    assert.equal(codes.filter((c) => c === "CorruptShard").length, within, codes.join(", "));
  }
});

test("the same hostile index served with a Content-Length (the object's, or longer than asked): the same bounds", async () => {
  for (const length of ["object", "overlong"]) {
    for (const reads of ["array", "chunks"]) {
      for (const maxDecoded of [32 * MiB, undefined]) {
        const { log } = await hostileRead({ length, reads, maxDecoded });
        if (reads === "chunks") assert.ok(log.some((e) => askedOf(e) != null), "no Range request was sent");
      }
    }
  }
});

// ------------------------------------------------------------------------------------------
// Content-Range that does not agree with the request.

test("a visible Content-Range that is malformed, names other bytes, or a body longer than asked never yields data", async () => {
  const array = "zp/shard_gzip_end";
  // The writer's values (zarr-python's, tests/fixtures/expected/), uint16 100 × 120: the four
  // 50 × 60 quarters read below.
  const bytes = fs.readFileSync(path.join(repo, "tests/fixtures/expected/zp_shard_gzip_end.bin"));
  const all = new Uint16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const want = [];
  for (let y = 0; y < 2; y++) {
    for (let x = 0; x < 2; x++) {
      const q = new Uint16Array(50 * 60);
      for (let i = 0; i < 50; i++) q.set(all.subarray((y * 50 + i) * 120 + x * 60, (y * 50 + i) * 120 + x * 60 + 60), i * 60);
      want.push({ data: q });
    }
  }
  for (const mode of ["bad-content-range", "other-content-range", "long-content-range"]) {
    let data = 0;
    let errors = 0;
    let reads = 0;
    const asks = [];
    const arr = await api.openArray(`${files.url}/__mode/${mode}/fixtures/${array}`, { retry: { baseMs: 1 } });
    for (let k = 0; k < 17; k++) {
      const y = (k >> 1) % 2;
      const x = k % 2;
      reads++;
      const logged = files.log.length;
      const retried = arr.stats().retries;
      try {
        const r = await arr.get([[y * 50, y * 50 + 50], [x * 60, x * 60 + 60]]);
        // Only a read served without a range request (a plain GET of a whole shard, an absent
        // chunk) may succeed, with the writer's values.
        assert.deepEqual(Array.from(r.shape), [50, 60], `${mode}: read ${k}: shape`);
        assert.deepEqual(r.data, want[y * 2 + x].data, `${mode}: read ${k} returned other values than the writer's`);
        data++;
      } catch (e) {
        assert.equal(e.code, "CorruptShard", `${mode}: ${e.code} ${e.message}`);
        assert.match(e.message, /shard_gzip_end\/c\//, `${mode}: the error names the object`);
        errors++;
        // The answers to the failed range, as the server saw them: the object the error names,
        // the range it was asked for (`bytes a-b` in the message, or the one ranged request).
        const object = /shard_gzip_end(\/c\/\d+\/\d+)/.exec(e.message)[1];
        const mine = files.log.slice(logged).filter((l) => l.path.endsWith(`${array}${object}`) && /^bytes=\d+-\d+$/.test(l.range ?? ""));
        const named = /bytes (\d+-\d+)/.exec(e.message)?.[1];
        const range = named ? `bytes=${named}` : mine[0]?.range;
        const n = mine.filter((l) => l.range === range).length;
        asks.push(n);
        if (mode === "long-content-range") {
          // Cut at the first byte past the length asked, the connection dropped: asked at most once more.
          assert.ok(n >= 1 && n <= 2, `${mode}: read ${k}: ${range} of ${object} asked ${n} times`);
        } else {
          // Treated like a cut body: asked exactly once more, then the typed error.
          assert.equal(n, 2, `${mode}: read ${k}: ${range} of ${object} asked ${n} times`);
          assert.ok(arr.stats().retries > retried, `${mode}: read ${k}: no retry counted`);
          assert.match(e.message, /\(twice\)/, `${mode}: read ${k}`);
        }
      }
    }
    arr.close();
    console.log(`# ${mode}: ${errors} of ${reads} reads were typed errors, ${data} returned the writer's values; the failed range was asked ${asks.join(", ")} times`);
    assert.ok(errors >= 1, `${mode}: no read failed`);
  }
});

// ------------------------------------------------------------------------------------------
// Chromium, with the decoding workers.

test("headless Chromium with decoding workers: renderer memory flat across passes of 64 MiB", async () => {
  const page = await startServer({ root: { "/": repo } });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, "--js-flags=--expose-gc"], headless: true });
  try {
    const tab = await browser.newPage();
    const q = new URLSearchParams({ url: synth.url, passes: "8" });
    await tab.goto(`${page.url}/tests/js/memory.html?${q}`);
    const samples = [];
    // Each pass: read 64 MiB (getChunk of 1 MiB chunks, decoded in workers), close, GC; then sample.
    for (;;) {
      await tab.waitForFunction(() => window.__memory?.waiting, null, { timeout: 120_000 });
      const state = await tab.evaluate(() => {
        const { next: _next, ...s } = window.__memory;
        return s;
      });
      if (state.error) throw new Error(state.error);
      samples.push({ pass: state.pass, rss: rendererRss(), workerJobs: state.workerJobs, heap: state.heap });
      if (state.done) break;
      await tab.evaluate(() => window.__memory.next());
    }
    const mib = samples.map((s) => s.rss / MiB);
    console.log(`# Chromium renderer RSS after each pass of 64 MiB (MiB): ${mib.map((m) => m.toFixed(0)).join(", ")}; worker jobs ${samples[samples.length - 1].workerJobs}`);
    assert.ok(samples[samples.length - 1].workerJobs > 0, "the workers decoded");
    // Flat: after the first pass (code, caches, the pool's instances), no growth with the bytes
    // read. The workers' garbage is collected on their own schedule (a pass's worth swings in
    // and out), so the envelope is compared: the last passes' lowest and highest against those
    // of the passes before them.
    const early = mib.slice(1, 4);
    const late = mib.slice(-4);
    const rise = Math.max(Math.min(...late) - Math.min(...early), Math.max(...late) - Math.max(...early));
    assert.ok(rise <= 32, `renderer RSS rose ${rise.toFixed(0)} MiB over ${mib.length} passes of 64 MiB`);
  } finally {
    await browser.close();
    await page.close();
  }
});

/** Resident bytes of Chromium's renderer processes (this test's browser: children of this process). */
function rendererRss() {
  let total = 0;
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes("--type=renderer") || !isDescendant(Number(pid), process.pid)) continue;
      total += Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) * 1024;
    } catch {
      // gone
    }
  }
  return total;
}

function parent(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

function isDescendant(pid, root) {
  for (let p = parent(pid), i = 0; p > 1 && i < 10; p = parent(p), i++) if (p === root) return true;
  return false;
}
