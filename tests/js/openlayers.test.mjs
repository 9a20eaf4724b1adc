// shardfetch/openlayers under OpenLayers itself (issue 45): tests/ol/app.js, ol 10.11's WebGLTile
// layer given the same COG through ol/source/GeoTIFF (geotiff.js) and through shardfetch's
// source, bundled by esbuild, drawn by headless Chromium's WebGL (software) at the same size and
// view; the screenshots are compared with each other and with the values GDAL wrote (the
// fixtures' manifest, read back by rasterio), and values read through the layer's getData.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../server.mjs";
import { bundleApp } from "./app-bundle.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";
import { decodePng } from "./png.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const app = path.join(root, "tests/ol");
const dist = path.join(app, "dist");
const fixtures = path.join(root, "tests/fixtures");
const manifest = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-tiff.json"), "utf8"));

/** A manifest case: its shape and the values rasterio read back (typed by dtype). */
function expected(name) {
  const c = manifest.cases.find((x) => x.name === name);
  const buf = fs.readFileSync(path.join(fixtures, c.expected));
  const T = { uint8: Uint8Array, float32: Float32Array }[c.dtype];
  return { ...c, values: new T(buf.buffer, buf.byteOffset, buf.byteLength / T.BYTES_PER_ELEMENT) };
}
const F32 = expected("gd_cog_f32_0"); // 180 × 200 float32, nodata -9999, EPSG:32633, 30 m
const RGB = expected("gd_cog_rgb_zstd_0"); // 3 × 150 × 130 uint8, no nodata

let browser;
let page;
let data;
before(async () => {
  assert.ok(fs.existsSync(path.join(app, "node_modules/ol/package.json")), "tests/ol dependencies (scripts/ensure-tools.sh)");
  // `shardfetch` as an installed package (node_modules/shardfetch → pkg/), bundled with ol;
  // symlinks kept, so that pkg/openlayers.js finds the app's `ol` (one instance of it).
  await bundleApp(app, root, { esbuild: ["--preserve-symlinks"] });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, "--force-color-profile=srgb"], headless: true });
  page = await startServer({ root: { "/app": dist } });
  data = await startServer({ root: { "/fixtures": fixtures } });
});
after(async () => {
  await browser?.close();
  await page?.close();
  await data?.close();
});

const url = (name) => `${data.url}/fixtures/data/tiff/${name}`;

/**
 * Draws `cfg` (app.js's: sources, size, resolution, …) with source `which` ("ol" or "sf");
 * `then(tab)` runs in the page before it closes. Returns { shot, info, out }.
 */
async function draw(which, cfg, then) {
  const [W, H] = cfg.size;
  const tab = await browser.newPage({ viewport: { width: W + 40, height: H + 40 } });
  const problems = [];
  tab.on("pageerror", (e) => problems.push(String(e)));
  try {
    const q = new URLSearchParams({ cfg: JSON.stringify({ ...cfg, which }) });
    const from = page.log.length;
    await tab.goto(`${page.url}/app/index.html?${q}`);
    await tab.waitForFunction(() => window.__drawn || window.__error, null, { timeout: 60000 });
    const err = await tab.evaluate(() => window.__error);
    if (err) return { error: err, problems };
    const shot = decodePng(await tab.locator("#map").screenshot());
    assert.deepEqual([shot.width, shot.height], [W, H]);
    const info = await tab.evaluate(() => window.__drawn);
    const out = then ? await then(tab) : undefined;
    // The wasm modules the page fetched (the raster module draws shardfetch's tiles).
    const wasm = page.log.slice(from).filter((e) => e.path.endsWith(".wasm")).map((e) => path.basename(e.path, ".wasm"));
    return { shot, info, out, wasm };
  } finally {
    await tab.close();
  }
}

/** Pixels (RGB) of `a` and `b` differing by more than 1; the largest difference. */
function compare(a, b) {
  let off = 0;
  let worst = 0;
  for (let i = 0; i < a.rgba.length; i += 4) {
    let d = 0;
    for (let k = 0; k < 3; k++) d = Math.max(d, Math.abs(a.rgba[i + k] - b.rgba[i + k]));
    worst = Math.max(worst, d);
    if (d > 1) off++;
  }
  return { off, worst };
}

/** Both sources draw `cfg`: the screenshots agree within one level (at most `allow` pixels not). */
async function same(label, cfg, allow = 0) {
  const ol = await draw("ol", cfg);
  const sf = await draw("sf", cfg);
  assert.equal(ol.error, undefined, `ol/source/GeoTIFF: ${JSON.stringify(ol.error)} ${ol.problems}`);
  assert.equal(sf.error, undefined, `shardfetch/openlayers: ${JSON.stringify(sf.error)} ${sf.problems}`);
  assert.equal(sf.wasm.filter((m) => m === "raster").length, 1, `shardfetch's page fetched ${sf.wasm}: the raster module once`);
  assert.deepEqual(sf.info.resolutions, ol.info.resolutions, "the tile grids' resolutions");
  assert.equal(sf.info.bandCount, ol.info.bandCount, "bands handed to WebGLTile");
  assert.equal(sf.info.projection, ol.info.projection);
  const { off, worst } = compare(ol.shot, sf.shot);
  const [W, H] = cfg.size;
  // Something is drawn: not a uniform screen.
  const lit = new Set();
  for (let i = 0; i < sf.shot.rgba.length; i += 4) lit.add(sf.shot.rgba[i] * 65536 + sf.shot.rgba[i + 1] * 256 + sf.shot.rgba[i + 2]);
  assert.ok(lit.size > 10, `${label}: ${lit.size} colours on screen`);
  console.log(`# ${label}: ${W}×${H} px, ${off} differ from ol/source/GeoTIFF's by more than one level (largest ${worst}); ${lit.size} colours`);
  assert.ok(off <= allow, `${label}: ${off} of ${W * H} pixels differ by more than one level (largest ${worst})`);
  return { ol, sf };
}

/** The screen at one screen pixel per image pixel against `want(x, y)` ([r, g, b] or null: transparent, black). */
function matchesValues(label, shot, want) {
  let off = 0;
  let worst = 0;
  for (let y = 0; y < shot.height; y++) {
    for (let x = 0; x < shot.width; x++) {
      const w = want(x, y) ?? [0, 0, 0];
      const i = (y * shot.width + x) * 4;
      let d = 0;
      for (let k = 0; k < 3; k++) d = Math.max(d, Math.abs(shot.rgba[i + k] - w[k]));
      worst = Math.max(worst, d);
      if (d > 1) off++;
    }
  }
  console.log(`# ${label}: ${shot.width}×${shot.height} px, ${off} differ from the writer's values by more than one level (largest ${worst})`);
  assert.equal(off, 0, `${label}: ${off} pixels differ (largest ${worst})`);
}

// ol/source/GeoTIFF's scaling: a Uint8Array takes 255 (v - min) / (max - min), clamped, truncated.
const grey = (v, lo, hi) => Math.trunc(Math.min(255, Math.max(0, (255 / (hi - lo)) * v - lo * (255 / (hi - lo)))));

test("float32 COG (nodata, EPSG:32633) at full resolution, nearest: same screen as ol/source/GeoTIFF, and GDAL's values", async () => {
  const [H, W] = F32.shape;
  const cfg = { sources: [{ url: url("gd_cog_f32.tif"), min: 268, max: 292 }], size: [W, H], resolution: 30, interpolate: false };
  const { sf } = await same("gd_cog_f32 level 0", cfg);
  assert.equal(sf.info.projection, "EPSG:32633");
  assert.equal(sf.info.units, "m");
  assert.equal(sf.info.bandCount, 2, "one band and the nodata alpha");
  assert.deepEqual(sf.info.resolutions, [120, 60, 30]);
  matchesValues("gd_cog_f32 by shardfetch/openlayers", sf.shot, (x, y) => {
    const g = grey(F32.values[y * W + x], 268, 292);
    return [g, g, g];
  });
});

test("float32 COG at its overviews and between levels (linear interpolation): same screen as ol/source/GeoTIFF", async () => {
  const src = [{ url: url("gd_cog_f32.tif"), min: 268, max: 292 }];
  await same("gd_cog_f32 at 60 m (overview 1)", { sources: src, size: [100, 90], resolution: 60, interpolate: false });
  await same("gd_cog_f32 at 120 m (overview 2), the image's edge in view", { sources: src, size: [90, 80], resolution: 120, interpolate: false });
  await same("gd_cog_f32 at 21 m, interpolated, off centre", { sources: src, size: [160, 120], resolution: 21, offset: [700, -500] });
});

test("RGB COG (zstd, pixel-interleaved): same screen as ol/source/GeoTIFF, and GDAL's values", async () => {
  const [C, H, W] = RGB.shape;
  const cfg = { sources: [{ url: url("gd_cog_rgb_zstd.tif") }], size: [W, H], resolution: 30, interpolate: false };
  const { sf } = await same("gd_cog_rgb_zstd level 0", cfg);
  assert.equal(sf.info.bandCount, C);
  matchesValues("gd_cog_rgb_zstd by shardfetch/openlayers", sf.shot, (x, y) => [0, 1, 2].map((c) => RGB.values[(c * H + y) * W + x]));
  await same("gd_cog_rgb_zstd at 120 m (overview 2, 37 × 32: not a power of two)", { sources: cfg.sources, size: [40, 44], resolution: 120, interpolate: false });
  await same("gd_cog_rgb_zstd at 45 m, interpolated", { sources: cfg.sources, size: [100, 110], resolution: 45 });
});

test("several URLs as bands (`bands` of each), and `min`/`max` per band: same screen as ol/source/GeoTIFF, GDAL's values", async () => {
  const [, H, W] = RGB.shape;
  const u = url("gd_cog_rgb_zstd.tif");
  // Blue, green, red from three sources; green stretched 60–120.
  const sources = [{ url: u, bands: [3] }, { url: u, bands: [2], min: [undefined, 60], max: [undefined, 120] }, { url: u, bands: [1] }];
  const { sf } = await same("three sources, one band each", { sources, size: [W, H], resolution: 30, interpolate: false });
  matchesValues("swapped bands by shardfetch/openlayers", sf.shot, (x, y) => {
    const v = (c) => RGB.values[(c * H + y) * W + x];
    return [v(2), grey(v(1), 60, 120), v(0)];
  });
});

test("the README's page: `view: source.getView()` (OpenLayers' fit of the source) gives the screen ol/source/GeoTIFF's does", async () => {
  await same("gd_cog_rgb_zstd in its own view", { sources: [{ url: url("gd_cog_rgb_zstd.tif") }], size: [300, 200] });
  await same("gd_cog_f32 in its own view", { sources: [{ url: url("gd_cog_f32.tif"), min: 268, max: 292 }], size: [256, 256] });
});

test("`nodata` given (a value the image holds): those pixels transparent, as in ol/source/GeoTIFF", async () => {
  const [H, W] = F32.shape;
  const v = F32.values[50 * W + 60];
  let n = 0;
  for (const x of F32.values) if (x === v) n++;
  assert.ok(n > 0 && n < W * H / 2);
  const cfg = { sources: [{ url: url("gd_cog_f32.tif"), min: 268, max: 292, nodata: v }], size: [W, H], resolution: 30, interpolate: false };
  const { sf } = await same(`gd_cog_f32 with nodata ${v} (${n} pixels)`, cfg);
  matchesValues("gd_cog_f32 with nodata by shardfetch/openlayers", sf.shot, (x, y) => {
    const val = F32.values[y * W + x];
    if (val === v) return null;
    const g = grey(val, 268, 292);
    return [g, g, g];
  });
});

test("`normalize: false`: the layer's getData gives the file's float32 values (and ol/source/GeoTIFF's)", async () => {
  const [H, W] = F32.shape;
  const pixels = [[0, 0], [199, 0], [0, 179], [123, 77], [61, 150], [199, 179]];
  const cfg = { sources: [{ url: url("gd_cog_f32.tif") }], size: [W, H], resolution: 30, interpolate: false, normalize: false };
  const get = (tab) => tab.evaluate((px) => window.__getData(px), pixels);
  const ol = await draw("ol", cfg, get);
  const sf = await draw("sf", cfg, get);
  assert.equal(sf.error, undefined, JSON.stringify(sf.error));
  assert.deepEqual(sf.out, ol.out);
  pixels.forEach(([x, y], k) => {
    // getData's row 0 is the screen's top.
    assert.deepEqual(sf.out[k], [F32.values[y * W + x], 255], `pixel ${x}, ${y}`);
  });
});

test("reprojected: EPSG:32633 (a UTM zone, which OpenLayers 10 knows) drawn in Web Mercator as ol/source/GeoTIFF draws it", async () => {
  const cfg = { sources: [{ url: url("gd_cog_rgb_zstd.tif") }], viewProjection: "EPSG:3857", size: [120, 120], resolution: 40, interpolate: false };
  const { sf } = await same("gd_cog_rgb_zstd reprojected to EPSG:3857", cfg);
  assert.equal(sf.info.projection, "EPSG:32633");
});

test("a missing file: the source's error is a ShardfetchError naming the URL", async () => {
  const u = url("no-such.tif");
  const r = await draw("sf", { sources: [{ url: u }], size: [50, 50], resolution: 30 });
  assert.ok(r.error, "an error");
  assert.equal(r.error.code, "NotFound", JSON.stringify(r.error));
  assert.ok(r.error.message.includes(u), r.error.message);
});

test("the package's entry does not load the adapter (nor ol)", () => {
  const index = fs.readFileSync(path.join(root, "pkg/index.js"), "utf8");
  for (const re of [/openlayers/, /from\s*["']ol[/"']/, /import\(\s*["'][^"']*openlayers/]) assert.ok(!re.test(index), `pkg/index.js matches ${re}`);
  const adapter = fs.readFileSync(path.join(root, "pkg/openlayers.js"), "utf8");
  // ol stays the page's: imported, not bundled.
  assert.match(adapter, /from "ol\/source\/DataTile\.js"/);
  assert.ok(!/class DataTileSource|class TileGrid/.test(adapter), "ol bundled into pkg/openlayers.js");
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "pkg/package.json"), "utf8"));
  assert.deepEqual(pkg.exports["./openlayers"], { types: "./openlayers.d.ts", import: "./openlayers.js" });
  assert.equal(pkg.peerDependenciesMeta.ol.optional, true);
});

test("a NetCDF-4 variable with 1-D lat/lon coordinates: EPSG:4326 from them, rows south-up flipped, _FillValue as alpha; netCDF4's values", async () => {
  // netcdf4.nc (netCDF4-python): lat -50…50 (6, increasing: stored south first), lon 0…315 (8);
  // var00 [time, lat, lon] float32 with _FillValue -999 at [0, 0, 0]; var03 [lat, lon] uint8.
  const hdf5 = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-hdf5.json"), "utf8")).cases;
  const load = (name, T) => {
    const c = hdf5.find((x) => x.name === name);
    const buf = fs.readFileSync(path.join(fixtures, c.expected));
    return new T(buf.buffer, buf.byteOffset, buf.byteLength / T.BYTES_PER_ELEMENT);
  };
  const [H, W] = [6, 8];
  // 1.25° a screen pixel (OpenLayers' EPSG:4326 views go no coarser than 360° / 256): a cell
  // (45° × 20°) is 36 × 16 pixels.
  const size = [W * 36, H * 16];
  const cell = (x, y) => [Math.floor(x / 36), H - 1 - Math.floor(y / 16)]; // [column, stored row]
  const nc = `${data.url}/fixtures/data/hdf5/netcdf4.nc`;

  const v3 = load("nc_var03", Uint8Array);
  const a = await draw("sf", { sources: [{ url: nc, path: "var03" }], size, resolution: 1.25, interpolate: false });
  assert.equal(a.error, undefined, JSON.stringify(a.error));
  assert.equal(a.info.projection, "EPSG:4326");
  assert.equal(a.info.bandCount, 1);
  matchesValues("netcdf4.nc var03 (uint8)", a.shot, (x, y) => {
    const [c, r] = cell(x, y);
    const v = v3[r * W + c];
    return [v, v, v];
  });

  const v0 = load("nc_var00", Float32Array);
  assert.equal(v0[0], -999);
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < H * W; i++) if (v0[i] !== -999) [lo, hi] = [Math.min(lo, v0[i]), Math.max(hi, v0[i])];
  const b = await draw("sf", { sources: [{ url: nc, path: "var00", bands: [1], min: lo, max: hi }], size, resolution: 1.25, interpolate: false });
  assert.equal(b.error, undefined, JSON.stringify(b.error));
  assert.equal(b.info.bandCount, 2, "time step 0 and the _FillValue alpha");
  matchesValues("netcdf4.nc var00 time 0 (float32, _FillValue)", b.shot, (x, y) => {
    const [c, r] = cell(x, y);
    const v = v0[r * W + c];
    if (v === -999) return null;
    const g = grey(v, lo, hi);
    return [g, g, g];
  });
});

test("a GeoZarr multiscale (zarr-python, spatial:/proj: conventions): levels as the grid, EPSG:32633 (a UTM zone: OpenLayers 10 knows them); the writer's values at each level", async () => {
  const gz = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-geozarr.json"), "utf8"));
  const level = (name, band) => {
    const l = gz.levels.find((x) => x.level === name && x.band === band);
    const buf = fs.readFileSync(path.join(fixtures, l.expected));
    return { ...l, values: new Uint16Array(buf.buffer, buf.byteOffset, buf.byteLength / 2) };
  };
  const u = `${data.url}/fixtures/data/${gz.path}`;
  const checks = [
    // b04: each level's own spatial:transform; b03: the root's spatial:bbox.
    ["b04", "r10m", 10],
    ["b04", "r20m", 20],
    ["b04", "r40m", 40],
    ["b03", "r20m", 20],
  ];
  for (const [band, name, resolution] of checks) {
    const l = level(name, band);
    const [H, W] = l.shape;
    const r = await draw("sf", { sources: [{ url: u, variable: band, min: 0, max: 4000 }], size: [W, H], resolution, interpolate: false });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.info.projection, "EPSG:32633");
    assert.deepEqual(r.info.resolutions, [40, 20, 10]);
    matchesValues(`GeoZarr ${band} ${name} at ${resolution} m`, r.shot, (x, y) => {
      const g = grey(l.values[y * W + x], 0, 4000);
      return [g, g, g];
    });
  }
  // The same image named by `path` under its parent's URL: its levels open under it.
  const l = level("r20m", "b04");
  const [H, W] = l.shape;
  const [dir, leaf] = [gz.path.split("/").slice(0, -1).join("/"), gz.path.split("/").pop()];
  const r = await draw("sf", { sources: [{ url: `${data.url}/fixtures/data/${dir}`, path: leaf, variable: "b04", min: 0, max: 4000 }], size: [W, H], resolution: 20, interpolate: false });
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  matchesValues("GeoZarr b04 r20m, the image by `path`", r.shot, (x, y) => {
    const g = grey(l.values[y * W + x], 0, 4000);
    return [g, g, g];
  });
});

test("a CRS OpenLayers does not know (EPSG:2056): drawn once the page registers it through proj4 or passes `projection`, else a typed error naming the URL", async () => {
  const gz = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-geozarr.json"), "utf8"));
  const ch = gz.lv95;
  const u = `${data.url}/fixtures/data/${ch.path}`;
  const [H, W] = ch.shape;
  const buf = fs.readFileSync(path.join(fixtures, ch.expected));
  const values = new Uint16Array(buf.buffer, buf.byteOffset, buf.byteLength / 2);
  const cfg = { sources: [{ url: u, min: 0, max: 4000 }], size: [W, H], resolution: ch.pixel, interpolate: false };
  const a = await draw("sf", cfg);
  assert.equal(a.error?.code, "UnsupportedFormat", JSON.stringify(a.error ?? a.info));
  assert.match(a.error.message, /EPSG:2056/);
  assert.ok(a.error.message.includes(u), a.error.message);
  assert.equal(a.error.url, u);
  const b = await draw("sf", { ...cfg, proj4: [[ch.code, ch.proj4]] });
  assert.equal(b.error, undefined, JSON.stringify(b.error));
  assert.equal(b.info.projection, "EPSG:2056");
  matchesValues("lv95.zarr through proj4", b.shot, (x, y) => {
    const g = grey(values[y * W + x], 0, 4000);
    return [g, g, g];
  });
  // Or the page passes `projection` itself (as to ol/source/GeoTIFF): used as given, the file's
  // code not looked up.
  const c = await draw("sf", { ...cfg, projection: { code: "LV95-as-given", units: "m" } });
  assert.equal(c.error, undefined, JSON.stringify(c.error));
  assert.equal(c.info.projection, "LV95-as-given");
  assert.equal(c.info.units, "m");
  matchesValues("lv95.zarr with `projection` given", c.shot, (x, y) => {
    const g = grey(values[y * W + x], 0, 4000);
    return [g, g, g];
  });
});

test("GeoZarr levels that are groups, without `variable`: a typed error naming the URL", async () => {
  const gz = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-geozarr.json"), "utf8"));
  const u = `${data.url}/fixtures/data/${gz.path}`;
  const b = await draw("sf", { sources: [{ url: u }], size: [50, 50], resolution: 10 });
  assert.equal(b.error?.code, "NotAnArray", JSON.stringify(b.error));
  assert.match(b.error.message, /variable/);
  assert.ok(b.error.message.includes(u), b.error.message);
});

test("tifffile's TIFFs without georeferencing (pixel grid): planar 3 × uint16, strips, float64 strips: same screen as ol/source/GeoTIFF", async () => {
  const range = (name) => {
    const c = manifest.cases.find((x) => x.name === name);
    const buf = fs.readFileSync(path.join(fixtures, c.expected));
    const T = { uint8: Uint8Array, uint16: Uint16Array, float64: Float64Array }[c.dtype];
    const v = new T(buf.buffer, buf.byteOffset, buf.byteLength / T.BYTES_PER_ELEMENT);
    let [lo, hi] = [Infinity, -Infinity];
    for (const x of v) [lo, hi] = [Math.min(lo, x), Math.max(hi, x)];
    return { ...c, values: v, lo, hi };
  };
  const p = range("tf_planar_zstd"); // [3, 70, 96], tiles 48 × 32 (read as 256 × 256, as ol/source/GeoTIFF reads them)
  const [, H, W] = p.shape;
  const { sf } = await same("tf_planar_zstd", { sources: [{ url: url("tf_planar_zstd.tif"), min: p.lo, max: p.hi }], size: [W, H], resolution: 1, interpolate: false });
  matchesValues("tf_planar_zstd by shardfetch/openlayers", sf.shot, (x, y) => [0, 1, 2].map((c) => grey(p.values[(c * H + y) * W + x], p.lo, p.hi)));
  for (const name of ["tf_u8_strips", "tf_f64_strips"]) {
    const c = range(name);
    const [h, w] = c.shape;
    await same(name, { sources: [{ url: url(`${name}.tif`), min: c.lo, max: c.hi }], size: [w, h], resolution: 1, interpolate: false });
  }
});

test("a JPEG (YCbCr) COG: RGB, within JPEG decoders' 4 levels of ol/source/GeoTIFF's `convertToRGB: true` and of GDAL's decoding", async () => {
  const c = expected("gd_cog_jpeg_rgb_0");
  const [, H, W] = c.shape;
  const tol = c.tolerance; // 4: libjpeg (GDAL), zune-jpeg (shardfetch) and geotiff.js's decoder round apart
  const cfg = { sources: [{ url: url("gd_cog_jpeg_rgb.tif") }], size: [W, H], resolution: 30, interpolate: false, convertToRGB: true };
  const ol = await draw("ol", cfg);
  const sf = await draw("sf", cfg);
  assert.equal(sf.error, undefined, JSON.stringify(sf.error));
  let worstOl = 0;
  let worstGdal = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 4;
      for (let k = 0; k < 3; k++) {
        worstOl = Math.max(worstOl, Math.abs(sf.shot.rgba[i + k] - ol.shot.rgba[i + k]));
        worstGdal = Math.max(worstGdal, Math.abs(sf.shot.rgba[i + k] - c.values[(k * H + y) * W + x]));
      }
    }
  }
  console.log(`# gd_cog_jpeg_rgb: largest difference ${worstOl} from ol/source/GeoTIFF (convertToRGB), ${worstGdal} from GDAL's values`);
  assert.ok(worstOl <= tol, `${worstOl} levels from ol/source/GeoTIFF's`);
  assert.ok(worstGdal <= tol, `${worstGdal} levels from GDAL's`);
});

test("pkg/openlayers.d.ts type-checks against ol 10.11's own types (the package builds against a shim of them)", async () => {
  const os = await import("node:os");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sf-ol-types-"));
  try {
    fs.mkdirSync(path.join(dir, "node_modules"));
    for (const d of fs.readdirSync(path.join(app, "node_modules"))) {
      if (d === "shardfetch" || d.startsWith(".")) continue;
      fs.symlinkSync(path.join(app, "node_modules", d), path.join(dir, "node_modules", d), "dir");
    }
    fs.symlinkSync(path.join(root, "pkg"), path.join(dir, "node_modules/shardfetch"), "dir");
    fs.writeFileSync(
      path.join(dir, "main.ts"),
      [
        'import Map from "ol/Map.js";',
        'import TileLayer from "ol/layer/WebGLTile.js";',
        'import { ShardfetchSource } from "shardfetch/openlayers";',
        'const source = new ShardfetchSource({ sources: [{ url: "https://host/scene.tif", min: 0, max: 3000 }], normalize: true });',
        'new Map({ target: "map", layers: [new TileLayer({ source })], view: source.getView() });',
        "const e: Error | null = source.getError();",
        "void e;",
        "",
      ].join("\n"),
    );
    const tsconfig = { compilerOptions: { target: "ES2022", module: "ES2022", moduleResolution: "bundler", strict: true, noEmit: true, lib: ["ESNext", "DOM"], types: [], preserveSymlinks: true }, files: ["main.ts"] };
    fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify(tsconfig));
    const r = await promisify(execFile)(path.join(root, "node_modules/.bin/tsc"), ["-p", dir]).catch((e) => e);
    assert.equal(r.code ?? 0, 0, `tsc: ${r.stdout}${r.stderr}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
