// shardfetch/h5web (issue 45): h5web's data provider. In Node, ShardfetchApi's entities and
// values against what h5py/netCDF4 (NetCDF-3: netCDF4/SciPy) wrote in the fixtures' manifests;
// in headless Chromium, h5web's own <App> (@h5web/app 17.0.0, tests/h5web, bundled by esbuild)
// browsing a NetCDF-4 and a NetCDF-3 file served by range: its tree in the DOM, and its heatmap's
// pixels against the writer's values through h5web's colour map (Viridis over [min, max]).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "../server.mjs";
import { bundleApp } from "./app-bundle.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";
import { decodePng } from "./png.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const app = path.join(root, "tests/h5web");
const dist = path.join(app, "dist");
const fixtures = path.join(root, "tests/fixtures");
const hdf5 = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-hdf5.json"), "utf8"));
const nc3 = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-netcdf3.json"), "utf8"));
const { ShardfetchApi } = await import(path.join(root, "pkg/h5web.js"));

let data;
before(async () => {
  data = await startServer({ root: { "/fixtures": fixtures } });
});
after(async () => {
  await data?.close();
});

const fileUrl = (p) => `${data.url}/fixtures/data/${p}`;

const CTORS = {
  bool: Uint8Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
  int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, complex64: Float32Array, complex128: Float64Array,
};
/** h5web's type class of each data type, as h5wasm's provider gives it for the same dataset. */
const CLASS = {
  bool: "Boolean", int8: "Integer", uint8: "Integer", int16: "Integer", uint16: "Integer", int32: "Integer",
  uint32: "Integer", int64: "Integer", uint64: "Integer", float16: "Float", float32: "Float", float64: "Float",
  complex64: "Complex", complex128: "Complex", fixed_length_string: "String", structured: "Compound",
};

/** An IEEE half's value. */
function half(bits) {
  const e = (bits >> 10) & 31;
  const m = bits & 1023;
  const s = bits & 0x8000 ? -1 : 1;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** The writer's values of `c`, flat in C order, as h5web wants them (see h5web.ts). */
function expectedOf(c) {
  const file = path.join(fixtures, c.expected);
  if (c.dtype === "fixed_length_string") return JSON.parse(fs.readFileSync(file, "utf8")).values;
  const buf = fs.readFileSync(file);
  const raw = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const a = new CTORS[c.dtype](raw);
  if (c.dtype === "float16") return Float32Array.from(a, half);
  if (c.dtype.startsWith("complex")) return Array.from({ length: a.length / 2 }, (_, i) => [a[2 * i], a[2 * i + 1]]);
  return a;
}

/** Elements `[k * n, (k + 1) * n)` of a flat value (a typed array or a list). */
const slab = (v, k, n) => (Array.isArray(v) ? v.slice(k * n, (k + 1) * n) : v.subarray(k * n, (k + 1) * n));

// Every dataset of the NetCDF-4 / HDF5 files h5web users open (netCDF4, h5netcdf, xarray, h5py
// types and strings) and every NetCDF-3 variable with a plain type.
const CASES = [
  ...hdf5.cases.filter((c) =>
    ["hdf5/netcdf4.nc", "hdf5/h5netcdf.nc", "hdf5/xarray.nc", "hdf5/nc_char.nc", "hdf5/types_latest.h5", "hdf5/strings.h5"].includes(c.path) &&
    c.dtype !== "structured",
  ),
  ...nc3.cases.filter((c) => c.expected && CLASS[c.dtype]),
];

test("ShardfetchApi.getEntity: each variable of NetCDF-4, HDF5 and NetCDF-3 files is h5web's dataset (shape, type class), listed by its group", async () => {
  let checked = 0;
  const apis = new Map();
  for (const c of CASES) {
    if (!apis.has(c.path)) apis.set(c.path, new ShardfetchApi(fileUrl(c.path)));
    const api = apis.get(c.path);
    const p = `/${c.open.path}`;
    const e = await api.getEntity(p);
    assert.equal(e.kind, "dataset", p);
    assert.equal(e.path, p);
    assert.equal(e.name, p.split("/").pop());
    assert.deepEqual(e.shape, c.shape.length ? { class: "Array", dims: c.shape } : { class: "Scalar", dims: [] }, `${c.name} shape`);
    const enumerated = c.name.endsWith("t_enum");
    assert.equal(e.type.class, enumerated ? "Enumeration" : CLASS[c.dtype], `${c.name} type`);
    if (e.type.class === "Integer") assert.equal(e.type.signed, c.dtype.startsWith("int"), c.name);
    if (e.type.class === "Integer" || e.type.class === "Float") assert.equal(e.type.size, Number(c.dtype.replace(/\D/g, "")), c.name);
    if (c.stringType) assert.equal(e.type.charSet, c.stringType.charset === "utf-8" ? "UTF-8" : "ASCII", c.name);
    if (c.dimensionNames?.length) assert.deepEqual(e.rawType.dimensionNames, c.dimensionNames, c.name);
    // The parent group lists it, with the same description (h5web caches children as given).
    const parent = p.slice(0, p.lastIndexOf("/")) || "/";
    const g = await api.getEntity(parent);
    assert.equal(g.kind, "group");
    assert.deepEqual(g.children.find((x) => x.path === p), e, `${c.name} in ${parent}`);
    checked++;
  }
  for (const a of apis.values()) await a.close();
  console.log(`# ${checked} datasets of ${apis.size} files described as h5web's entities`);
  assert.ok(checked >= 60, `${checked} datasets checked`);
});

test("ShardfetchApi.getValue: whole datasets and h5web's selections ('k,:,:') are the writer's values", async () => {
  let checked = 0;
  const apis = new Map();
  for (const c of CASES) {
    if (!apis.has(c.path)) apis.set(c.path, new ShardfetchApi(fileUrl(c.path)));
    const api = apis.get(c.path);
    const dataset = await api.getEntity(`/${c.open.path}`);
    const want = expectedOf(c);
    const whole = await api.getValue({ dataset });
    if (c.shape.length) assert.deepEqual(whole, want, `${c.name} whole`);
    else assert.deepEqual(whole, want[0], `${c.name} scalar`);
    checked++;
    if (c.shape.length >= 2 && c.shape[0] > 1) {
      // The last index of the first axis, the others whole: what h5web asks for a slice.
      const k = c.shape[0] - 1;
      const n = c.shape.slice(1).reduce((x, y) => x * y, 1);
      const selection = [String(k), ...c.shape.slice(1).map(() => ":")].join(",");
      assert.deepEqual(await api.getValue({ dataset, selection }), slab(want, k, n), `${c.name} at ${selection}`);
      checked++;
    }
    if (c.shape.length >= 1 && c.shape.every((d) => d > 0)) {
      // One element (h5web's scalar selection): the value itself, not a list of one.
      const selection = c.shape.map(() => "0").join(",");
      assert.deepEqual(await api.getValue({ dataset, selection }), want[0], `${c.name} at ${selection}`);
      checked++;
    }
  }
  for (const a of apis.values()) await a.close();
  console.log(`# ${checked} values read through ShardfetchApi equal the writers'`);
  assert.ok(checked >= 150, `${checked} values checked`);
});

test("ShardfetchApi({ h5webVersion: 16 }): h5web 16's entities, shapes as plain dims (its Shape), the values alike", async () => {
  const api = new ShardfetchApi(fileUrl("netcdf3/nc3_classic.nc"), { h5webVersion: 16 });
  const root = await api.getEntity("/");
  const c = nc3.cases.find((x) => x.path === "netcdf3/nc3_classic.nc" && x.open.path === "temp");
  const temp = root.children.find((x) => x.name === "temp");
  assert.deepEqual(temp.shape, c.shape);
  assert.deepEqual(root.children.find((x) => x.name === "scalar").shape, []);
  assert.deepEqual(root.attributes.find((a) => a.name === "ints").shape, [3]);
  assert.deepEqual(root.attributes.find((a) => a.name === "title").shape, []);
  assert.deepEqual(await api.getValue({ dataset: temp, selection: "2,:,:" }), slab(expectedOf(c), 2, 48));
  await api.close();
});

test("ShardfetchApi: a compound dataset's elements are h5web's compound values (one value per field)", async () => {
  const api = new ShardfetchApi(fileUrl("hdf5/types_latest.h5"));
  const c = hdf5.cases.find((x) => x.name === "types_latest_t_compound");
  const e = await api.getEntity("/t_compound");
  assert.equal(e.type.class, "Compound");
  assert.deepEqual([...e.type.fields.keys()], ["x", "y", "tag"]);
  assert.deepEqual([...e.type.fields.values()].map((t) => t.class), ["Integer", "Float", "String"]);
  // h5py's bytes: x int32 at 0, y float64 at 4, tag S3 at 12 (15 bytes an element).
  const b = fs.readFileSync(path.join(fixtures, c.expected));
  const want = Array.from({ length: c.shape[0] }, (_, i) => {
    const o = i * 15;
    const tag = b.subarray(o + 12, o + 15);
    return [b.readInt32LE(o), b.readDoubleLE(o + 4), tag.subarray(0, tag.indexOf(0) < 0 ? 3 : tag.indexOf(0)).toString("latin1")];
  });
  assert.deepEqual(await api.getValue({ dataset: e }), want);
  await api.close();
});

test("ShardfetchApi: attributes (NetCDF-3 and NetCDF-4) as the writer wrote them, typed for h5web", async () => {
  let checked = 0;
  for (const g of nc3.groups) {
    const api = new ShardfetchApi(fileUrl(g.path));
    const e = await api.getEntity("/");
    assert.equal(e.kind, "group");
    assert.deepEqual(Object.fromEntries(e.children.map((x) => [x.name, x.kind === "dataset" ? "array" : x.kind])), g.children, g.path);
    assert.deepEqual(await api.getAttrValues(e), g.attributes, g.path);
    assert.deepEqual(e.attributes.map((a) => a.name), Object.keys(g.attributes));
    checked++;
    await api.close();
  }
  const api = new ShardfetchApi(fileUrl("netcdf3/nc3_classic.nc"));
  const root = await api.getEntity("/");
  const type = (name) => root.attributes.find((a) => a.name === name);
  assert.deepEqual(type("title"), { name: "title", shape: { class: "Scalar", dims: [] }, type: { class: "String", charSet: "UTF-8", strPad: undefined } });
  assert.deepEqual(type("ints").shape, { class: "Array", dims: [3] });
  assert.equal(type("ints").type.class, "Integer");
  assert.equal(type("half").type.class, "Float"); // [0.5]
  for (const c of nc3.cases.filter((x) => x.path === "netcdf3/nc3_classic.nc" && x.attributes)) {
    assert.deepEqual(await api.getAttrValues(await api.getEntity(`/${c.open.path}`)), c.attributes, c.name);
    checked++;
  }
  // NetCDF-4: -999.0 stays a float (JSON.parse would call it an integer).
  const nc4 = new ShardfetchApi(fileUrl("hdf5/netcdf4.nc"));
  const var00 = await nc4.getEntity("/var00");
  assert.equal(var00.attributes.find((a) => a.name === "_FillValue").type.class, "Float");
  assert.deepEqual((await nc4.getAttrValues(var00))._FillValue, [-999]);
  assert.equal(var00.attributes.find((a) => a.name === "long_name").type.class, "String");
  await api.close();
  await nc4.close();
  assert.ok(checked >= 10, `${checked} attribute sets checked`);
});

test("ShardfetchApi.getSearchablePaths lists the nested groups' datasets; an unknown path is a typed error naming the file", async () => {
  const api = new ShardfetchApi(fileUrl("hdf5/netcdf4.nc"));
  const paths = await api.getSearchablePaths("/");
  for (const c of hdf5.cases.filter((x) => x.path === "hdf5/netcdf4.nc")) assert.ok(paths.includes(`/${c.open.path}`), c.open.path);
  assert.ok(paths.includes("/forecast"));
  await assert.rejects(api.getEntity("/no_such_variable"), (e) => e.name === "ShardfetchError" && e.code === "NotFound" && e.message.includes("netcdf4.nc"));
  await api.close();
});

test("ShardfetchApi over a Zarr v3 group with consolidated metadata: every array listed, searchable, and read as zarr-python wrote it", async () => {
  const containers = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-containers.json"), "utf8"));
  const cases = containers.cases.filter((c) => c.path === "containers/consolidated_v3.zarr" && CTORS[c.dtype]);
  const api = new ShardfetchApi(fileUrl("containers/consolidated_v3.zarr"));
  const paths = await api.getSearchablePaths("/");
  for (const c of cases) {
    assert.ok(paths.includes(`/${c.open.path}`), c.name);
    const dataset = await api.getEntity(`/${c.open.path}`);
    assert.deepEqual(dataset.shape.dims, c.shape, c.name);
    assert.deepEqual(await api.getValue({ dataset }), expectedOf(c), c.name);
  }
  assert.ok(cases.length >= 10, `${cases.length} arrays checked`);
  await api.close();
});

test("ShardfetchApi.getValue honours h5web's cancellation: an aborted read rejects with the signal's reason", async () => {
  // A slow link, so that the read is under way when it is aborted; a file whose last records lie
  // past the first 64 KiB read with the header (a request of their own).
  const slow = await startServer({ root: { "/fixtures": fixtures }, link: { latencyMs: 300, mbps: 1 } });
  try {
    const api = new ShardfetchApi(`${slow.url}/fixtures/data/netcdf3/nc3_long.nc`);
    const dataset = await api.getEntity("/temp");
    const c = nc3.cases.find((x) => x.name === "nc3_long_temp" || (x.path === "netcdf3/nc3_long.nc" && x.open.path === "temp"));
    const n = slow.log.length;
    class AbortError extends Error {
      name = "AbortError";
    }
    // Aborted before the call.
    const before = new AbortController();
    before.abort(new AbortError("gone"));
    await assert.rejects(api.getValue({ dataset, selection: "0,:,:" }, before.signal), (e) => e === before.signal.reason);
    assert.equal(slow.log.length, n, "a read aborted before the call asks for nothing");
    // Aborted while its record is on the way: once the server has its request (logged as it
    // arrives; the answer is 300 ms away), not after a guessed delay.
    const during = new AbortController();
    const read = api.getValue({ dataset, selection: "3,:,:" }, during.signal);
    read.catch(() => undefined);
    for (const t0 = Date.now(); slow.log.length === n; ) {
      assert.ok(Date.now() - t0 < 30_000, "the read never asked for its record");
      await new Promise((r) => setTimeout(r, 2));
    }
    during.abort(new AbortError("moved on"));
    await assert.rejects(read, (e) => e === during.signal.reason);
    // The provider still reads afterwards.
    assert.deepEqual(await api.getValue({ dataset, selection: "3,:,:" }), slab(expectedOf(c), 3, 20));
    await api.close();
  } finally {
    await slow.close();
  }
});

test("shardfetch/h5web is an entry of its own: exported, importing only the package's entry, and no file of the core imports it", async () => {
  const pkg = path.join(root, "pkg");
  const manifest = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8"));
  assert.deepEqual(manifest.exports["./h5web"], { types: "./h5web.d.ts", import: "./h5web.js" });
  assert.equal(manifest.peerDependenciesMeta["@h5web/app"].optional, true);
  const entry = fs.readFileSync(path.join(pkg, "h5web.js"), "utf8");
  const imports = [...entry.matchAll(/^import\b[^;]*?from\s*"([^"]+)"/gm)].map((m) => m[1]);
  assert.deepEqual(imports, ["./index.js"]);
  for (const f of ["index.js", "worker.js", "warm.js"]) {
    assert.ok(!fs.readFileSync(path.join(pkg, f), "utf8").includes("h5web"), `${f} mentions h5web`);
  }
  const gz = (await import("node:zlib")).gzipSync(entry, { level: 9 }).length;
  console.log(`# pkg/h5web.js: ${entry.length} bytes, ${gz} gzipped`);
  assert.ok(gz < 8000, `${gz} bytes gzipped`);
});

// ---- h5web's <App> in headless Chromium ----

let browser;
async function chromium() {
  if (browser) return browser;
  const { chromium: pw } = await import("playwright-core");
  assert.ok(fs.existsSync(path.join(app, "node_modules/@h5web/app")), "tests/h5web dependencies (scripts/ensure-tools.sh)");
  // `shardfetch` as an installed package (node_modules/shardfetch → pkg/), bundled with h5web.
  await bundleApp(app, root, { esbuild: ["--minify", "--define:process.env.NODE_ENV=\"production\""] });
  browser = await pw.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, "--force-color-profile=srgb"], headless: true });
  return browser;
}
after(async () => {
  await browser?.close();
});

/** h5web's colour of `t` in [0, 1]: d3's Viridis (h5web samples it 256 times into its colour map). */
async function viridis() {
  const { interpolateViridis } = await import(path.join(app, "node_modules/d3-scale-chromatic/src/index.js"));
  const { rgb } = await import(path.join(app, "node_modules/d3-color/src/index.js"));
  return (t) => {
    const c = rgb(interpolateViridis(Math.round(t * 255) / 255));
    return [c.r, c.g, c.b];
  };
}

/**
 * Opens `file` at `entity` in h5web's <App>; checks the tree shows `names`, the heatmap's cells
 * are `values` (rows × cols, row 0 at the bottom as h5web draws it) through Viridis over their
 * [min, max], and the colour bar's ends are min and max; values outside `valid` (CF
 * `valid_range`, which h5web honours) are not drawn. Returns what h5web read.
 */
async function heatmapMatches(file, entity, names, values, [rows, cols], valid = [-Infinity, Infinity]) {
  const b = await chromium();
  const page = await startServer({ root: { "/app": dist } });
  const tab = await b.newPage({ viewport: { width: 1000, height: 700 } });
  const problems = [];
  tab.on("pageerror", (e) => problems.push(String(e)));
  try {
    const q = new URLSearchParams({ url: fileUrl(file), path: entity });
    await tab.goto(`${page.url}/app/index.html?${q}`);
    // The heatmap is drawn once the canvas holds the colour map's colours (WebGL through SwiftShader).
    const canvas = tab.locator("canvas");
    let shot;
    let box;
    for (let i = 0; i < 120; i++) {
      const err = await tab.evaluate(() => window.__error);
      assert.equal(err, undefined, `${err} ${problems.join(" | ")}`);
      if ((await canvas.count()) === 1) {
        shot = decodePng(await canvas.screenshot());
        box = colouredBox(shot);
        if (box && (await tab.evaluate(() => window.__values.length)) > 0) break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(box, `no heatmap drawn ${problems.join(" | ")}`);
    // Drawn twice over (a frame after the values came): the last one is what is checked.
    await new Promise((r) => setTimeout(r, 500));
    shot = decodePng(await canvas.screenshot());
    box = colouredBox(shot);

    const text = await tab.evaluate(() => document.body.innerText);
    const missing = names.filter((n) => !text.split("\n").includes(n));
    assert.deepEqual(missing, [], "entities missing from h5web's tree");

    let lo = Infinity;
    let hi = -Infinity;
    const shown = (v) => v >= valid[0] && v <= valid[1];
    for (const v of values.filter(shown)) {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
    const colour = await viridis();
    const cw = (box.x1 - box.x0) / cols;
    const ch = (box.y1 - box.y0) / rows;
    assert.ok(Math.abs(cw - ch) < 2, `cells ${cw} × ${ch} px: h5web keeps them square`);
    let worst = 0;
    let off = 0;
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        const x = Math.floor(box.x0 + (j + 0.5) * cw);
        const y = Math.floor(box.y1 - (i + 0.5) * ch);
        const v = values[i * cols + j];
        const at = (y * shot.width + x) * 4;
        const got = [0, 1, 2].map((k) => shot.rgba[at + k]);
        // Not drawn: the page's grey (no colour), else the colour map's colour of the value.
        const d = shown(v) ? Math.max(...colour((v - lo) / (hi - lo)).map((w, k) => Math.abs(got[k] - w))) : Math.max(...got) - Math.min(...got);
        worst = Math.max(worst, d);
        if (d > 4) off++;
      }
    }
    console.log(`# h5web drew ${file}${entity} as ${cols}×${rows} cells of ${cw.toFixed(1)} px: ${off} differ from the writer's values through Viridis by more than 4 (largest difference ${worst})`);
    assert.equal(off, 0, `${off} of ${rows * cols} cells differ`);

    // The colour bar's ends: the domain h5web computed from the values it was given.
    const ends = await tab.evaluate(() =>
      [...document.querySelectorAll("body *")]
        // (h5web writes a minus as U+2212.)
        .map((e) => (e.children.length === 0 ? e.textContent.trim().replace("\u2212", "-") : ""))
        .filter((t) => /^[-+]?\d+(\.\d+)?e[-+]\d+$/.test(t))
        .map(Number),
    );
    assert.equal(new Set(ends).size, 2, `colour bar ends: ${ends}`);
    const close = (a, want) => Math.abs(a - want) <= 0.006 * Math.max(1, Math.abs(want));
    assert.ok(close(Math.min(...ends), lo) && close(Math.max(...ends), hi), `colour bar ${ends}, values in [${lo}, ${hi}]`);
    return await tab.evaluate(() => window.__values);
  } finally {
    await tab.close();
    await page.close();
  }
}

/** The bounding box of the colour-mapped pixels (Viridis is never grey: the grid and the page are). */
function colouredBox({ width, height, rgba }) {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -1;
  let y1 = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      const r = rgba[o];
      const g = rgba[o + 1];
      const bl = rgba[o + 2];
      if (Math.max(r, g, bl) - Math.min(r, g, bl) > 40) {
        x0 = Math.min(x0, x);
        y0 = Math.min(y0, y);
        x1 = Math.max(x1, x + 1);
        y1 = Math.max(y1, y + 1);
      }
    }
  }
  return x1 < 0 ? null : { x0, y0, x1, y1 };
}

test("h5web's <App> browses a NetCDF-4 file through shardfetch/h5web: its tree, and a 2-D variable's heatmap in the writer's values", async () => {
  const cases = hdf5.cases.filter((c) => c.path === "hdf5/netcdf4.nc");
  const c = cases.find((x) => x.open.path === "var02");
  const names = [...new Set(cases.map((x) => x.open.path.split("/")[0]))]; // var00…, forecast
  const read = await heatmapMatches("hdf5/netcdf4.nc", "/var02", names, expectedOf(c), c.shape);
  assert.deepEqual(read, [{ path: "/var02", selection: null, length: 48 }]);
});

test("h5web's <App> shows a slice of a 3-D NetCDF-4 variable in a group: h5web's selection '0,:,:' read by range", async () => {
  const c = hdf5.cases.find((x) => x.path === "hdf5/netcdf4.nc" && x.open.path === "forecast/precip");
  const [, rows, cols] = c.shape;
  const read = await heatmapMatches("hdf5/netcdf4.nc", "/forecast/precip", ["precip", "step"], slab(expectedOf(c), 0, rows * cols), [rows, cols]);
  assert.deepEqual(read, [{ path: "/forecast/precip", selection: "0,:,:", length: rows * cols }]);
});

test("h5web's <App> shows a NetCDF-3 variable through shardfetch/h5web: the heatmap of its first record, its valid_range applied", async () => {
  const cases = nc3.cases.filter((x) => x.path === "netcdf3/nc3_classic.nc");
  const c = cases.find((x) => x.open.path === "temp");
  const [, rows, cols] = c.shape;
  const read = await heatmapMatches("netcdf3/nc3_classic.nc", "/temp", cases.map((x) => x.open.path), slab(expectedOf(c), 0, rows * cols), [rows, cols], c.attributes.valid_range);
  assert.deepEqual(read.at(-1), { path: "/temp", selection: "0,:,:", length: rows * cols });
});
