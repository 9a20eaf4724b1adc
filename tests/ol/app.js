// One OpenLayers map (WebGLTile layer) drawing `cfg.sources` through ol/source/GeoTIFF
// (`cfg.which` "ol": geotiff.js) or shardfetch/openlayers ("sf"), same options, same view.
// The page says when the view's tiles are drawn; tests/js/openlayers.test.mjs compares the
// screenshots and reads values through the layer's getData, bench/openlayers.mjs moves the view.
import Map from "ol/Map.js";
import View from "ol/View.js";
import TileLayer from "ol/layer/WebGLTile.js";
import GeoTIFF from "ol/source/GeoTIFF.js";
import { transform } from "ol/proj.js";
import Projection from "ol/proj/Projection.js";
import { register } from "ol/proj/proj4.js";
import proj4 from "proj4";
import { ShardfetchSource } from "shardfetch/openlayers";

const cfg = JSON.parse(new URLSearchParams(location.search).get("cfg"));
const [W, H] = cfg.size;

function drawn(map) {
  return new Promise((resolve) => map.once("rendercomplete", () => resolve()));
}

async function main() {
  if (cfg.proj4) {
    for (const [code, def] of cfg.proj4) proj4.defs(code, def);
    register(proj4);
  }
  const t0 = performance.now();
  const Source = cfg.which === "ol" ? GeoTIFF : ShardfetchSource;
  const source = new Source({
    sources: cfg.sources,
    normalize: cfg.normalize,
    interpolate: cfg.interpolate,
    convertToRGB: cfg.convertToRGB,
    // `projection` as a page passes it for a CRS OpenLayers does not know: an object of its own.
    projection: cfg.projection ? new Projection(cfg.projection) : undefined,
    transition: 0,
  });
  const failed = new Promise((_, reject) =>
    source.on("change", () => {
      if (source.getState() === "error") reject(source.getError());
    }),
  );
  const opts = await Promise.race([source.getView(), failed]);
  const el = document.getElementById("map");
  el.style.width = `${W}px`;
  el.style.height = `${H}px`;
  const projection = cfg.viewProjection ?? opts.projection;
  let center = opts.center;
  if (cfg.viewProjection) center = transform(center, opts.projection, cfg.viewProjection);
  if (cfg.offset) center = [center[0] + cfg.offset[0], center[1] + cfg.offset[1]];
  const layer = new TileLayer({ source });
  const map = new Map({
    target: el,
    layers: [layer],
    pixelRatio: 1,
    controls: [],
    interactions: [],
    // No resolution given: the source's own view, as the README's page takes it.
    view: cfg.resolution === undefined ? source.getView() : new View({ projection, center, resolution: cfg.resolution }),
  });
  await drawn(map);
  const p = source.getProjection();
  window.__map = map;
  // Move the view and resolve once its tiles are drawn (the benchmark's pan and zoom).
  window.__goto = async ({ offset = [0, 0], resolution }) => {
    const t = performance.now();
    const done = drawn(map);
    map.getView().setCenter([center[0] + offset[0], center[1] + offset[1]]);
    if (resolution) map.getView().setResolution(resolution);
    await done;
    return performance.now() - t;
  };
  window.__getData = (pixels) => pixels.map((px) => {
    const d = layer.getData(px);
    return d ? Array.from(d) : null;
  });
  window.__drawn = {
    ms: performance.now() - t0,
    projection: p ? p.getCode() : null,
    units: p ? p.getUnits() : null,
    bandCount: source.bandCount,
    resolutions: source.getTileGrid().getResolutions(),
  };
}

main().catch((e) => (window.__error = { message: String(e?.message ?? e), code: e?.code ?? null, url: e?.url ?? null }));
