// shardfetch/maplibre (issue 45): its tiles in Node against rasterio's values, then MapLibre GL JS
// 6.20 itself (tests/maplibre/app.js, bundled by esbuild) drawing them in headless Chromium's
// WebGL (SwiftShader): screen pixels against the values GDAL wrote (manifest-maplibre.json),
// through the colour map; and a grid other than Web Mercator's as MapLibre's error, naming it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import { chromium } from "playwright-core";
import { startServer } from "../server.mjs";
import { bundleApp } from "./app-bundle.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";
import { decodePng } from "./png.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const app = path.join(root, "tests/maplibre");
const dist = path.join(app, "dist");
const fixtures = path.join(root, "tests/fixtures");
const manifest = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-maplibre.json"), "utf8"));
const HALF = Math.PI * 6378137;

/** A fixture case's levels, each with its values (Uint16Array / Uint8Array, [band, y, x]). */
function fixture(name) {
  const c = manifest.cases.find((x) => x.name === name);
  assert.ok(c, name);
  const T = c.dtype === "uint16" ? Uint16Array : Uint8Array;
  const levels = c.levels.map((l) => {
    const buf = fs.readFileSync(path.join(fixtures, l.expected));
    const [H, W] = l.shape.slice(-2);
    // The level's corner in pixels of its zoom's world.
    const px = Math.round((l.geotransform[0] + HALF) / l.geotransform[1]);
    const py = Math.round((HALF - l.geotransform[3]) / l.geotransform[1]);
    return { ...l, H, W, px, py, values: new T(buf.buffer, buf.byteOffset, buf.byteLength / T.BYTES_PER_ELEMENT) };
  });
  return { ...c, levels };
}

/**
 * The value of band `b` at world pixel (`wx`, `wy`) of zoom `z` as GDAL wrote it, sampled as a
 * tile there is: the level at `z`'s resolution or the finest (nearest), undefined outside.
 */
function valueAt(fx, z, wx, wy, b = 0) {
  const l = fx.levels.find((v) => v.zoom === z) ?? fx.levels[0];
  const s = 2 ** (l.zoom - z);
  const col = Math.floor((wx + 0.5) * s) - l.px;
  const row = Math.floor((wy + 0.5) * s) - l.py;
  if (col < 0 || row < 0 || col >= l.W || row >= l.H) return undefined;
  return l.values[(b * l.H + row) * l.W + col];
}

/** Colour map `name` as the entry defines it (9 stops of matplotlib's, linear between). */
let colorAt;
/** The colour of `v` between `lo` and `hi`: the entry draws 256 steps of the colour map. */
const colour = (name, v, lo, hi) => colorAt(name, Math.round(Math.min(1, Math.max(0, (v - lo) / (hi - lo))) * 255) / 255);

let browser;
let data;
let pkg;
before(async () => {
  pkg = await import(path.join(root, "pkg/maplibre.js"));
  colorAt = pkg.colorAt;
  data = await startServer({ root: { "/fixtures": fixtures } });
});
after(async () => {
  await browser?.close();
  await data?.close();
});

test("shardfetch/maplibre's tiles in Node: every pixel of every tile at every level's zoom (and one past) is GDAL's value through the colour map; outside transparent", async () => {
  const proto = pkg.createProtocol({ colormap: "viridis", min: 0, max: 1000 });
  let checked = 0;
  try {
    for (const name of ["mercator_u16", "zarr_u16"]) {
      const fx = fixture(name);
      const file = fx.path.slice("maplibre/".length);
      for (const z of [...fx.levels.map((l) => l.zoom), fx.levels[0].zoom + 1]) {
        const l = fx.levels.find((v) => v.zoom === z) ?? fx.levels[0];
        const s = 2 ** (z - l.zoom);
        // Every tile touching the level, and a ring of tiles around it.
        const [t0x, t0y] = [Math.floor((l.px * s) / 256) - 1, Math.floor((l.py * s) / 256) - 1];
        const [t1x, t1y] = [Math.floor(((l.px + l.W) * s - 1) / 256) + 1, Math.floor(((l.py + l.H) * s - 1) / 256) + 1];
        for (let ty = t0y; ty <= t1y; ty++) {
          for (let tx = t0x; tx <= t1x; tx++) {
            const rgba = await proto.pixels(`shardfetch://${data.url}/fixtures/data/maplibre/${file}/${z}/${tx}/${ty}`);
            for (let j = 0; j < 256; j++) {
              for (let i = 0; i < 256; i++) {
                const v = valueAt(fx, z, tx * 256 + i, ty * 256 + j);
                const o = (j * 256 + i) * 4;
                const want = v === undefined || v === 0 ? [0, 0, 0, 0] : [...colour("viridis", v, 0, 1000), 255];
                const got = Array.from(rgba.subarray(o, o + 4));
                if (got.some((x, k) => Math.abs(x - want[k]) > 1)) {
                  assert.deepEqual(got, want, `${name} tile ${z}/${tx}/${ty} pixel ${i},${j} (value ${v})`);
                }
                checked++;
              }
            }
          }
        }
      }
    }
  } finally {
    proto.close();
  }
  console.log(`# ${checked} tile pixels equal GDAL's values through viridis`);
  assert.ok(checked > 1e6, `${checked} pixels checked`);
});

test("shardfetch/maplibre: a grid other than Web Mercator's is an UnsupportedFormat error naming it; source() describes the raster", async () => {
  const proto = pkg.createProtocol();
  try {
    const bad = `${data.url}/fixtures/data/tiff/gd_cog_f32.tif`;
    await assert.rejects(proto.pixels(`shardfetch://${bad}/5/17/11`), (e) => {
      assert.equal(e.code, "UnsupportedFormat");
      assert.equal(e.url, bad);
      assert.match(e.message, /EPSG:32633 at 30 × 30 per pixel, not Web Mercator/);
      return true;
    });
    const src = await proto.source(`${data.url}/fixtures/data/maplibre/mercator_rgb.tif`);
    assert.equal(src.maxzoom, 6);
    assert.equal(src.tileSize, 256);
    assert.equal(src.tiles[0], `shardfetch://${data.url}/fixtures/data/maplibre/mercator_rgb.tif/{z}/{x}/{y}`);
    // Tile (34, 22) of zoom 6: longitudes 11.25 to 16.875.
    assert.ok(Math.abs(src.bounds[0] - 11.25) < 1e-9 && Math.abs(src.bounds[2] - 16.875) < 1e-9, String(src.bounds));
    // A source's `url: "shardfetch://<url>#<options>"`: its TileJSON, the options on its tiles.
    const tj = await proto.tile({ url: `shardfetch://${data.url}/fixtures/data/maplibre/mercator_u16.tif#colormap=magma&min=0&max=999`, type: "json" });
    assert.equal(tj.data.tiles[0], `shardfetch://${data.url}/fixtures/data/maplibre/mercator_u16.tif/{z}/{x}/{y}?colormap=magma&min=0&max=999`);
    assert.deepEqual([tj.data.minzoom, tj.data.maxzoom, tj.data.tilejson], [0, 5, "2.2.0"]);
    // uint16 without min/max: a typed error, not a guess.
    await assert.rejects(proto.pixels(`shardfetch://${data.url}/fixtures/data/maplibre/mercator_u16.tif/5/17/11`), { code: "UnsupportedDataType" });
  } finally {
    proto.close();
  }
});

/** Builds the app (once): MapLibre and shardfetch/maplibre bundled, MapLibre's worker beside. */
let built = false;
async function buildApp() {
  if (built) return;
  assert.ok(fs.existsSync(path.join(app, "node_modules/maplibre-gl")), "tests/maplibre dependencies (scripts/ensure-tools.sh)");
  // MapLibre starts its worker from beside its module (import.meta.url: the bundle).
  await bundleApp(app, root, { assets: ["maplibre-gl-worker.mjs", "maplibre-gl.css"].map((f) => `node_modules/maplibre-gl/dist/${f}`) });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, "--force-color-profile=srgb"], headless: true });
  built = true;
}

/** MapLibre's 512 × 512 map of `file` at zoom `z` centred on world pixel (cx, cy): its screenshot and error. */
async function drawn(file, query) {
  await buildApp();
  const page = await startServer({ root: { "/app": dist } });
  const tab = await browser.newPage({ viewport: { width: 600, height: 600 } });
  const problems = [];
  tab.on("pageerror", (e) => problems.push(String(e)));
  try {
    const q = new URLSearchParams({ url: `${data.url}/fixtures/data/${file}`, ...query });
    await tab.goto(`${page.url}/app/index.html?${q}`);
    await tab.waitForFunction(() => window.__drawn || window.__error, null, { timeout: 60000 });
    const error = await tab.evaluate(() => window.__error);
    assert.deepEqual(problems, []);
    const shot = decodePng(await tab.locator("#map canvas").screenshot());
    return { shot, error };
  } finally {
    await tab.close();
    await page.close();
  }
}

/** Screen pixels of the map against `want(x, y)` ([r, g, b]); the count of pixels checked. */
function compare(shot, want, label) {
  assert.deepEqual([shot.width, shot.height], [512, 512]);
  let off = 0;
  let worst = 0;
  let first = "";
  for (let y = 0; y < 512; y++) {
    for (let x = 0; x < 512; x++) {
      const w = want(x, y);
      const o = (y * 512 + x) * 4;
      const d = Math.max(...w.map((c, k) => Math.abs(shot.rgba[o + k] - c)));
      worst = Math.max(worst, d);
      if (d > 2) {
        if (!first) first = `(${x}, ${y}): ${Array.from(shot.rgba.subarray(o, o + 3))} for ${w}`;
        off++;
      }
    }
  }
  console.log(`# MapLibre drew ${label}: ${off} of 512×512 px differ from GDAL's values by more than 2 (largest ${worst})${first ? `; first ${first}` : ""}`);
  assert.equal(off, 0, `${off} pixels differ, first ${first}`);
  return 512 * 512;
}

for (const [name, z, query, cmap] of [
  ["mercator_u16", 5, "colormap=viridis&min=0&max=1000", "viridis"],
  ["mercator_u16", 4, "colormap=magma&min=0&max=1000", "magma"],
  ["mercator_u16", 3, "min=0&max=1000", "grey"],
  ["zarr_u16", 4, "colormap=viridis&min=0&max=1000", "viridis"],
]) {
  test(`MapLibre GL JS draws ${name} at zoom ${z} through shardfetch/maplibre (${cmap}): screen pixels are GDAL's values through the colour map`, async () => {
    const fx = fixture(name);
    const l = fx.levels.find((v) => v.zoom === z);
    // Centred on the level's middle, rounded to a pixel: screen pixel (x, y) is world pixel (x + ox, y + oy).
    const [cx, cy] = [l.px + Math.round(l.W / 2), l.py + Math.round(l.H / 2)];
    const { shot, error } = await drawn(fx.path, { z, cx, cy, query });
    assert.equal(error, undefined, JSON.stringify(error));
    const [ox, oy] = [cx - 256, cy - 256];
    compare(shot, (x, y) => {
      const v = valueAt(fx, z, x + ox, y + oy);
      return v === undefined || v === 0 ? [0, 0, 0] : colour(cmap, v, 0, 1000);
    }, `${name} at zoom ${z}`);
  });
}

test("MapLibre GL JS draws an RGB COG through shardfetch/maplibre at zoom 6 and (its overview, the source given as TileJSON) 5: screen pixels are GDAL's RGB values", async () => {
  const fx = fixture("mercator_rgb");
  for (const [z, form] of [[6, "tiles"], [5, "tilejson"]]) {
    const l = fx.levels.find((v) => v.zoom === z);
    const [cx, cy] = [l.px + Math.round(l.W / 2), l.py + Math.round(l.H / 2)];
    const { shot, error } = await drawn(fx.path, { z, cx, cy, form });
    assert.equal(error, undefined, JSON.stringify(error));
    compare(shot, (x, y) => {
      const r = valueAt(fx, z, x + cx - 256, y + cy - 256, 0);
      return r === undefined ? [0, 0, 0] : [0, 1, 2].map((b) => valueAt(fx, z, x + cx - 256, y + cy - 256, b));
    }, `mercator_rgb at zoom ${z} (${form})`);
  }
});

test("MapLibre GL JS given a COG in UTM (EPSG:32633): its error event carries shardfetch/maplibre's UnsupportedFormat naming the grid", async () => {
  const { error } = await drawn("tiff/gd_cog_f32.tif", { z: 5, cx: 17 * 256, cy: 11 * 256, query: "min=0&max=1" });
  assert.ok(error, "no error reported");
  assert.equal(error.code, "UnsupportedFormat");
  assert.match(error.message, /gd_cog_f32\.tif: its grid is EPSG:32633 at 30 × 30 per pixel, not Web Mercator tiling/);
});

test("shardfetch/maplibre is its own entry: the core's modules never import it, it bundles no MapLibre, and its size", () => {
  const imports = (f) => [...fs.readFileSync(path.join(root, "pkg", f), "utf8").matchAll(/(?:^|[;\s])(?:import|export)\s*(?:[^"'`;]*?\sfrom\s*)?["'`]([^"'`]+)["'`]|import\(\s*["'`]([^"'`]+)["'`]/g)].map((m) => m[1] ?? m[2]);
  // What a page importing only the core loads: index.js, its workers' and warm-up's modules, and
  // the modules they name, transitively.
  const seen = new Set();
  const walk = (f) => {
    if (seen.has(f) || !fs.existsSync(path.join(root, "pkg", f))) return;
    seen.add(f);
    for (const i of imports(f)) if (i.startsWith("./")) walk(path.posix.normalize(path.posix.join(path.posix.dirname(f), i)));
  };
  for (const f of ["index.js", "worker.js", "warm.js"]) walk(f);
  for (const f of seen) assert.doesNotMatch(fs.readFileSync(path.join(root, "pkg", f), "utf8"), /maplibre/i, `${f} names maplibre`);
  assert.ok(seen.size >= 2, [...seen].join(", "));
  // The entry imports the core's entry only; MapLibre is the page's (a peer dependency).
  assert.deepEqual(imports("maplibre.js"), ["./index.js"]);
  const pkgJson = JSON.parse(fs.readFileSync(path.join(root, "pkg/package.json"), "utf8"));
  assert.equal(pkgJson.exports["./maplibre"].import, "./maplibre.js");
  assert.equal(pkgJson.peerDependenciesMeta["maplibre-gl"].optional, true);
  const raw = fs.statSync(path.join(root, "pkg/maplibre.js")).size;
  const gz = zlib.gzipSync(fs.readFileSync(path.join(root, "pkg/maplibre.js")), { level: 9 }).length;
  console.log(`# pkg/maplibre.js: ${raw} bytes, ${gz} gzipped; the core's modules (${[...seen].join(", ")}) do not load it`);
  assert.ok(gz < 8192, `${gz} bytes gzipped`);
});

test("README's MapLibre page, as written (import map over node_modules, no bundler), draws a COG through shardfetch/maplibre", async () => {
  await buildApp();
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
  const html = /## Using with MapLibre[\s\S]*?```html\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(html, "README has the page");
  const fx = fixture("mercator_u16");
  const file = `${data.url}/fixtures/data/${fx.path}`;
  assert.ok(html.includes("https://host/elevation.tif"));
  // Served from tests/maplibre, whose node_modules hold maplibre-gl and shardfetch (→ pkg/).
  const page = path.join(app, "readme-page.html");
  fs.writeFileSync(page, html.replaceAll("https://host/elevation.tif", file));
  const site = await startServer({ root: { "/site": app } });
  const tab = await browser.newPage({ viewport: { width: 400, height: 300 } });
  const problems = [];
  tab.on("pageerror", (e) => problems.push(String(e)));
  try {
    await tab.goto(`${site.url}/site/readme-page.html`);
    // The viridis colours of the file's values (1–999), as the page draws them.
    const colours = new Set();
    for (let v = 1; v < 1000; v++) colours.add(colour("viridis", v, 0, 1000).join());
    let hits = 0;
    for (let k = 0; k < 60 && hits < 5000; k++) {
      await new Promise((r) => setTimeout(r, 500));
      const shot = decodePng(await tab.screenshot());
      hits = 0;
      for (let i = 0; i < shot.rgba.length; i += 4) if (colours.has(`${shot.rgba[i]},${shot.rgba[i + 1]},${shot.rgba[i + 2]}`)) hits++;
    }
    assert.deepEqual(problems, []);
    console.log(`# README's page: ${hits} of 400×300 screen pixels are viridis colours of the file's values`);
    assert.ok(hits >= 5000, `${hits} pixels drawn from the file`);
  } finally {
    await tab.close();
    await site.close();
    fs.rmSync(page, { force: true });
  }
});
