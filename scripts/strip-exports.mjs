#!/usr/bin/env node
// Remove exports from a wasm module, so that wasm-opt can drop what only they kept alive.
//   node scripts/strip-exports.mjs FILE PREFIX...
// The C zstd's Rust shims (malloc, qsort, …, `rust_zstd_wasm_shim_*`) are exported only because
// a cdylib exports every #[no_mangle] function; nothing outside the module calls them, and
// qsort alone (four instances of Rust's sort) is ~26 KB of code zstd's decoder never uses.
import fs from "node:fs";

const [file, ...prefixes] = process.argv.slice(2);
const wasm = fs.readFileSync(file);
const readLeb = (b, at) => {
  let v = 0;
  let shift = 0;
  let byte;
  do {
    byte = b[at++];
    v += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [v, at];
};
const leb = (v) => {
  const out = [];
  do {
    let byte = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) byte |= 0x80;
    out.push(byte);
  } while (v > 0);
  return Buffer.from(out);
};
const parts = [wasm.subarray(0, 8)];
let at = 8;
let removed = 0;
while (at < wasm.length) {
  const id = wasm[at];
  const [size, body] = readLeb(wasm, at + 1);
  const end = body + size;
  if (id !== 7) {
    parts.push(wasm.subarray(at, end));
    at = end;
    continue;
  }
  let [count, p] = readLeb(wasm, body);
  const kept = [];
  for (let i = 0; i < count; i++) {
    const start = p;
    const [len, name] = readLeb(wasm, p);
    const text = wasm.subarray(name, name + len).toString("utf8");
    p = name + len + 1; // kind
    [, p] = readLeb(wasm, p); // index
    if (prefixes.some((x) => text.startsWith(x))) removed++;
    else kept.push(wasm.subarray(start, p));
  }
  const content = Buffer.concat([leb(kept.length), ...kept]);
  parts.push(Buffer.from([7]), leb(content.length), content);
  at = end;
}
fs.writeFileSync(file, Buffer.concat(parts));
console.log(`[strip-exports] ${removed} exports removed from ${file}`);
