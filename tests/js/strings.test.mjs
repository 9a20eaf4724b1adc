// Fixed-length strings as text and as bytes (option `strings`), through the built package (pkg/)
// against the fixtures: HDF5 strings of each charset and padding and NetCDF `char` (h5py's and
// netCDF4-python's readings in tests/fixtures/expected/hdf5), Zarr `null_terminated_bytes`
// (zarr-python's). Every case is also read both ways by the shared suite (check-fixtures.mjs),
// in Node and in Chromium. Run: node --test tests/js/strings.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { startServer } from "../server.mjs";
import { loadManifests } from "./check-fixtures.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const fixturesDir = path.join(repo, "tests/fixtures");
const manifest = await loadManifests(async (rel) => JSON.parse(await fsp.readFile(path.join(fixturesDir, rel), "utf8")));
const pkgEntry = path.join(repo, "pkg/index.js");

/** @type {import("../../pkg/index.js")} */
let api;
let server;
let fx;

before(async () => {
  if (!fs.existsSync(pkgEntry)) throw new Error(`${pkgEntry} missing: run \`npm run build\` first`);
  api = await import(pathToFileURL(pkgEntry).href);
  server = await startServer({ root: { "/fixtures": path.join(fixturesDir, "data") } });
  fx = `${server.url}/fixtures`;
});

after(async () => {
  await server?.close();
});

const caseNamed = (name) => manifest.cases.find((c) => c.name === name) ?? assert.fail(`no case ${name}`);
const values = (rel) => JSON.parse(fs.readFileSync(path.join(fixturesDir, rel), "utf8")).values;
const bytesOf = (b64) => Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
const open = (c, options = {}) => api.openArray(`${fx}/${c.path}`, { ...(c.open ?? {}), ...options });
const whole = (c) => c.shape.map(() => null);
const stringCases = () => manifest.cases.filter((c) => c.dtype === "fixed_length_string");

test("the fixtures hold every charset and padding, and NetCDF char", () => {
  const kinds = new Set(stringCases().map((c) => `${c.stringType.charset}/${c.stringType.padding}`));
  for (const cs of ["ascii", "utf-8"]) for (const p of ["nullterm", "nullpad", "spacepad"]) assert.ok(kinds.has(`${cs}/${p}`), `${cs}/${p}`);
  assert.ok(stringCases().some((c) => c.features.includes("char")), "a NetCDF char case");
});

test("the writers' text is their bytes decoded as TextDecoder (UTF-8) and Latin-1 (ASCII) do", () => {
  // A check of the expected files by a third decoder: h5py's `asstr(errors="replace")` and
  // TextDecoder replace malformed UTF-8 alike.
  let n = 0;
  for (const c of stringCases()) {
    const text = values(c.expected);
    const raw = values(c.expectedBytes).map(bytesOf);
    raw.forEach((b, i) => {
      const decoded = c.stringType.charset === "utf-8" ? new TextDecoder().decode(b) : String.fromCharCode(...b);
      assert.equal(decoded, text[i], `${c.name} element ${i}`);
      n++;
    });
  }
  assert.ok(n >= 60, `${n} elements`);
});

test("HDF5 strings read as text by default, as bytes with strings: \"bytes\"", async () => {
  for (const name of ["str_utf8_nullterm", "str_utf8_nullpad", "str_ascii_spacepad", "str_ascii_nullterm"]) {
    const c = caseNamed(name);
    const a = await open(c);
    assert.equal(a.dtype, "fixed_length_string");
    assert.deepEqual(a.stringType, c.stringType);
    const got = await a.get(whole(c));
    assert.deepEqual(got.data, values(c.expected), name);
    a.close();
    const b = await open(c, { strings: "bytes" });
    assert.equal(b.dtype, "fixed_length_string", "the data type stays what the file says");
    const raw = await b.get(whole(c));
    assert.deepEqual(raw.data.map((x) => Buffer.from(x).toString("base64")), values(c.expectedBytes), `${name} as bytes`);
    assert.ok(raw.data.every((x) => x instanceof Uint8Array));
    b.close();
  }
  // What each padding keeps: an inner NUL (nullpad), leading spaces (spacepad), nothing after the
  // first NUL (nullterm); malformed UTF-8 as U+FFFD, an ASCII high byte as Latin-1.
  const one = async (name, i) => (await (await open(caseNamed(name))).get(whole(caseNamed(name)))).data[i];
  assert.equal(await one("str_ascii_nullpad", 1), "a\u0000b");
  assert.equal(await one("str_ascii_spacepad", 1), "  lead");
  assert.equal(await one("str_ascii_nullterm", 1), "be");
  assert.equal(await one("str_ascii_nullterm", 4), "caf\u00e9");
  assert.equal(await one("str_utf8_nullpad", 3), "\ufffd\ufffd\ufffd\ufffd");
  assert.equal(await one("str_utf8_spacepad", 1), "\u{1f30d} ");
});

test("an unwritten chunk reads as the fill value, as text or as bytes", async () => {
  const c = caseNamed("str_utf8_fill");
  const a = await open(c);
  assert.equal(a.fillValue, "f\u00efll");
  const chunk = await a.getChunk([1, 1]);
  assert.equal(chunk.data[0], "f\u00efll");
  const b = await open(c, { strings: "bytes" });
  assert.deepEqual(b.fillValue, new TextEncoder().encode("f\u00efll"));
  assert.deepEqual((await b.getChunk([1, 1])).data[0], new TextEncoder().encode("f\u00efll"));
  a.close();
  b.close();
});

test("NetCDF char: one character per element; rows joined from bytes decode as netCDF4's chartostring", async () => {
  const c = caseNamed("ncchar_name");
  const a = await open(c);
  assert.deepEqual(a.dimensionNames, ["station", "strlen"]);
  assert.deepEqual(a.stringType, { charset: "ascii", padding: "nullterm" });
  assert.deepEqual((await a.get([0, null])).data, ["a", "l", "p", "h", "a", ""]);
  // "café" was written as its UTF-8 bytes: per element (ASCII, byte by byte) two characters.
  assert.deepEqual((await a.get([3, null])).data, ["c", "a", "f", "\u00c3", "\u00a9", ""]);
  const b = await open(c, { strings: "bytes" });
  const row = (await b.get([3, null])).data;
  assert.equal(new TextDecoder().decode(Buffer.concat(row)), "caf\u00e9");
  a.close();
  b.close();
});

test("Zarr null_terminated_bytes stays bytes by default; strings: \"text\" decodes it as UTF-8", async () => {
  const cases = manifest.cases.filter((c) => c.dtype === "null_terminated_bytes");
  assert.ok(cases.length >= 2, "Zarr S cases");
  for (const c of cases) {
    const raw = values(c.expected).map(bytesOf);
    const a = await open(c);
    const got = await a.get(whole(c));
    assert.ok(got.data.every((x) => x instanceof Uint8Array), `${c.name}: bytes by default`);
    a.close();
    const t = await open(c, { strings: "text" });
    assert.equal(t.dtype, "null_terminated_bytes");
    assert.equal(t.stringType, null);
    const text = await t.get(whole(c));
    assert.deepEqual(text.data, raw.map((b) => new TextDecoder().decode(b)), c.name);
    assert.equal(typeof t.fillValue, "string", `${c.name}: the fill as text too`);
    t.close();
  }
});

test("strings leaves variable-length and UTF-32 text as it is", async () => {
  for (const dtype of ["string", "fixed_length_utf32"]) {
    const c = manifest.cases.find((x) => x.dtype === dtype) ?? assert.fail(dtype);
    const a = await open(c, { strings: "bytes" });
    const got = await a.get(whole(c));
    assert.deepEqual(got.data, values(c.expected), `${c.name} with strings: "bytes"`);
    a.close();
  }
});

test("an unknown strings value is InvalidSelection naming the option", async () => {
  const c = caseNamed("str_utf8_nullpad");
  await assert.rejects(open(c, { strings: "latin1" }), (e) => {
    assert.equal(e.code, "InvalidSelection");
    assert.match(e.message, /options\.strings must be "text" or "bytes"/);
    return true;
  });
});
