// MapLibre GL JS drawing a raster source through shardfetch/maplibre's protocol (or, with
// `lib=geomatico`, through @geomatico/maplibre-cog-protocol): a 512 × 512 map at zoom `z` centred
// on world pixel (`cx`, `cy`) of that zoom, nearest resampling, no fading; `window.__drawn` once
// the map is idle, `window.__error` on a tile's error.
import * as maplibregl from "maplibre-gl";
import { createProtocol } from "shardfetch/maplibre";
import { cogProtocol } from "@geomatico/maplibre-cog-protocol";

const q = new URLSearchParams(location.search);
const z = Number(q.get("z"));
const [cx, cy] = [Number(q.get("cx")), Number(q.get("cy"))];
const world = 256 * 2 ** z;
const center = [(cx / world) * 360 - 180, (Math.atan(Math.sinh(Math.PI * (1 - (2 * cy) / world))) * 180) / Math.PI];
const lib = q.get("lib") ?? "shardfetch";
let tiles;
let tilejson;
if (lib === "geomatico") {
  // Its TileJSON (`url: "cog://…"`) gives its tiles; `#color:…` its colour ramp.
  maplibregl.addProtocol("cog", cogProtocol);
  tilejson = `cog://${q.get("url")}${q.get("geomatico") ?? ""}`;
} else {
  const protocol = createProtocol();
  window.__protocol = protocol;
  maplibregl.addProtocol("shardfetch", protocol.tile);
  // `form=tilejson`: the source names the file (`url`), the protocol answers its TileJSON.
  if (q.get("form") === "tilejson") tilejson = `shardfetch://${q.get("url")}${q.get("query") ? `#${q.get("query")}` : ""}`;
  else tiles = [`shardfetch://${q.get("url")}/{z}/{x}/{y}${q.get("query") ? `?${q.get("query")}` : ""}`];
}

// `w`, `h`: the map's size (the benchmark's 1024 × 768; the test's 512 × 512).
const el = document.getElementById("map");
if (q.get("w")) el.style.width = `${q.get("w")}px`;
if (q.get("h")) el.style.height = `${q.get("h")}px`;

const map = new maplibregl.Map({
  container: "map",
  center,
  // MapLibre's zoom counts 512-px worlds: zoom z - 1 shows 256-px tiles of zoom z one to one.
  zoom: z - 1,
  pixelRatio: 1,
  fadeDuration: 0,
  attributionControl: false,
  canvasContextAttributes: { preserveDrawingBuffer: true, antialias: false },
  style: {
    version: 8,
    sources: { image: { type: "raster", ...(tilejson ? { url: tilejson } : { tiles }), tileSize: 256, ...(q.get("maxzoom") ? { maxzoom: Number(q.get("maxzoom")) } : {}) } },
    layers: [
      { id: "bg", type: "background", paint: { "background-color": "#000000" } },
      { id: "image", type: "raster", source: "image", paint: { "raster-resampling": "nearest", "raster-fade-duration": 0 } },
    ],
  },
});
window.__map = map;
map.on("error", (e) => {
  const err = e.error ?? e;
  window.__error = { message: String(err?.message ?? err), code: err?.code ?? null, url: err?.url ?? null };
});
map.once("idle", () => {
  window.__drawnAt = performance.now();
  requestAnimationFrame(() => requestAnimationFrame(() => (window.__drawn = true)));
});
// The benchmark's moves: jump (pan by dx, dy screen pixels, or to zoom z) and resolve when idle.
window.__step = ({ dx = 0, dy = 0, z: to } = {}) =>
  new Promise((resolve) => {
    map.once("idle", resolve);
    if (to !== undefined) map.jumpTo({ zoom: to - 1 });
    else map.panBy([dx, dy], { duration: 0 });
  });
