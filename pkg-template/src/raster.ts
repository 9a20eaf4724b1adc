/**
 * The map adapters' pixel work, done by the raster module (`decoders/raster`, loaded on the
 * first tile drawn): a tile's bands composed for OpenLayers, a MapLibre tile resampled and
 * coloured. Exported to the adapters' entry points only (`__composeTile`, `__paintTile`, `__prepareRaster`).
 * @internal
 */
import { runDecoder } from "./decoders.js";
import { loadDecoders } from "./decoder-urls.js";
import { ShardfetchError, toError } from "./errors.js";
import type { TypedArray } from "./types.js";

/** The module's sample type codes (`Sample::ALL` in `decoders/raster`; decoders.test.mjs checks they agree). */
const SAMPLES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float16", "float32", "float64"];

function sampleOf(dtype: string, url: string): number {
  const c = SAMPLES.indexOf(dtype === "bool" ? "uint8" : dtype);
  if (c < 0) throw new ShardfetchError("UnsupportedDataType", `${url}: ${dtype} values cannot be drawn`, { url });
  return c;
}

/** A typed array's bytes. */
function bytesOf(data: ArrayBufferView): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * Start loading the raster module (an adapter does so when it is made, so that the module
 * arrives beside the first metadata rather than after the first tile's values); failures are
 * reported by the first tile.
 */
export function prepareRaster(): void {
  loadDecoders(["raster"]).catch(() => undefined);
}

/** Run operation `op` of the raster module on `params` and `payload` (its parts, in order). */
async function run(url: string, op: number, params: number[], payload: Uint8Array[]): Promise<Uint8Array> {
  await loadDecoders(["raster"]);
  const head = params.length * 8;
  const input = new Uint8Array(head + payload.reduce((n, p) => n + p.length, 0));
  new Float64Array(input.buffer, 0, params.length).set(params);
  let at = head;
  for (const p of payload) {
    input.set(p, at);
    at += p.length;
  }
  try {
    return runDecoder("raster", input, new Float64Array([op, params.length]));
  } catch (e) {
    // Bad geometry is the adapter's bug: Internal; a tile too large stays TooLarge.
    const err = toError(e);
    const code = err.code === "TooLarge" ? "TooLarge" : "Internal";
    throw new ShardfetchError(code, `${url}: drawing a tile: ${err.message}`, { url, cause: e });
  }
}

/** How a band is drawn: its nodata (the fill past the image too; 0 without), gain and bias. */
export interface BandStyle {
  nodata: number | null;
  gain: number;
  bias: number;
}

/** Where a band is in a read: its first element, row and column strides, the image's rows and columns there. */
export interface BandPlace {
  data: TypedArray;
  dtype: string;
  offset: number;
  rowStride: number;
  colStride: number;
  rows: number;
  cols: number;
  /** Rows stored bottom up. */
  flip: boolean;
}

/**
 * A `width × height` tile of `ol/source/DataTile`, bands interleaved as `ol/source/GeoTIFF`
 * makes them: bytes (`gain·v + bias` clamped) when `normalize`, else float32 values; with
 * `alpha`, one more band, 0 where every band with a nodata is at it. A band given `null` is
 * its fill.
 */
export async function composeTile(
  url: string,
  width: number,
  height: number,
  styles: BandStyle[],
  places: (BandPlace | null)[],
  normalize: boolean,
  alpha: boolean,
): Promise<Uint8Array | Float32Array> {
  const params = [width, height, normalize ? 1 : 0, alpha ? 1 : 0, styles.length];
  // Each read's bytes once, however many bands it holds.
  const payload: Uint8Array[] = [];
  const starts = new Map<ArrayBufferView, number>();
  let end = 0;
  styles.forEach((s, k) => {
    const p = places[k];
    params.push(s.nodata === null ? 0 : 1, s.nodata ?? 0, s.gain, s.bias);
    if (!p) {
      params.push(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
      return;
    }
    let start = starts.get(p.data);
    if (start === undefined) {
      start = end;
      starts.set(p.data, start);
      payload.push(bytesOf(p.data));
      end += p.data.byteLength;
    }
    params.push(1, sampleOf(p.dtype, url), start, p.data.byteLength, p.offset, p.rowStride, p.colStride, p.rows, p.cols, p.flip ? 1 : 0);
  });
  const out = await run(url, 1, params, payload);
  return normalize ? out : new Float32Array(out.buffer, out.byteOffset, out.byteLength / 4);
}

/** What a MapLibre tile shows of a level's box (see `paintTile`). */
export interface TileView {
  /** The box read: its values, type and strides (bands, rows, columns). */
  data: TypedArray;
  dtype: string;
  strides: [number, number, number];
  /** The box's rows and columns in the level. */
  rows: [number, number];
  cols: [number, number];
  /** The tile's corner in level pixels, and level pixels per tile pixel. */
  corner: [number, number];
  scale: number;
  bands: number[];
  lo: number;
  span: number;
  nodata: number | null;
  /** 256 RGB triples; none for RGB(A). */
  lut?: Uint8Array;
}

/** A `size²` RGBA tile: nearest sampling; transparent outside the box and where every band is NaN or nodata. */
export async function paintTile(url: string, size: number, v: TileView): Promise<Uint8ClampedArray> {
  const params = [size, sampleOf(v.dtype, url), ...v.strides, ...v.rows, ...v.cols, ...v.corner, v.scale, v.lo, v.span];
  params.push(v.nodata === null ? 0 : 1, v.nodata ?? 0, v.lut ? 1 : 0, v.bands.length, ...v.bands);
  const out = await run(url, 2, params, v.lut ? [v.lut, bytesOf(v.data)] : [bytesOf(v.data)]);
  return new Uint8ClampedArray(out.buffer, out.byteOffset, out.byteLength);
}
