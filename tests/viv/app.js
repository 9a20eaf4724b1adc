// Viv's own multiscale image layer (deck.gl) given shardfetch/viv's loader: the page draws the
// image's channel `c` at zoom 0 (one screen pixel per voxel) and says when its tiles are in.
import { Deck, OrthographicView } from "@deck.gl/core";
import { MultiscaleImageLayer } from "@vivjs/layers";
import { ColorPaletteExtension } from "@vivjs/extensions";
import { loadOmeZarr } from "shardfetch/viv";

const q = new URLSearchParams(location.search);
const c = Number(q.get("c") ?? 0);
const lo = Number(q.get("lo") ?? 0);
const hi = Number(q.get("hi") ?? 255);

async function main() {
  const { data } = await loadOmeZarr(q.get("url"));
  const [H, W] = data[0].shape.slice(-2);
  const canvas = document.getElementById("view");
  canvas.style.width = `${W}px`;
  canvas.style.height = `${H}px`;
  let tiles = 0;
  const layer = new MultiscaleImageLayer({
    id: "image",
    loader: data,
    selections: [{ c }],
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
