/**
 * `shardfetch/maplibre`: a protocol for MapLibre GL JS's `addProtocol` serving raster tiles of a
 * COG or a Zarr multiscale in Web Mercator tiling (GDAL's `TILING_SCHEME=GoogleMapsCompatible`:
 * EPSG:3857, each level at a zoom level's resolution), read by range through shardfetch and drawn
 * with a colour map or as RGB(A). Tiles are `ImageBitmap`s (MapLibre uses them without decoding).
 * The package does not depend on MapLibre: the protocol is a plain function of its interface.
 *
 * ```js
 * maplibregl.addProtocol("shardfetch", createProtocol({ colormap: "viridis", min: 0, max: 1000 }).tile);
 * // a raster source: { type: "raster", tileSize: 256, tiles: ["shardfetch://https://host/scene.tif/{z}/{x}/{y}"] }
 * ```
 * @packageDocumentation
 */
// From the package's entry (kept external in the build): one instance of the module, shared.
import { __paintTile as paintTile, __prepareRaster as prepareRaster, Group, open, openMultiscale, ShardfetchError } from "./index.js";
import type { OpenOptions, ShardedArray, TypedArray } from "./index.js";

/** Half the width of the Web Mercator world, in metres. */
const HALF = Math.PI * 6378137;
const TILE = 256;
/** Metres per pixel of zoom level `z` (256-px tiles). */
const resolution = (z: number) => (2 * HALF) / (TILE * 2 ** z);

/** Colour maps: matplotlib's, sampled at 9 stops, linear in between; `grey` black to white. */
export const COLORMAPS: Readonly<Record<string, readonly number[]>> = {
  grey: [0x000000, 0xffffff],
  viridis: [0x440154, 0x472d7b, 0x3b528b, 0x2c728e, 0x21918c, 0x28ae80, 0x5ec962, 0xaddc30, 0xfde725],
  magma: [0x000004, 0x1d1147, 0x51127c, 0x832681, 0xb73779, 0xe75263, 0xfc8961, 0xfec488, 0xfcfdbf],
  inferno: [0x000004, 0x210c4a, 0x57106e, 0x8a226a, 0xbc3754, 0xe45a31, 0xf98e09, 0xf9cb35, 0xfcffa4],
  plasma: [0x0d0887, 0x4c02a1, 0x7e03a8, 0xaa2395, 0xcc4778, 0xe66c5c, 0xf89540, 0xfdc527, 0xf0f921],
  cividis: [0x00224e, 0x1a386f, 0x434e6c, 0x61656f, 0x7d7c78, 0x9b9476, 0xbcae6c, 0xdec958, 0xfee838],
};

/** The colour (`[r, g, b]`, 0–255) of `t` in 0–1 on colour map `name`: what a tile shows. */
export function colorAt(name: string, t: number): [number, number, number] {
  const stops = COLORMAPS[name];
  if (!stops) throw new ShardfetchError("InvalidSelection", `no colour map "${name}" (${Object.keys(COLORMAPS).join(", ")})`);
  const f = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const k = Math.min(stops.length - 2, Math.floor(f));
  const w = f - k;
  const ch = (s: number) => [(stops[k] >> s) & 255, (stops[k + 1] >> s) & 255];
  return [16, 8, 0].map((s) => {
    const [a, b] = ch(s);
    return Math.round(a + (b - a) * w);
  }) as [number, number, number];
}

/** How values become colours. */
export interface RenderOptions {
  /** One band through a colour map ({@link COLORMAPS}; default `grey`). */
  colormap?: string;
  /** The values drawn as the colour map's ends (or RGB's 0 and 255); default 0 and 255 for 8-bit data. */
  min?: number;
  max?: number;
  /**
   * The bands (0-based) to draw: one for a colour map, three or four for RGB(A). Default: all of a
   * 3- or 4-band image as RGB(A) when no `colormap` is given, else band 0.
   */
  bands?: number[];
  /** Values drawn transparent (default the file's: GeoTIFF `nodata`, the Zarr fill value). NaN always is. */
  nodata?: number;
}

export interface ProtocolOptions extends RenderOptions {
  /** Options of shardfetch's `open` for each file. */
  open?: OpenOptions;
}

/** One level: its array and where its pixels sit (Web Mercator metres). */
interface Level {
  array: ShardedArray;
  zoom: number;
  /** The top-left corner of pixel (0, 0), in metres. */
  x0: number;
  y0: number;
}

/** An opened raster: levels finest first, band axis or none. */
interface Raster {
  url: string;
  levels: Level[];
  bands: number;
  dtype: string;
  nodata: number | null;
  close(): void;
}

function gridError(url: string, grid: string): ShardfetchError {
  return new ShardfetchError(
    "UnsupportedFormat",
    `${url}: its grid is ${grid}, not Web Mercator tiling; shardfetch/maplibre draws EPSG:3857 at zoom-level resolutions (GDAL: -of COG -co TILING_SCHEME=GoogleMapsCompatible)`,
    { url },
  );
}

/** The zoom level whose resolution `res` is, or null. */
function zoomOf(res: number): number | null {
  const z = Math.round(Math.log2((2 * HALF) / (TILE * res)));
  return Math.abs(resolution(z) - res) <= 1e-6 * res ? z : null;
}

function epsgOf(code: unknown): number | null {
  if (typeof code === "number") return code;
  const m = typeof code === "string" ? /^EPSG:(\d+)$/i.exec(code) : null;
  return m ? Number(m[1]) : null;
}

const MERCATOR = new Set([3857, 900913, 3785, 102100, 102113]);

/**
 * A level of geotransform `gt` (GDAL's order) in Web Mercator zoom levels, checked: north up,
 * square pixels of a zoom level's resolution, corner on that zoom's pixel grid.
 */
function levelOf(url: string, array: ShardedArray, gt: number[], epsg: number | null): Level {
  const [x0, dx, rx, y0, ry, dy] = gt;
  const grid = `${epsg === null ? "an unknown CRS" : `EPSG:${epsg}`} at ${+dx.toPrecision(6)} × ${+(-dy).toPrecision(6)} per pixel`;
  if (epsg === null || !MERCATOR.has(epsg)) throw gridError(url, grid);
  const zoom = zoomOf(dx);
  if (zoom === null || rx !== 0 || ry !== 0 || Math.abs(dx + dy) > 1e-9 * dx) throw gridError(url, grid);
  const onGrid = (v: number) => Math.abs(v / dx - Math.round(v / dx)) < 1e-6;
  if (!onGrid(x0 + HALF) || !onGrid(HALF - y0)) throw gridError(url, `${grid}, its corner off zoom ${zoom}'s pixels`);
  return { array, zoom, x0, y0 };
}

async function openRaster(url: string, options: OpenOptions): Promise<Raster> {
  const node = await open(url, options);
  const arrays: ShardedArray[] = [];
  let groupAttrs: Record<string, unknown> = {};
  if (node instanceof Group) {
    groupAttrs = node.attributes as Record<string, unknown>;
    const ms = await openMultiscale(node, options);
    arrays.push(...ms.levels.map((l) => l.array));
  } else {
    arrays.push(node);
  }
  const close = () => arrays.forEach((a) => a.close());
  try {
    const first = arrays[0];
    const n = first.shape.length;
    if (n !== 2 && n !== 3) {
      throw new ShardfetchError("UnsupportedFormat", `${url}: ${n} dimensions; shardfetch/maplibre draws [y, x] or [band, y, x]`, { url });
    }
    const geo = first.attributes.geotiff as { geotransform?: number[]; epsg?: number; nodata?: number } | undefined;
    let levels: Level[];
    let nodata: number | null = null;
    if (geo) {
      if (!geo.geotransform) throw gridError(url, "not georeferenced (no geotransform)");
      // GDAL's overviews share the full resolution's corner, at 2, 4, … times its pixel size.
      const base = levelOf(url, first, geo.geotransform, geo.epsg ?? null);
      levels = arrays.map((a) => {
        const k = Math.round(Math.log2(first.shape[n - 1] / a.shape[n - 1]));
        return { ...base, array: a, zoom: base.zoom - k };
      });
      nodata = geo.nodata ?? null;
    } else {
      // Zarr: GeoZarr's `proj:code` (group or array) and `spatial:transform` per level (rasterio's Affine order).
      levels = arrays.map((a) => {
        const attrs = a.attributes as Record<string, unknown>;
        const t = attrs["spatial:transform"];
        const epsg = epsgOf(attrs["proj:code"] ?? groupAttrs["proj:code"]);
        if (!Array.isArray(t) || t.length < 6 || !t.every((v) => typeof v === "number")) {
          throw gridError(a.url, `${epsg === null ? "an unknown CRS" : `EPSG:${epsg}`} with no "spatial:transform"`);
        }
        const [sa, sb, sc, sd, se, sf] = t as number[];
        return levelOf(a.url, a, [sc, sa, sb, sf, sd, se], epsg);
      });
      const fill = first.fillValue;
      nodata = typeof fill === "number" ? fill : null;
    }
    return { url, levels, bands: n === 3 ? first.shape[0] : 1, dtype: first.dtype, nodata, close };
  } catch (e) {
    close();
    throw e;
  }
}

/** How one raster's values become RGBA (drawn by the module: `paintTile`). */
interface Painter {
  bands: number[];
  lo: number;
  span: number;
  nodata: number | null;
  /** A colour map's 256 RGB triples; none for RGB(A). */
  lut?: Uint8Array;
}

function painterOf(r: Raster, opts: RenderOptions): Painter {
  const rgb = opts.colormap === undefined && (opts.bands ? opts.bands.length >= 3 : r.bands === 3 || r.bands === 4);
  const bands = opts.bands ?? (rgb ? [...Array(r.bands).keys()] : [0]);
  if ((rgb ? bands.length < 3 : bands.length !== 1) || bands.length > 4 || bands.some((b) => !(b >= 0 && b < r.bands))) {
    throw new ShardfetchError("InvalidSelection", `${r.url}: bands [${bands}] of ${r.bands} (one for a colour map, three or four for RGB)`, { url: r.url });
  }
  let { min, max } = opts;
  if (min === undefined || max === undefined) {
    if (r.dtype !== "uint8") throw new ShardfetchError("UnsupportedDataType", `${r.url}: ${r.dtype} values need \`min\` and \`max\` to be drawn`, { url: r.url });
    min ??= 0;
    max ??= 255;
  }
  const nodata = opts.nodata ?? r.nodata ?? null;
  const span = max - min || 1;
  if (rgb) return { bands, lo: min, span, nodata };
  return { bands, lo: min, span, nodata, lut: lutOf(opts.colormap ?? "grey") };
}

/** Colour maps' 256 RGB triples, made once per name (not per tile). */
const luts = new Map<string, Uint8Array>();
function lutOf(name: string): Uint8Array {
  let lut = luts.get(name);
  if (!lut) {
    lut = new Uint8Array(256 * 3);
    for (let i = 0; i < 256; i++) lut.set(colorAt(name, i / 255), i * 3);
    luts.set(name, lut);
  }
  return lut;
}

/** The level drawn at zoom `z`: the coarsest at or finer than `z`, else the finest. */
function levelFor(r: Raster, z: number): Level {
  let best = r.levels[0];
  for (const l of r.levels) if (l.zoom >= z && l.zoom < best.zoom) best = l;
  return best;
}

/**
 * Tile (`z`, `x`, `y`) of the raster at `url`, 256 × 256 RGBA (nearest sampling of the level
 * drawn); pixels outside the raster are transparent.
 */
async function tileOf(r: Raster, painter: Painter, z: number, x: number, y: number, signal?: AbortSignal): Promise<Uint8ClampedArray> {
  const out = new Uint8ClampedArray(TILE * TILE * 4);
  const l = levelFor(r, z);
  // Level pixels per tile pixel; past 8 (a raster with no overview that far) the tile is left blank.
  const s = 2 ** (l.zoom - z);
  if (s > 8) return out;
  const res = resolution(l.zoom);
  const exact = (v: number) => (Math.abs(v - Math.round(v)) < 1e-6 ? Math.round(v) : v);
  const cx = exact((-HALF + x * TILE * resolution(z) - l.x0) / res);
  const cy = exact((l.y0 - (HALF - y * TILE * resolution(z))) / res);
  const at = (c: number, i: number) => Math.floor(c + (i + 0.5) * s);
  const n = l.array.shape.length;
  const [H, W] = l.array.shape.slice(-2);
  const c0 = Math.max(0, at(cx, 0));
  const c1 = Math.min(W, at(cx, TILE - 1) + 1);
  const r0 = Math.max(0, at(cy, 0));
  const r1 = Math.min(H, at(cy, TILE - 1) + 1);
  if (c0 >= c1 || r0 >= r1) return out;
  const got = await l.array.get(n === 3 ? [null, [r0, r1], [c0, c1]] : [[r0, r1], [c0, c1]], { signal });
  const strides: [number, number, number] = n === 3 ? [got.stride[0], got.stride[1], got.stride[2]] : [0, got.stride[0], got.stride[1]];
  return paintTile(r.url, TILE, {
    data: got.data as TypedArray,
    dtype: l.array.dtype,
    strides,
    rows: [r0, r1],
    cols: [c0, c1],
    corner: [cx, cy],
    scale: s,
    ...painter,
  });
}

/** What `shardfetch://<url>/{z}/{x}/{y}?…` names. */
function parseTileUrl(tileUrl: string): { url: string; z: number; x: number; y: number; render: RenderOptions } {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(.+)\/(\d+)\/(\d+)\/(\d+)(?:\?(.*))?$/i.exec(tileUrl);
  if (!m) throw new ShardfetchError("InvalidSelection", `${tileUrl}: not <protocol>://<url>/{z}/{x}/{y}`, { url: tileUrl });
  const q = new URLSearchParams(m[5] ?? "");
  const render: RenderOptions = {};
  const num = (k: string) => (q.has(k) ? Number(q.get(k)) : undefined);
  if (q.has("colormap")) render.colormap = q.get("colormap")!;
  if (q.has("bands")) render.bands = q.get("bands")!.split(",").map(Number);
  for (const k of ["min", "max", "nodata"] as const) if (q.has(k)) render[k] = num(k);
  return { url: m[1], z: +m[2], x: +m[3], y: +m[4], render };
}

/** MapLibre's `RequestParameters`, as far as the protocol reads them. */
export interface TileRequest {
  url: string;
  /** `"image"` for a tile, `"json"` for a source's TileJSON (`url: "shardfetch://<url>"`). */
  type?: string;
}

/** A protocol: `tile` for `addProtocol`, `source` for a raster source's specification. */
export interface Protocol {
  /**
   * MapLibre's `AddProtocolAction`: the tile `<protocol>://<url>/{z}/{x}/{y}` names, as an
   * `ImageBitmap`. `<url>` is the file's full URL (its own query string kept); options after the
   * tile's `?` (`colormap`, `min`, `max`, `bands=0,1,2`, `nodata`) override the protocol's.
   * A source's `url: "<protocol>://<url>#<options>"` (a TileJSON request) gets {@link source}'s
   * TileJSON, its tiles carrying the options after `#`.
   */
  tile(request: TileRequest, abort?: AbortController): Promise<{ data: ImageBitmap | Record<string, unknown> }>;
  /** The same tile as 256 × 256 RGBA pixels (no `ImageBitmap`: Node, tests). */
  pixels(tileUrl: string, signal?: AbortSignal): Promise<Uint8ClampedArray>;
  /**
   * A raster source for `url` (opened: its levels give `minzoom`/`maxzoom`, its extent `bounds`):
   * `{ type: "raster", tiles, tileSize: 256, minzoom, maxzoom, bounds }`.
   */
  source(url: string, options?: { protocol?: string; query?: string }): Promise<Record<string, unknown>>;
  /** Close every file opened. */
  close(): void;
}

/** A protocol drawing with `options` (each tile URL may override them). */
export function createProtocol(options: ProtocolOptions = {}): Protocol {
  const { open: openOptions = {}, ...defaults } = options;
  const rasters = new Map<string, Promise<Raster>>();
  const raster = (url: string) => {
    let p = rasters.get(url);
    if (!p) {
      prepareRaster(); // beside the file's metadata, not after the first tile's values
      p = openRaster(url, openOptions);
      rasters.set(url, p);
      // A file that cannot be drawn fails every tile at once; a network failure is tried again.
      p.catch((e: { code?: string }) => {
        if (e?.code === "Network" || e?.code === "HttpError" || e?.code === "Aborted") rasters.delete(url);
      });
    }
    return p;
  };
  const pixels = async (tileUrl: string, signal?: AbortSignal) => {
    const t = parseTileUrl(tileUrl);
    const r = await raster(t.url);
    return tileOf(r, painterOf(r, { ...defaults, ...t.render }), t.z, t.x, t.y, signal);
  };
  const source: Protocol["source"] = async (url, { protocol = "shardfetch", query = "" } = {}) => {
    const r = await raster(url);
    const l = r.levels[0];
    const [H, W] = l.array.shape.slice(-2);
    const res = resolution(l.zoom);
    const lon = (x: number) => (x / HALF) * 180;
    const lat = (y: number) => (Math.atan(Math.sinh((y / HALF) * Math.PI)) * 180) / Math.PI;
    return {
      type: "raster",
      tiles: [`${protocol}://${url}/{z}/{x}/{y}${query ? `?${query}` : ""}`],
      tileSize: TILE,
      minzoom: Math.max(0, Math.min(...r.levels.map((v) => v.zoom)) - 3),
      maxzoom: l.zoom,
      bounds: [lon(l.x0), lat(l.y0 - H * res), lon(l.x0 + W * res), lat(l.y0)],
    };
  };
  return {
    pixels,
    async tile(request, abort) {
      if (request.type === "json") {
        const m = /^([a-z][a-z0-9+.-]*):\/\/([^#]+)(?:#(.*))?$/i.exec(request.url);
        if (!m) throw new ShardfetchError("InvalidSelection", `${request.url}: not <protocol>://<url>#<options>`, { url: request.url });
        return { data: { tilejson: "2.2.0", ...(await source(m[2], { protocol: m[1], query: m[3] ?? "" })) } };
      }
      const rgba = await pixels(request.url, abort?.signal);
      return { data: await createImageBitmap(new ImageData(rgba as Uint8ClampedArray<ArrayBuffer>, TILE, TILE)) };
    },
    source,
    close() {
      for (const p of rasters.values()) void p.then((r) => r.close(), () => undefined);
      rasters.clear();
    },
  };
}
