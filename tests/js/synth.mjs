// A synthetic sharded Zarr v3 uint8 array (or OME-Zarr multiscale image) served over HTTP, made on the fly: arrays of any size
// for the memory tests and the soak benchmark without committing gigabytes. The layout is what
// zarr-python 3 writes for `zarr.create_array(..., shards=…, chunks=…)` with the default
// codecs of an uncompressed uint8 array plus a checksum: inner chunks `bytes` + `crc32c`, the
// index (`bytes` + `crc32c`) at the end of each shard. Values are a formula (`value`), so a test
// checks what it reads without a reference file.
//
//   const s = await startSynth({ shape: [8192, 8192], shard: [4096, 4096], chunk: [1024, 1024] });
//   s.url  → the array; s.image → the multiscale group (option levels); s.stats() → { requests,
//   bytes } served; s.close()
import http from "node:http";
import { value } from "./synth-value.mjs";

export { value };

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32C (Castagnoli), as the `crc32c` codec appends it. */
export function crc32c(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 255] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * Start the server. Options: `shape`, `shard`, `chunk` (2-d; shard divides shape, chunk divides
 * shard), `chunked` (answers without Content-Length: Transfer-Encoding chunked), `latencyMs`.
 */
export async function startSynth({ shape, shard, chunk, chunked = false, latencyMs = 0, levels = 1 }) {
  // Level k halves level k-1 (an OME-Zarr 0.5 multiscale image at /img.zarr, levels s0, s1, …;
  // level 0 is also /a.zarr). Level k's element (y, x) is value(y << k, x << k).
  const level = (k) => makeLevel([shape[0] >> k, shape[1] >> k], shard, chunk, k);
  const arrays = Array.from({ length: levels }, (_, k) => level(k));
  const group = {
    zarr_format: 3,
    node_type: "group",
    attributes: {
      ome: {
        version: "0.5",
        multiscales: [
          {
            axes: [
              { name: "y", type: "space", unit: "micrometer" },
              { name: "x", type: "space", unit: "micrometer" },
            ],
            datasets: arrays.map((_, k) => ({ path: `s${k}`, coordinateTransformations: [{ type: "scale", scale: [2 ** k, 2 ** k] }] })),
          },
        ],
      },
    },
  };
  let requests = 0;
  let bytes = 0;
  const server = http.createServer(async (req, res) => {
    requests++;
    if (latencyMs) await new Promise((r) => setTimeout(r, latencyMs));
    const cors = { "access-control-allow-origin": "*", "access-control-expose-headers": "Content-Range, Content-Length" };
    if (req.method === "OPTIONS") {
      res.writeHead(204, { ...cors, "access-control-allow-headers": "Range", "access-control-allow-methods": "GET, HEAD" });
      res.end();
      return;
    }
    const u = new URL(req.url, "http://x");
    if (u.pathname === "/__stats") {
      requests--;
      res.writeHead(200, { ...cors, "content-type": "application/json", "cache-control": "no-store" });
      res.end(JSON.stringify({ requests, bytes }));
      return;
    }
    const json = (doc) => {
      const body = Buffer.from(JSON.stringify(doc));
      res.writeHead(200, { ...cors, "content-type": "application/json", "content-length": body.length });
      res.end(body);
      bytes += body.length;
    };
    if (u.pathname === "/img.zarr/zarr.json") return json(group);
    const m = /^\/(?:a\.zarr|img\.zarr\/s(\d+))\/(zarr\.json|c\/(\d+)\/(\d+))$/.exec(u.pathname);
    const a = m ? arrays[Number(m[1] ?? 0)] : undefined;
    if (!a) {
      res.writeHead(404, cors);
      res.end();
      return;
    }
    if (m[2] === "zarr.json") return json(a.meta);
    const sy = Number(m[3]);
    const sx = Number(m[4]);
    if (sy >= a.grid[0] || sx >= a.grid[1]) {
      res.writeHead(404, cors);
      res.end();
      return;
    }
    const shardSize = a.shardSize;
    let from = 0;
    let to = shardSize;
    let status = 200;
    const range = req.headers.range?.match(/^bytes=(\d*)-(\d*)$/);
    if (range) {
      status = 206;
      if (range[1] === "") from = Math.max(0, shardSize - Number(range[2]));
      else {
        from = Number(range[1]);
        if (range[2] !== "") to = Math.min(shardSize, Number(range[2]) + 1);
      }
      if (from >= shardSize) {
        res.writeHead(416, { ...cors, "content-range": `bytes */${shardSize}` });
        res.end();
        return;
      }
    }
    const headers = { ...cors, "content-type": "application/octet-stream" };
    if (status === 206) headers["content-range"] = `bytes ${from}-${to - 1}/${shardSize}`;
    if (!chunked) headers["content-length"] = to - from;
    res.writeHead(status, headers);
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    let wake = () => {};
    res.on("close", () => wake());
    for (const piece of a.pieces(sy, sx, from, to)) {
      if (res.destroyed) return;
      bytes += piece.length;
      if (!res.write(piece)) await new Promise((r) => ((wake = r), res.once("drain", r)));
    }
    res.end();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    url: `${base}/a.zarr`,
    image: `${base}/img.zarr`,
    shardSize: arrays[0].shardSize,
    stats: () => ({ requests, bytes }),
    close: () => new Promise((r) => (server.closeAllConnections?.(), server.close(() => r()))),
  };
}

/** One level: its metadata, and the bytes of its shards made on demand. */
function makeLevel(shape, shardShape, chunkShape, k) {
  // Coarse levels smaller than a shard are one shard (and one chunk when smaller than one).
  const shard = shardShape.map((n, d) => Math.min(n, shape[d]));
  const chunk = chunkShape.map((n, d) => Math.min(n, shard[d]));
  const per = [shard[0] / chunk[0], shard[1] / chunk[1]];
  const n = per[0] * per[1];
  const csize = chunk[0] * chunk[1];
  const stored = csize + 4;
  const indexBytes = n * 16 + 4;
  const shardSize = n * stored + indexBytes;
  const meta = {
    zarr_format: 3,
    node_type: "array",
    shape,
    data_type: "uint8",
    chunk_grid: { name: "regular", configuration: { chunk_shape: shard } },
    chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
    fill_value: 0,
    codecs: [
      {
        name: "sharding_indexed",
        configuration: {
          chunk_shape: chunk,
          codecs: [{ name: "bytes" }, { name: "crc32c" }],
          index_codecs: [{ name: "bytes", configuration: { endian: "little" } }, { name: "crc32c" }],
          index_location: "end",
        },
      },
    ],
    attributes: {},
    dimension_names: ["y", "x"],
  };
  const index = Buffer.alloc(indexBytes);
  for (let i = 0; i < n; i++) {
    index.writeBigUInt64LE(BigInt(i * stored), i * 16);
    index.writeBigUInt64LE(BigInt(stored), i * 16 + 8);
  }
  index.writeUInt32LE(crc32c(index.subarray(0, n * 16)), n * 16);

  // The stored bytes of inner chunk i of shard (sy, sx), a few kept.
  const made = new Map();
  const chunkBytes = (sy, sx, i) => {
    const key = `${sy}/${sx}/${i}`;
    let b = made.get(key);
    if (b) return b;
    b = Buffer.alloc(stored);
    const y0 = sy * shard[0] + Math.floor(i / per[1]) * chunk[0];
    const x0 = sx * shard[1] + (i % per[1]) * chunk[1];
    for (let r = 0; r < chunk[0]; r++) {
      const at = r * chunk[1];
      for (let c = 0; c < chunk[1]; c++) b[at + c] = value((y0 + r) << k, (x0 + c) << k);
    }
    b.writeUInt32LE(crc32c(b.subarray(0, csize)), csize);
    made.set(key, b);
    if (made.size > 8) made.delete(made.keys().next().value);
    return b;
  };
  // Bytes [a, b) of shard (sy, sx), in pieces.
  function* shardPieces(sy, sx, a, b) {
    let at = a;
    while (at < b) {
      if (at >= n * stored) {
        yield index.subarray(at - n * stored, b - n * stored);
        return;
      }
      const i = Math.floor(at / stored);
      const from = at - i * stored;
      const to = Math.min(stored, b - i * stored);
      yield chunkBytes(sy, sx, i).subarray(from, to);
      at += to - from;
    }
  }

  return { meta, grid: [shape[0] / shard[0], shape[1] / shard[1]], shardSize, pieces: shardPieces };
}
