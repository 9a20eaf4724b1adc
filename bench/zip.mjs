// Stored zip archives of the bench datasets (`bench/run.mjs --layout zip`): each store zipped
// as Python's zipfile writes a ZIP_STORED archive (no compression, no data descriptors), its
// root zarr.json first — what zarr-python's ZipStore and OME's .ozx lay out. Written once,
// next to the store: bench/data/<name>.zarr.zip.
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";

function files(dir, base = dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) files(p, base, out);
    else if (e.name !== "bench.json") out.push(path.relative(base, p).split(path.sep).join("/"));
  }
  return out;
}

/** Zip the store `dir` into `file` (stored entries), unless it is there already. */
export function zipStore(dir, file) {
  if (fs.existsSync(file)) return file;
  const names = files(dir).sort((a, b) => (a === "zarr.json" ? -1 : b === "zarr.json" ? 1 : a < b ? -1 : 1));
  const parts = [];
  const central = [];
  let at = 0;
  for (const name of names) {
    const body = fs.readFileSync(path.join(dir, name));
    const n = Buffer.from(name);
    const crc = zlib.crc32(body) >>> 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(body.length, 22);
    local.writeUInt16LE(n.length, 26);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(body.length, 20);
    c.writeUInt32LE(body.length, 24);
    c.writeUInt16LE(n.length, 28);
    c.writeUInt32LE(at, 42);
    parts.push(local, n, body);
    central.push(c, n);
    at += 30 + n.length + body.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(names.length, 8);
  end.writeUInt16LE(names.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(at, 16);
  fs.writeFileSync(file, Buffer.concat([...parts, cd, end]));
  return file;
}
