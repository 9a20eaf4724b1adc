/**
 * `shardfetch/openlayers`: a tile source for OpenLayers' `ol/layer/WebGLTile` (an
 * `ol/source/DataTile`) taking `ol/source/GeoTIFF`'s options and handing WebGLTile the same tiles
 * (bands of each source in turn, then an alpha band where nodata applies; `Uint8Array` scaled
 * 0–255 from min/max, or `Float32Array` of raw values with `normalize: false`), read by
 * shardfetch: a COG's tiles by range, its overviews as the tile grid's levels. Also a GeoZarr
 * multiscale (`multiscales.layout`, `spatial:`/`proj:` attributes), a NetCDF/HDF5 variable with
 * regular 1-D lat/lon coordinates, or any multiscale or 2-D/3-D array shardfetch opens (in pixel
 * coordinates unless georeferenced). `ol` is a peer dependency.
 * @packageDocumentation
 */
import DataTileSource from "ol/source/DataTile.js";
import type { LoaderOptions } from "ol/source/DataTile.js";
import TileGrid from "ol/tilegrid/TileGrid.js";
import { get as getCachedProjection, Projection } from "ol/proj.js";
import type { ProjectionLike } from "ol/proj.js";
import { fromCode as unitsFromCode } from "ol/proj/Units.js";
import { fromProjectionCode } from "ol/proj/proj4.js";
// From the package's entry (kept external in the build): one instance of the module, shared.
import { __composeTile as composeTile, __prepareRaster as prepareRaster, Group, open, openMultiscale, ShardedArray, ShardfetchError } from "./index.js";
import type { OpenOptions, TypedArray } from "./index.js";
import type { BandPlace } from "./raster.js";

/** One file (or store) and what to take from it, as `ol/source/GeoTIFF`'s `SourceInfo`. */
export interface SourceInfo {
  /** A COG, a multiscale image (OME-Zarr …), or an array of 2 or 3 dimensions (`[band,] y, x`). */
  url: string;
  /** The array or image inside `url` (shardfetch's `path`: a NetCDF/HDF5 variable, a Zarr node). */
  path?: string;
  /** A GeoZarr multiscale whose levels are groups: the array to draw in each (e.g. `"b04"`). */
  variable?: string;
  /** Bands to read, first `1` (default: all). */
  bands?: number[];
  /** Value shown as 0 (per band of the file, not of `bands`); default: GDAL statistics, else the type's least. */
  min?: number | Array<number | undefined>;
  /** Value shown as 255; default: GDAL statistics, else the type's largest. */
  max?: number | Array<number | undefined>;
  /** Values that are transparent (overriding the file's `GDAL_NODATA`); adds an alpha band. */
  nodata?: number | Array<number | undefined>;
}

/** `ol/source/GeoTIFF`'s options that apply, plus shardfetch's own `openOptions`. */
export interface Options {
  sources: SourceInfo[];
  /** Scale to 0–255 by min/max (`Uint8Array` tiles); `false`: raw values (`Float32Array`). */
  normalize?: boolean;
  /** Linear interpolation when resampling (default `true`); `false`: nearest. */
  interpolate?: boolean;
  /**
   * Accepted for `ol/source/GeoTIFF`'s sake: shardfetch gives a YCbCr JPEG COG as RGB already,
   * and refuses CMYK and CIELab files.
   */
  convertToRGB?: boolean | "auto";
  /** The data's projection; default: the file's EPSG code. */
  projection?: ProjectionLike;
  /** Look an EPSG code OpenLayers lacks up through `ol/proj/proj4`'s `fromProjectionCode`. */
  loadMissingProjection?: boolean;
  transition?: number;
  wrapX?: boolean;
  attributions?: unknown;
  /** Passed to shardfetch's `open` (headers, store options, …). */
  openOptions?: OpenOptions;
}

/** One opened source: its levels finest first, and what the file says of them. */
interface Opened {
  url: string;
  levels: ShardedArray[];
  /** Index of the band axis (0) or `null` for a 2-D array. */
  bandAxis: number | null;
  bandCount: number;
  /** The file's nodata (`GDAL_NODATA`), or null. */
  nodata: number | null;
  stats: Record<string, string> | null;
  /** GDAL's geotransform, and the CRS as an EPSG number or a code OpenLayers may know. */
  geo: { geotransform?: number[]; epsg?: number; code?: string } | null;
  keys: Map<number, number>;
  /** Rows stored south to north (a latitude increasing with the row): drawn flipped. */
  flip: boolean;
}

const DTYPE_MIN: Record<string, number> = { int8: -128, int16: -32768, int32: -2147483648, float32: 1.2e-38 };
const DTYPE_MAX: Record<string, number> = {
  int8: 127,
  uint8: 255,
  int16: 32767,
  uint16: 65535,
  int32: 2147483647,
  uint32: 4294967295,
  float32: 3.4e38,
};
/** The sample types drawn (geotiff.js's). */
const DRAWN = new Set(["int8", "uint8", "int16", "uint16", "int32", "uint32", "float32", "float64"]);

/** GeoKeyDirectory (tag 34735) as key → value, for the values held in the directory itself. */
function geoKeys(tags: Record<string, unknown> | undefined): Map<number, number> {
  const keys = new Map<number, number>();
  const d = tags?.["34735"];
  if (Array.isArray(d)) {
    for (let k = 4; k + 3 < d.length; k += 4) if (d[k + 1] === 0) keys.set(d[k], d[k + 3]);
  }
  return keys;
}

/** `GDAL_METADATA` items of sample 0, as geotiff.js's `getGDALMetadata(0)` gives them. */
function gdalStats(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/<Item\b([^>]*)>([^<]*)<\/Item>/g)) {
    const name = /\bname="([^"]*)"/.exec(m[1])?.[1];
    const sample = /\bsample="([^"]*)"/.exec(m[1])?.[1];
    if (name !== undefined && sample !== undefined && Number(sample) === 0) out[name] = m[2];
  }
  return out;
}

const LAT = /^(lat|latitude)$/i;
const LON = /^(lon|long|longitude)$/i;

/**
 * A variable's georeferencing from its 1-D `lat`/`lon` coordinate variables (NetCDF, HDF5, Zarr
 * written by xarray): regular spacing, EPSG:4326; `null` when its last two dimensions are not so
 * named. The coordinates are looked for beside the variable, then at the file's root.
 */
async function coordinatesOf(a: ShardedArray, info: SourceInfo, options: OpenOptions): Promise<{ geo: Opened["geo"]; flip: boolean } | null> {
  const dims = a.dimensionNames;
  if (!dims || dims.length < 2) return null;
  const [yName, xName] = dims.slice(-2);
  if (!yName || !xName || !LAT.test(yName) || !LON.test(xName)) return null;
  const read = async (name: string, n: number): Promise<number[]> => {
    const dir = (info.path ?? "").split("/").slice(0, -1).join("/");
    const tries = info.path !== undefined ? [...new Set([dir ? `${dir}/${name}` : name, name])].map((p) => () => open(info.url, { ...options, path: p })) : [() => open(new URL(`./${name}`, a.url.replace(/\/?$/, "")).href, options)];
    for (const attempt of tries) {
      let c;
      try {
        c = await attempt();
      } catch (e) {
        if ((e as { code?: string }).code === "NotFound") continue;
        throw e;
      }
      if (!(c instanceof ShardedArray)) continue;
      try {
        if (c.shape.length !== 1 || c.shape[0] !== n) {
          throw new ShardfetchError("UnsupportedFormat", `${c.url}: the coordinate ${name} is not 1-D of ${n} values`, { url: c.url });
        }
        const r = await c.get([null]);
        return Array.from(r.data as ArrayLike<number>, Number).slice(0, n);
      } finally {
        c.close();
      }
    }
    throw new ShardfetchError("NotFound", `${a.url}: no coordinate variable ${name}`, { url: a.url });
  };
  const [H, W] = a.shape.slice(-2);
  const [lat, lon] = await Promise.all([read(yName, H), read(xName, W)]);
  const step = (v: number[], name: string) => {
    if (v.length < 2) throw new ShardfetchError("UnsupportedFormat", `${a.url}: ${name} has one value: no spacing to draw by`, { url: a.url });
    const d = (v[v.length - 1] - v[0]) / (v.length - 1);
    // Regular within float32's rounding of the values.
    const tol = Math.abs(d) * 1e-3 + 1e-6 * Math.max(Math.abs(v[0]), Math.abs(v[v.length - 1]));
    if (d === 0 || v.some((x, i) => Math.abs(x - (v[0] + i * d)) > tol)) {
      throw new ShardfetchError("UnsupportedFormat", `${a.url}: ${name} is not regularly spaced (a tile grid needs that)`, { url: a.url });
    }
    return d;
  };
  const dx = step(lon, xName);
  const dy = step(lat, yName);
  const flip = dy > 0;
  const top = flip ? lat[lat.length - 1] : lat[0];
  return { geo: { geotransform: [lon[0] - dx / 2, dx, 0, top + Math.abs(dy) / 2, 0, -Math.abs(dy)], epsg: 4326 }, flip };
}

/**
 * Georeferencing from the GeoZarr conventions' attributes (`spatial:transform`, affine order
 * a b c d e f; else `spatial:bbox` over `shape`; `proj:code`), or null.
 */
function conventionsGeo(attrs: Record<string, unknown>, shape: readonly number[]): Opened["geo"] {
  const t = attrs["spatial:transform"];
  const bbox = attrs["spatial:bbox"];
  const code = typeof attrs["proj:code"] === "string" ? (attrs["proj:code"] as string) : undefined;
  const [H, W] = shape.slice(-2);
  let geotransform: number[] | undefined;
  if (Array.isArray(t) && t.length >= 6 && t.every((v) => typeof v === "number")) {
    const [a, b, c, d, e, f] = t as number[];
    geotransform = [c, a, b, f, d, e];
  } else if (Array.isArray(bbox) && bbox.length === 4 && bbox.every((v) => typeof v === "number")) {
    const [x0, y0, x1, y1] = bbox as number[];
    geotransform = [x0, (x1 - x0) / W, 0, y1, 0, -(y1 - y0) / H];
  }
  if (!geotransform && !code) return null;
  const epsg = code && /^EPSG:(\d+)$/i.exec(code)?.[1];
  return { geotransform, code, ...(epsg ? { epsg: Number(epsg) } : {}) };
}

/** The levels of a GeoZarr `multiscales.layout` (finest first), `variable` in each when they are groups. */
async function layoutLevels(g: Group, layout: unknown[], info: SourceInfo, options: OpenOptions): Promise<ShardedArray[]> {
  const assets = layout.map((l) => (l as { asset?: unknown }).asset).filter((a): a is string => typeof a === "string");
  const opened = await Promise.allSettled(assets.map((a) => g.open(info.variable ? `${a}/${info.variable}` : a, options)));
  const arrays = opened.flatMap((r) => (r.status === "fulfilled" && r.value instanceof ShardedArray ? [r.value] : []));
  const fail = (e: ShardfetchError) => {
    arrays.forEach((a) => a.close());
    return e;
  };
  const rejected = opened.find((r) => r.status === "rejected");
  if (rejected) throw fail((rejected as PromiseRejectedResult).reason);
  const group = opened.find((r) => r.status === "fulfilled" && !(r.value instanceof ShardedArray));
  if (group || arrays.length === 0) {
    const names = group ? (group as PromiseFulfilledResult<Group>).value.children().map((c) => c.name) : [];
    throw fail(new ShardfetchError("NotAnArray", `${g.url}: its levels are groups; name the array to draw (\`variable\`${names.length ? `: ${names.join(", ")}` : ""})`, { url: g.url }));
  }
  return arrays.sort((a, b) => b.shape[b.shape.length - 1] - a.shape[a.shape.length - 1]);
}

async function openSource(info: SourceInfo, options: OpenOptions): Promise<Opened> {
  const url = info.url;
  // (`path` names the node under `url`; the node's children are opened without it.)
  const { path: _path, ...rest } = options;
  void _path;
  options = rest;
  const node = await open(url, info.path !== undefined ? { ...options, path: info.path } : options);
  let levels: ShardedArray[];
  let rootAttrs: Record<string, unknown> = {};
  if (node instanceof Group) {
    rootAttrs = node.attributes as Record<string, unknown>;
    const layout = (rootAttrs.multiscales as { layout?: unknown } | undefined)?.layout;
    levels = Array.isArray(layout) ? await layoutLevels(node, layout, info, options) : (await openMultiscale(node, options)).levels.map((l) => l.array);
  } else if (node instanceof ShardedArray) {
    levels = [node];
  } else {
    throw new ShardfetchError("UnsupportedFormat", `${url}: not an array or a multiscale image`, { url });
  }
  try {
    return await describe(info, options, url, levels, rootAttrs);
  } catch (e) {
    levels.forEach((a) => a.close());
    throw e;
  }
}

/** What the opened levels' attributes (and coordinates) say of them. */
async function describe(info: SourceInfo, options: OpenOptions, url: string, levels: ShardedArray[], rootAttrs: Record<string, unknown>): Promise<Opened> {
  const a = levels[0];
  const n = a.shape.length;
  if (n !== 2 && n !== 3) {
    throw new ShardfetchError("UnsupportedFormat", `${url}: OpenLayers draws [band,] y, x; this array has ${n} dimensions`, { url });
  }
  if (!DRAWN.has(a.dtype)) {
    throw new ShardfetchError("UnsupportedDataType", `${url}: OpenLayers does not draw ${a.dtype}`, { url });
  }
  const bandCount = n === 3 ? a.shape[0] : 1;
  for (const b of info.bands ?? []) {
    if (!Number.isInteger(b) || b < 1 || b > bandCount) {
      throw new ShardfetchError("InvalidSelection", `${url}: band ${b} of ${bandCount}`, { url });
    }
  }
  const attrs = a.attributes as { geotiff?: Opened["geo"] & { nodata?: number }; tiff?: { tags?: Record<string, unknown> } };
  const tags = attrs.tiff?.tags;
  let stats: Record<string, string> | null = null;
  const meta = tags?.["42112"];
  if (meta !== undefined) {
    const text = typeof meta === "string" ? meta : await a.tiffTag(42112);
    if (typeof text === "string") stats = gdalStats(text);
  }
  // A TIFF's GeoTIFF keys; else GeoZarr's attributes, the level's own then the image's.
  let geo = attrs.geotiff ?? null;
  if (!geo?.geotransform) {
    const own = conventionsGeo(a.attributes as Record<string, unknown>, a.shape);
    const root = conventionsGeo(rootAttrs, a.shape);
    if (own?.geotransform || root?.geotransform) {
      geo = { ...(root ?? {}), ...(own ?? {}) };
      if (!geo.geotransform) geo.geotransform = (own?.geotransform ?? root?.geotransform)!;
    }
  }
  let flip = false;
  let nodata = typeof attrs.geotiff?.nodata === "number" ? attrs.geotiff.nodata : null;
  if (!geo?.geotransform) {
    const c = await coordinatesOf(a, info, options);
    if (c) ({ geo, flip } = c);
    // NetCDF's and CF's missing value: nodata, as GDAL reads it.
    const fill = (a.attributes as { _FillValue?: unknown })._FillValue;
    const f = Array.isArray(fill) ? fill[0] : fill;
    if (nodata === null && typeof f === "number") nodata = f;
  }
  return { url, levels, bandAxis: n === 3 ? 0 : null, bandCount, nodata, stats, geo, keys: geoKeys(tags), flip };
}

/**
 * The tile source. Like `ol/source/GeoTIFF`, it is `loading` until the files are opened, then
 * `ready` (or `error`: {@link getError}); {@link getView} resolves to view options fitting the data.
 */
export class ShardfetchSource extends DataTileSource {
  readonly #info: SourceInfo[];
  readonly #normalize: boolean;
  readonly #loadMissingProjection: boolean;
  #opened: Opened[] = [];
  #error: Error | null = null;
  /** Per source and band (of those read): the nodata compared, the fill, the gain and bias. */
  #bands: Array<Array<{ index: number; nodata: number | null; gain: number; bias: number }>> = [];

  constructor(options: Options) {
    super({
      attributions: options.attributions,
      state: "loading",
      tileGrid: undefined,
      projection: options.projection || null,
      transition: options.transition,
      interpolate: options.interpolate !== false,
      wrapX: options.wrapX,
      hasAlpha: false,
    });
    this.#info = options.sources;
    this.#normalize = options.normalize !== false;
    this.#loadMissingProjection = options.loadMissingProjection ?? false;
    this.setKey(this.#info.map((s) => [s.url, s.path ?? "", s.variable ?? ""].join("|")).join(","));
    // A page that never asks for the view is not told of its rejection as unhandled.
    this.getView().catch(() => {});
    prepareRaster();
    this.#configure(options.openOptions ?? {}).catch((e: unknown) => {
      this.#error = e instanceof Error ? e : new Error(String(e));
      for (const o of this.#opened) o.levels.forEach((a) => a.close());
      this.viewRejector?.(this.#error);
      this.setState("error");
    });
  }

  /** Why the source is in state `error` (a `ShardfetchError` naming the URL), or null. */
  getError(): Error | null {
    return this.#error;
  }

  /** The opened levels of each source, finest first. */
  get arrays(): ShardedArray[][] {
    return this.#opened.map((o) => o.levels);
  }

  async #projection(o: Opened): Promise<Projection | null> {
    const epsg = o.geo?.epsg;
    const code = o.geo?.code ?? (epsg ? `EPSG:${epsg}` : undefined);
    if (!code) return null;
    let p = getCachedProjection(code);
    if (!p && this.#loadMissingProjection) {
      try {
        p = await fromProjectionCode(code);
      } catch (e) {
        throw new ShardfetchError("UnsupportedFormat", `${o.url}: ${code} could not be looked up (${(e as Error).message})`, { url: o.url, cause: e });
      }
    }
    if (!p) {
      // As ol/source/GeoTIFF: a projection of that code and the file's units, drawn only in a
      // view of the same projection (registering the code through ol/proj/proj4 lets it move).
      const projected = epsg !== undefined && o.keys.get(3072) === epsg;
      const units = unitsFromCode(o.keys.get(projected ? 3076 : 2054) ?? 0);
      if (!units) {
        throw new ShardfetchError(
          "UnsupportedFormat",
          `${o.url}: OpenLayers does not know ${code} and the file names no units; register it (ol/proj/proj4) or pass \`projection\``,
          { url: o.url },
        );
      }
      p = new Projection({ code, units });
    }
    return p;
  }

  async #configure(openOptions: OpenOptions): Promise<void> {
    const opened = await Promise.allSettled(this.#info.map((s) => openSource(s, openOptions)));
    this.#opened = opened.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const failed = opened.find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const first = this.#opened[0];
    if (!first) throw new ShardfetchError("InvalidSelection", "shardfetch/openlayers: no sources");
    const count = first.levels.length;
    const shapes = (o: Opened) => o.levels.map((a) => a.shape.slice(-2).join("x")).join(",");
    for (const o of this.#opened) {
      if (o.levels.length !== count || shapes(o) !== shapes(first)) {
        throw new ShardfetchError("UnsupportedFormat", `${o.url}: its levels (${shapes(o)}) are not those of ${first.url} (${shapes(first)})`, { url: o.url });
      }
    }

    // The grid: ol/source/GeoTIFF's (geotiff.js's getResolution: level 0's pixel size times the
    // width ratio; extent and origin from level 0; pixel coordinates without georeferencing).
    const [H0, W0] = first.levels[0].shape.slice(-2);
    const gt = first.geo?.geotransform;
    if (gt && (gt[2] !== 0 || gt[4] !== 0)) {
      throw new ShardfetchError("UnsupportedFormat", `${first.url}: a rotated or sheared geotransform is not drawn`, { url: first.url });
    }
    const [x0, dx, y0, dy] = gt ? [gt[0], gt[1], gt[3], gt[5]] : [0, 1, H0, -1];
    const extent = [Math.min(x0, x0 + W0 * dx), Math.min(y0, y0 + H0 * dy), Math.max(x0, x0 + W0 * dx), Math.max(y0, y0 + H0 * dy)];
    const origin = [x0, y0];
    const resolutions: number[] = [];
    const renderSizes: Array<[number, number]> = [];
    const sourceSizes: Array<[number, number]> = [];
    for (let k = count - 1; k >= 0; k--) {
      const a = first.levels[k];
      const [h, w] = a.shape.slice(-2);
      const rx = (dx * W0) / w;
      const ry = (dy * H0) / h;
      const [ch, cw] = (a.chunkShape ?? a.shape).slice(-2);
      // Strips: tiles of 256 (as ol/source/GeoTIFF asks of them); so are chunks of more than
      // 1024 a side (a contiguous NetCDF variable is one chunk).
      const size: [number, number] = (cw !== ch && ch < 256) || cw > 1024 || ch > 1024 ? [256, 256] : [cw, ch];
      resolutions.push(rx);
      sourceSizes.push(size);
      renderSizes.push([size[0], size[1] / (rx / Math.abs(ry))]);
    }

    if (!this.getProjection()) {
      const p = await this.#projection(first);
      if (p) this.projection = p;
    }

    // Bands, alpha and scaling as ol/source/GeoTIFF composes them.
    let hasAlpha = false;
    this.#bands = this.#opened.map((o, s) => {
      const info = this.#info[s];
      const indices = info.bands ? info.bands.map((b) => b - 1) : Array.from({ length: o.bandCount }, (_, k) => k);
      if (info.nodata !== undefined && (!Array.isArray(info.nodata) || info.nodata.some((v) => v !== undefined))) hasAlpha = true;
      else if (o.nodata !== null) hasAlpha = true;
      const dtype = o.levels[0].dtype;
      return indices.map((index) => {
        const pick = (v: number | Array<number | undefined> | undefined) => (Array.isArray(v) ? v[index] : v);
        const nd = pick(info.nodata);
        let min = pick(info.min);
        let max = pick(info.max);
        if (min === undefined) min = o.stats && "STATISTICS_MINIMUM" in o.stats ? parseFloat(o.stats.STATISTICS_MINIMUM) : (DTYPE_MIN[dtype] ?? 0);
        if (max === undefined) max = o.stats && "STATISTICS_MAXIMUM" in o.stats ? parseFloat(o.stats.STATISTICS_MAXIMUM) : (DTYPE_MAX[dtype] ?? 255);
        const gain = 255 / (max - min);
        return { index, nodata: nd !== undefined ? nd : o.nodata, gain, bias: -min * gain };
      });
    });
    this.hasAlpha = hasAlpha;
    this.bandCount = this.#bands.reduce((n, b) => n + b.length, hasAlpha ? 1 : 0);
    this.nodataBandIndex = hasAlpha ? this.bandCount : undefined;

    this.tileGrid = new TileGrid({ extent, minZoom: 0, origin, resolutions, tileSizes: renderSizes });
    this.setTileSizes(sourceSizes);
    this.setLoader((z, x, y, options) => this.#loadTile(z, x, y, options));
    this.setState("ready");

    let viewResolutions = resolutions;
    if (resolutions.length === 2) viewResolutions = [resolutions[0], resolutions[1], resolutions[1] / 2];
    else if (resolutions.length === 1) viewResolutions = [resolutions[0] * 2, resolutions[0], resolutions[0] / 2];
    this.viewResolver?.({
      showFullExtent: true,
      projection: this.getProjection() ?? undefined,
      resolutions: viewResolutions,
      center: [(extent[0] + extent[2]) / 2, (extent[1] + extent[3]) / 2],
      extent,
      zoom: 1,
    });
  }

  /** Tile (z, x, y): each source's bands read by shardfetch, composed (by the module) as ol/source/GeoTIFF does. */
  async #loadTile(z: number, x: number, y: number, { signal }: LoaderOptions): Promise<Uint8Array | Float32Array> {
    const [tw, th] = this.getTileSize(z);
    const places = await Promise.all(
      this.#opened.map(async (o, s): Promise<(BandPlace | null)[]> => {
        const a = o.levels[o.levels.length - 1 - z];
        const bands = this.#bands[s];
        const [H, W] = a.shape.slice(-2);
        // Rows of the tile, top down; stored bottom up when flipped. Past the image: each band's fill.
        const t0 = y * th;
        const t1 = Math.min(t0 + th, H);
        const [r0, r1] = o.flip ? [H - t1, H - t0] : [t0, t1];
        const c0 = x * tw;
        const c1 = Math.min(c0 + tw, W);
        if (r0 >= r1 || c0 >= c1) return bands.map(() => null);
        /** Band `index` of `r` (which holds bands from `lo`). */
        const place = (r: { data: unknown; stride: number[] }, index: number, lo: number): BandPlace => {
          const [rowStride, colStride] = r.stride.slice(-2);
          const offset = o.bandAxis !== null ? (index - lo) * r.stride[0] : 0;
          return { data: r.data as TypedArray, dtype: a.dtype, offset, rowStride, colStride, rows: r1 - r0, cols: c1 - c0, flip: o.flip };
        };
        const chunk = a.chunkShape;
        const [ch, cw] = chunk ? chunk.slice(-2) : [0, 0];
        if (chunk && !o.flip && ch === th && cw === tw && (o.bandAxis === null || chunk[0] === 1 || chunk[0] === a.shape[0])) {
          // The tile is a chunk: read as one, so that the tiles OpenLayers asks for in one task
          // are read together (neighbours share requests).
          if (o.bandAxis === null || chunk[0] !== 1) {
            const r = await a.getChunk(o.bandAxis === null ? [y, x] : [0, y, x], { signal });
            return bands.map((b) => place(r, b.index, 0));
          }
          const rs = await Promise.all(bands.map((b) => a.getChunk([b.index, y, x], { signal })));
          return bands.map((b, k) => place(rs[k], b.index, b.index));
        }
        let lo = 0;
        let hi = 1;
        if (o.bandAxis !== null) {
          lo = Math.min(...bands.map((b) => b.index));
          hi = Math.max(...bands.map((b) => b.index)) + 1;
        }
        const sel: Array<[number, number]> = o.bandAxis !== null ? [[lo, hi], [r0, r1], [c0, c1]] : [[r0, r1], [c0, c1]];
        const r = await a.get(sel, { signal });
        return bands.map((b) => place(r, b.index, lo));
      }),
    );
    return composeTile(this.#opened[0]?.url ?? "", tw, th, this.#bands.flat(), places.flat(), this.#normalize, this.hasAlpha);
  }
}

/** `new ShardfetchSource(options)`: a drop-in for `new GeoTIFF(options)` of `ol/source/GeoTIFF`. */
export function createSource(options: Options): ShardfetchSource {
  return new ShardfetchSource(options);
}

export default ShardfetchSource;
