// Issue 14's Range-ignoring scenario at full size, in Node: a 1 GiB uint8 array of 64 MiB shards
// (1 MiB inner chunks, `bytes` codec, index at the end) behind a server that answers every
// request with the whole object (200, no Content-Range), read shard by shard — a region per
// shard; every inner chunk of a shard asked in one task (a viewer's getChunk calls); every
// chunk as its own read, one after another; all of a shard's chunks but its last (ranged
// requests, not plain GETs) — with several `cacheBytes`. Prints the bytes the server sent
// against the array's size.
//
//   npm run build && node bench/ignore-range.mjs [--cache 1,8,64,256] [--shards 16]
//
// The shards are made by this script (no library writes them); every read is checked against
// the formula that made them.
import http from "node:http";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const api = await import(pathToFileURL(path.join(here, "../pkg/index.js")).href);
const arg = (name, dflt) => {
  const k = process.argv.indexOf(`--${name}`);
  return k > 0 ? process.argv[k + 1] : dflt;
};
const SHARD = 64 << 20;
const INNER = 1 << 20;
const SHARDS = Number(arg("shards", "16"));
const CACHES = arg("cache", "1,8,64,256").split(",").map((m) => Number(m) << 20);
const value = (i) => (i % 251) ^ Math.floor(i / 131072) % 256;

function shardBytes(s) {
  const n = SHARD / INNER;
  const b = Buffer.alloc(SHARD + 16 * n);
  for (let i = 0; i < SHARD; i++) b[i] = value(s * SHARD + i);
  for (let k = 0; k < n; k++) {
    b.writeBigUInt64LE(BigInt(k * INNER), SHARD + 16 * k);
    b.writeBigUInt64LE(BigInt(INNER), SHARD + 16 * k + 8);
  }
  return b;
}

const meta = JSON.stringify({
  zarr_format: 3,
  node_type: "array",
  shape: [SHARD * SHARDS],
  data_type: "uint8",
  chunk_grid: { name: "regular", configuration: { chunk_shape: [SHARD] } },
  chunk_key_encoding: { name: "default" },
  fill_value: 0,
  codecs: [{ name: "sharding_indexed", configuration: { chunk_shape: [INNER], codecs: [{ name: "bytes" }], index_codecs: [{ name: "bytes", configuration: { endian: "little" } }], index_location: "end" } }],
});

let sent = 0;
let requests = 0;
const server = http.createServer((req, res) => {
  requests++;
  const key = req.url.replace(/^\/a\//, "");
  let body;
  if (key === "zarr.json") body = Buffer.from(meta);
  else if (/^c\/\d+$/.test(key) && Number(key.slice(2)) < SHARDS) body = shardBytes(Number(key.slice(2)));
  else {
    res.writeHead(404).end();
    return;
  }
  sent += body.length;
  res.writeHead(200, { "Content-Length": body.length }).end(body); // Range ignored
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/a`;
const total = SHARD * SHARDS;
const gib = (n) => (n / 2 ** 30).toFixed(3);

function check(data, start, what) {
  for (let i = 0; i < data.length; i += 65521) {
    if (data[i] !== value(start + i)) throw new Error(`${what}: byte ${start + i} is ${data[i]}, not ${value(start + i)}`);
  }
}

console.log(`# ${gib(total)} GiB in ${SHARDS} shards of 64 MiB (1 MiB inner chunks), server ignoring Range`);
console.log("| cacheBytes | read | requests | bytes sent | ÷ array | rangeIgnored |");
console.log("|---|---|---|---|---|---|");
for (const cacheBytes of CACHES) {
  for (const how of ["a region per shard", "every chunk of a shard in one task", "every chunk, one read at a time", "a shard's chunks but its last, in one task"]) {
    sent = 0;
    requests = 0;
    const arr = await api.openArray(url, { cacheBytes, workers: false });
    for (let s = 0; s < SHARDS; s++) {
      if (how === "a region per shard") {
        const r = await arr.get([[s * SHARD, (s + 1) * SHARD]]);
        check(r.data, s * SHARD, `shard ${s}`);
      } else if (how === "every chunk, one read at a time") {
        const per = SHARD / INNER;
        for (let k = 0; k < per; k++) check((await arr.getChunk([s * per + k])).data, (s * per + k) * INNER, `chunk ${s * per + k}`);
      } else {
        const per = SHARD / INNER;
        const n = how === "every chunk of a shard in one task" ? per : per - 1;
        const got = await Promise.all(Array.from({ length: n }, (_, k) => arr.getChunk([s * per + k])));
        got.forEach((c, k) => check(c.data, (s * per + k) * INNER, `chunk ${s * per + k}`));
      }
    }
    const st = arr.stats();
    console.log(`| ${cacheBytes >> 20} MiB | ${how} | ${requests} | ${gib(sent)} GiB | ${(sent / total).toFixed(3)} | ${st.rangeIgnored} |`);
    arr.close();
  }
}
server.close();
