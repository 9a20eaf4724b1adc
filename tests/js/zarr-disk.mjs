// Node-only helpers for tests: inspect Zarr v3 arrays on disk (chunk keys, shard indexes), so
// tests can pick present/missing shards and chunks and corrupt files on purpose.

import fs from "node:fs";
import path from "node:path";

export const prod = (a) => a.reduce((x, y) => x * y, 1);

export function readMeta(arrayDir) {
  return JSON.parse(fs.readFileSync(path.join(arrayDir, "zarr.json"), "utf8"));
}

/** Storage key of the chunk (= shard for sharded arrays) at grid coords. */
export function chunkKey(meta, coords) {
  const enc = meta.chunk_key_encoding ?? { name: "default" };
  const v2 = enc.name === "v2";
  const sep = enc.configuration?.separator ?? (v2 ? "." : "/");
  if (v2) return coords.length ? coords.join(sep) : "0";
  return coords.length ? `c${sep}${coords.join(sep)}` : "c";
}

/** Description of the sharding of an array (outer level only), or null. */
export function shardingOf(meta) {
  const codec = (meta.codecs ?? []).find((c) => c.name === "sharding_indexed");
  if (!codec) return null;
  const cfg = codec.configuration;
  const shardShape = meta.chunk_grid.configuration.chunk_shape;
  const innerShape = cfg.chunk_shape;
  const perShard = shardShape.map((s, k) => Math.ceil(s / innerShape[k]));
  const n = prod(perShard);
  const crc = (cfg.index_codecs ?? []).some((c) => c.name === "crc32c");
  const indexSize = 16 * n + (crc ? 4 : 0);
  return {
    shardShape,
    innerShape,
    perShard,
    n,
    crc,
    indexSize,
    location: cfg.index_location ?? "end",
    nested: (cfg.codecs ?? []).some((c) => c.name === "sharding_indexed"),
  };
}

/** All shard grid coordinates of an array (C order). */
export function* gridCoords(grid) {
  const n = prod(grid);
  const c = new Array(grid.length).fill(0);
  for (let i = 0; i < n; i++) {
    yield c.slice();
    for (let k = grid.length - 1; k >= 0; k--) {
      if (++c[k] < grid[k]) break;
      c[k] = 0;
    }
  }
}

/** Shards of an array with whether their file exists. */
export function listShards(arrayDir) {
  const meta = readMeta(arrayDir);
  const sh = shardingOf(meta);
  const unit = sh ? sh.shardShape : meta.chunk_grid.configuration.chunk_shape;
  const grid = meta.shape.map((n, k) => Math.ceil(n / unit[k]));
  const out = [];
  for (const coords of gridCoords(grid)) {
    const key = chunkKey(meta, coords);
    const file = path.join(arrayDir, key);
    out.push({ coords, key, file, exists: fs.existsSync(file) });
  }
  return { meta, sharding: sh, shards: out };
}

/** Parse the (outer) shard index of a shard file: [{offset, nbytes, missing}] in C order. */
export function readShardIndex(file, sh) {
  const buf = fs.readFileSync(file);
  const start = sh.location === "start" ? 0 : buf.length - sh.indexSize;
  const entries = [];
  for (let i = 0; i < sh.n; i++) {
    const offset = buf.readBigUInt64LE(start + 16 * i);
    const nbytes = buf.readBigUInt64LE(start + 16 * i + 8);
    const missing = offset === 0xffffffffffffffffn && nbytes === 0xffffffffffffffffn;
    entries.push({ offset, nbytes, missing });
  }
  return { size: buf.length, indexStart: start, entries };
}

/** Inner chunk grid coords (array-level, in units of the inner chunk) of inner chunk `i` of a shard. */
export function innerChunkCoords(shardCoords, sh, i) {
  const local = [];
  let r = i;
  for (let k = sh.perShard.length - 1; k >= 0; k--) {
    local[k] = r % sh.perShard[k];
    r = Math.floor(r / sh.perShard[k]);
  }
  return shardCoords.map((c, k) => c * sh.perShard[k] + local[k]);
}

/** Copy a directory tree. */
export function copyDir(src, dst) {
  fs.cpSync(src, dst, { recursive: true });
}
