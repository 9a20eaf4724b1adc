// openMultiscale and shardfetch/viv (issue 15): OME-Zarr 0.4 and 0.5 images written by
// ome-zarr-py (tests/fixtures/generate_ome.py), the demo's sample (zarr-python, OME 0.5) and its
// Neuroglancer precomputed twin (tensorstore); values compared with what the writers wrote.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startServer } from "../server.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const fixtures = path.join(root, "tests/fixtures");
const sample = path.join(root, "www/sample");
const api = await import(pathToFileURL(path.join(root, "pkg/index.js")).href);
const viv = await import(pathToFileURL(path.join(root, "pkg/viv.js")).href);
const manifest = JSON.parse(fs.readFileSync(path.join(fixtures, "manifest-ome.json"), "utf8"));

let server;
before(async () => {
  server = await startServer({ root: { "/fixtures": fixtures, "/sample": sample } });
});
after(async () => {
  await server.close();
});

const bytesOf = (r) => new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength);
const expected = (rel) => new Uint8Array(fs.readFileSync(path.join(fixtures, rel)));

for (const img of manifest.images) {
  test(`openMultiscale: OME-Zarr ${img.version} (${img.name}, ome-zarr-py) — axes, levels, transforms, values`, async () => {
    const ms = await api.openMultiscale(`${server.url}/fixtures/data/${img.path}`);
    try {
      assert.equal(ms.format, "ome-zarr");
      assert.equal(ms.version, img.version);
      assert.deepEqual(ms.axes.map((a) => a.name), img.axes);
      assert.equal(ms.axes.at(-1).unit, "micrometer");
      assert.equal(ms.axes.at(-1).type, "space");
      assert.deepEqual(ms.levels.map((l) => l.path), img.levels.map((l) => l.path), "finest first");
      for (const [k, want] of img.levels.entries()) {
        const l = ms.levels[k];
        assert.deepEqual([...l.array.shape], want.shape);
        assert.deepEqual(l.scale, want.scale);
        assert.deepEqual(l.translation, want.translation);
        const r = await l.array.get(want.shape.map(() => null));
        assert.deepEqual(bytesOf(r), expected(want.expected), `level ${want.path}`);
      }
      assert.deepEqual(await ms.labels(), img.labels);
      if (img.label) {
        const lab = await ms.openLabel(img.label.name);
        assert.ok(lab.imageLabel !== null || lab.levels.length > 0);
        for (const [k, want] of img.label.levels.entries()) {
          const r = await lab.levels[k].array.get(want.shape.map(() => null));
          assert.deepEqual(bytesOf(r), expected(want.expected), `label level ${want.path}`);
        }
        lab.close();
      }
      assert.equal(ms.omero.channels.at(-1).label, img.version === "0.4" ? "Actin" : "Membrane");
    } finally {
      ms.close();
    }
  });
}

test("openMultiscale: the demo's sample, OME-Zarr 0.5 (zarr-python) and precomputed (tensorstore)", async () => {
  const probes = JSON.parse(fs.readFileSync(path.join(sample, "probes.json"), "utf8"));
  const ms = await api.openMultiscale(`${server.url}/sample/cells.ome.zarr`);
  assert.equal(ms.levels.length, probes.levels.length);
  for (const lv of probes.levels) {
    const l = ms.levels.find((x) => x.path === lv.path);
    assert.deepEqual([...l.array.shape], lv.shape);
    for (const [z, y, x, v] of lv.probes.slice(0, 20)) {
      const r = await l.array.get([z, y, x]);
      assert.equal(r.data[0], v, `level ${lv.path} at ${z},${y},${x}`);
    }
  }
  ms.close();
  const pre = JSON.parse(fs.readFileSync(path.join(sample, "probes-precomputed.json"), "utf8"));
  const pc = await api.openMultiscale(`${server.url}/sample/cells.precomputed`);
  assert.equal(pc.format, "precomputed");
  assert.deepEqual(pc.axes.map((a) => a.name), ["x", "y", "z", "channel"]);
  assert.equal(pc.levels.length, pre.scales.length);
  for (const [k, s] of pre.scales.entries()) {
    const l = pc.levels[k];
    assert.deepEqual([...l.array.shape].slice(0, 3), s.size, `scale ${k} finest first`);
    for (const [x, y, z, v] of s.probes.slice(0, 10)) {
      const r = await l.array.get([x, y, z, 0]);
      assert.equal(r.data[0], v, `scale ${k} at ${x},${y},${z}`);
    }
  }
  pc.close();
});

test("openMultiscale: a single array or a plain group is UnsupportedFormat", async () => {
  await assert.rejects(api.openMultiscale(`${server.url}/fixtures/data/zp/shard_gzip_end`), { code: "UnsupportedFormat" });
});

test("shardfetch/viv: PixelSources with Viv's interface; tiles and rasters hold the writer's values", async () => {
  const img = manifest.images.find((i) => i.name === "v04_cyx");
  const { data, metadata, multiscale } = await viv.loadOmeZarr(`${server.url}/fixtures/data/${img.path}`);
  try {
    assert.equal(data.length, img.levels.length);
    const src = data[0];
    assert.deepEqual(src.labels, ["c", "y", "x"]);
    assert.equal(src.dtype, "Uint16");
    assert.deepEqual(src.shape, img.levels[0].shape);
    assert.equal(src.tileSize, 32);
    assert.equal(typeof src.onTileError, "function");
    assert.equal(src.meta.physicalSizes.x.size, 0.5);
    assert.equal(metadata.omero.channels[0].label, "DNA");
    const [C, H, W] = img.levels[0].shape;
    const want = new Uint16Array(expected(img.levels[0].expected).buffer.slice(0));
    // Every tile of channel 1 (edges cut), and the whole plane.
    const t = src.tileSize;
    for (let ty = 0; ty * t < H; ty++) {
      for (let tx = 0; tx * t < W; tx++) {
        const tile = await src.getTile({ x: tx, y: ty, selection: { c: 1 } });
        assert.equal(tile.width, Math.min(t, W - tx * t));
        assert.equal(tile.height, Math.min(t, H - ty * t));
        for (let y = 0; y < tile.height; y++) {
          for (let x = 0; x < tile.width; x += 7) {
            assert.equal(tile.data[y * tile.width + x], want[1 * H * W + (ty * t + y) * W + (tx * t + x)]);
          }
        }
      }
    }
    const raster = await src.getRaster({ selection: { c: 0 } });
    assert.deepEqual([raster.width, raster.height], [W, H]);
    assert.deepEqual(Array.from(raster.data), Array.from(want.subarray(0, H * W)));
    void C;
    // An aborted tile rejects with Aborted (what Viv's onTileError is told).
    const ctl = new AbortController();
    ctl.abort();
    await assert.rejects(src.getTile({ x: 0, y: 0, selection: { c: 0 }, signal: ctl.signal }), { code: "Aborted" });
  } finally {
    multiscale.close();
  }
});
