// Viv's own multiscale image layer (deck.gl) given shardfetch/viv's loader: the page draws the
// image's channel `c` at zoom 0 (one screen pixel per voxel) and says when its tiles are in.
import { Deck, OrthographicView } from "@deck.gl/core";
import { MultiscaleImageLayer } from "@vivjs/layers";
import { ColorPaletteExtension } from "@vivjs/extensions";
import { loadOmeTiff, loadOmeZarr } from "shardfetch/viv";

const q = new URLSearchParams(location.search);
const c = Number(q.get("c") ?? 0);
const z = Number(q.get("z") ?? 0);
const t = Number(q.get("t") ?? 0);
// `loader=tiff`: an OME-TIFF through loadOmeTiff (its Pixels metadata checked by the test).
const load = q.get("loader") === "tiff" ? loadOmeTiff : loadOmeZarr;
const lo = Number(q.get("lo") ?? 0);
const hi = Number(q.get("hi") ?? 255);

async function main() {
  const { data, metadata } = await load(q.get("url"));
  window.__metadata = JSON.parse(JSON.stringify({ Pixels: metadata.Pixels ?? null, omero: metadata.omero ?? null }));
  const [H, W] = data[0].shape.slice(-2);
  const canvas = document.getElementById("view");
  canvas.style.width = `${W}px`;
  canvas.style.height = `${H}px`;
  let tiles = 0;
  const layer = new MultiscaleImageLayer({
    id: "image",
    loader: data,
    selections: [{ c, z, t }],
    contrastLimits: [[lo, hi]],
    colors: [[255, 255, 255]],
    channelsVisible: [true],
    extensions: [new ColorPaletteExtension()],
    onTileError: (e) => (window.__error = String(e?.message ?? e)),
    onViewportLoad: (loaded) => {
      tiles = loaded.length;
      // Two frames after the tiles are in: they are drawn.
      requestAnimationFrame(() => requestAnimationFrame(() => (window.__drawn = { tiles, width: W, height: H })));
    },
  });
  new Deck({
    canvas,
    width: W,
    height: H,
    useDevicePixels: false,
    views: [new OrthographicView({ id: "ortho" })],
    viewState: { target: [W / 2, H / 2, 0], zoom: 0 },
    layers: [layer],
  });
}

main().catch((e) => (window.__error = String(e?.stack ?? e)));
