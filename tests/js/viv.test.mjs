// shardfetch/viv under Viv itself (issue 15): tests/viv/app.js, Viv 0.21's MultiscaleImageLayer
// in deck.gl 9.2 given loadOmeZarr's (and loadOmeTiff's) PixelSources, bundled by esbuild, drawn
// by headless Chromium's WebGL2 (software); the screen pixels are compared with the values
// ome-zarr-py (tifffile) wrote, through Viv's contrast mapping.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../server.mjs";
import { bundleApp } from "./app-bundle.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";
import { decodePng } from "./png.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const app = path.join(root, "tests/viv");
const dist = path.join(app, "dist");
const fixtures = path.join(root, "tests/fixtures");
const manifest = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-ome.json"), "utf8"));

let browser;
before(async () => {
  assert.ok(fs.existsSync(path.join(app, "node_modules/@vivjs/layers")), "tests/viv dependencies (scripts/ensure-tools.sh)");
  // `shardfetch` as an installed package (node_modules/shardfetch → pkg/), bundled with Viv.
  await bundleApp(app, root);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, "--force-color-profile=srgb"], headless: true });
});
after(async () => {
  await browser?.close();
});

/** Draws `url` with Viv through `query` (loader, c, z, t); screen pixels against `valueAt(x, y)`. */
async function drawnMatches(url, query, [W, H], valueAt, [lo, hi]) {
  const page = await startServer({ root: { "/app": dist } });
  const data = await startServer({ root: { "/fixtures": fixtures } });
  const tab = await browser.newPage({ viewport: { width: W + 40, height: H + 40 } });
  const problems = [];
  tab.on("pageerror", (e) => problems.push(String(e)));
  try {
    const q = new URLSearchParams({ url: `${data.url}/fixtures/data/${url}`, lo, hi, ...query });
    await tab.goto(`${page.url}/app/index.html?${q}`);
    await tab.waitForFunction(() => window.__drawn || window.__error, null, { timeout: 60000 });
    const err = await tab.evaluate(() => window.__error);
    assert.equal(err, undefined, `${err} ${problems.join(" | ")}`);
    const shot = decodePng(await tab.locator("#view").screenshot());
    assert.deepEqual([shot.width, shot.height], [W, H]);
    // Viv: intensity = (v - lo) / (hi - lo), clamped, times the channel's colour (white).
    let off = 0;
    let worst = 0;
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const want = Math.round(Math.min(1, Math.max(0, (valueAt(x, y) - lo) / (hi - lo))) * 255);
        const d = Math.abs(shot.rgba[(y * W + x) * 4] - want);
        worst = Math.max(worst, d);
        if (d > 1) off++;
      }
    }
    console.log(`# Viv drew ${W}×${H} px of ${url}: ${off} differ from the writer's values by more than 1 (largest difference ${worst})`);
    assert.equal(off, 0, `${off} of ${W * H} pixels differ`);
    return await tab.evaluate(() => window.__metadata);
  } finally {
    await tab.close();
    await page.close();
    await data.close();
  }
}

test("Viv's MultiscaleImageLayer draws an OME-Zarr image through shardfetch/viv: screen pixels are the writer's values", async () => {
  const img = manifest.images.find((i) => i.name === "v04_cyx");
  const [, H, W] = img.levels[0].shape;
  const values = new Uint16Array(fs.readFileSync(path.join(fixtures, img.levels[0].expected)).buffer.slice(0));
  const c = 1;
  await drawnMatches(img.path, { c }, [W, H], (x, y) => values[c * H * W + y * W + x], [0, 4000]);
});

test("Viv draws an OME-TIFF through shardfetch/viv's loadOmeTiff (by range, no geotiff.js): screen pixels are tifffile's values", async () => {
  // tf_ome_pyramid: [t, c, z, y, x] = 2x3x4x96x80 uint16 with SubIFD levels; plane t 1, c 2, z 3.
  const [C, Z, H, W] = [3, 4, 96, 80];
  const [t, c, z] = [1, 2, 3];
  const values = new Uint16Array(fs.readFileSync(path.join(fixtures, "expected/tiff/tf_ome_pyramid_0.bin")).buffer.slice(0));
  const plane = ((t * C + c) * Z + z) * H * W;
  let hi = 1;
  for (let i = 0; i < H * W; i++) hi = Math.max(hi, values[plane + i]);
  const meta = await drawnMatches("tiff/tf_ome_pyramid.ome.tif", { loader: "tiff", c, z, t }, [W, H], (x, y) => values[plane + y * W + x], [0, hi]);
  assert.equal(meta.Pixels.SizeC, 3);
  assert.equal(meta.Pixels.SizeZ, 4);
  assert.equal(meta.Pixels.SizeT, 2);
  assert.deepEqual(meta.Pixels.Channels.map((ch) => ch.Name), ["DAPI", "GFP", "RFP"]);
});
