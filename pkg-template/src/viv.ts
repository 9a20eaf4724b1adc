/**
 * `shardfetch/viv`: a multiscale image as the loader Viv's layers take (`@hms-dbmi/viv`'s own
 * `loadOmeZarr` and `loadOmeTiff` return the same shape): `{ data: PixelSource[], metadata }`,
 * one `PixelSource` per level, finest first. OME-TIFF is read by range through shardfetch's TIFF
 * store, not through geotiff.js. The package does not depend on Viv; these are plain
 * objects with its interface.
 * @packageDocumentation
 */
// From the package's entry (kept external in the build): one instance of the module, shared.
import { Group, open, openMultiscale, ShardfetchError } from "./index.js";
import type { Multiscale, MultiscaleLevel, OpenOptions, Selection, ShardedArray, TypedArray } from "./index.js";

/** Viv's names of the data types it renders. */
export type VivDtype = "Uint8" | "Uint16" | "Uint32" | "Int8" | "Int16" | "Int32" | "Float32" | "Float64";

/** Viv's `PixelData`: one plane, rows of `width`. */
export interface PixelData {
  data: TypedArray;
  width: number;
  height: number;
}

/** Indices on the axes other than y and x, by axis name (Viv's `selection`). */
export type PixelSourceSelection = Record<string, number>;

const DTYPES: Record<string, VivDtype> = {
  uint8: "Uint8",
  uint16: "Uint16",
  uint32: "Uint32",
  int8: "Int8",
  int16: "Int16",
  int32: "Int32",
  float32: "Float32",
  float64: "Float64",
};

/** One level as Viv's `PixelSource`. */
export class ShardfetchPixelSource {
  readonly shape: number[];
  readonly labels: string[];
  readonly dtype: VivDtype;
  readonly tileSize: number;
  readonly meta: { physicalSizes?: Record<string, { size: number; unit: string }> };
  readonly array: ShardedArray;

  constructor(level: MultiscaleLevel, ms: Multiscale) {
    const a = level.array;
    this.array = a;
    this.shape = [...a.shape];
    this.labels = ms.axes.map((x) => x.name);
    const n = this.labels.length;
    if (this.labels[n - 2] !== "y" || this.labels[n - 1] !== "x") {
      throw new ShardfetchError("UnsupportedFormat", `${ms.url}: Viv needs the axes to end with y, x (they are ${this.labels.join(", ")})`, { url: ms.url });
    }
    const dtype = DTYPES[a.dtype];
    if (!dtype) throw new ShardfetchError("UnsupportedDataType", `${a.url}: Viv does not render ${a.dtype}`, { url: a.url });
    this.dtype = dtype;
    // Viv wants a power of two: the chunks' width when it is one.
    const w = a.chunkShape?.[n - 1] ?? 0;
    this.tileSize = w > 0 && (w & (w - 1)) === 0 ? w : 512;
    const physicalSizes: Record<string, { size: number; unit: string }> = {};
    ms.axes.forEach((x, k) => {
      if (x.type === "space") physicalSizes[x.name] = { size: level.scale[k], unit: x.unit ?? "" };
    });
    this.meta = { physicalSizes };
  }

  #selection(selection: PixelSourceSelection, y: [number, number] | null, x: [number, number] | null): Selection {
    const n = this.labels.length;
    return this.labels.map((name, k) => {
      if (k === n - 2) return y;
      if (k === n - 1) return x;
      return selection[name] ?? 0;
    });
  }

  async #plane(sel: Selection, signal?: AbortSignal): Promise<PixelData> {
    const r = await this.array.get(sel, { signal });
    const n = r.shape.length;
    return { data: r.data as TypedArray, width: r.shape[n - 1], height: r.shape[n - 2] };
  }

  /** The whole y-x plane at `selection`. */
  getRaster({ selection, signal }: { selection: PixelSourceSelection; signal?: AbortSignal }): Promise<PixelData> {
    return this.#plane(this.#selection(selection, null, null), signal);
  }

  /** Tile (`x`, `y`) of `tileSize` (the last ones cut at the edges) at `selection`. */
  getTile({ x, y, selection, signal }: { x: number; y: number; selection: PixelSourceSelection; signal?: AbortSignal }): Promise<PixelData> {
    const n = this.shape.length;
    const t = this.tileSize;
    const ys: [number, number] = [y * t, Math.min((y + 1) * t, this.shape[n - 2])];
    const xs: [number, number] = [x * t, Math.min((x + 1) * t, this.shape[n - 1])];
    return this.#plane(this.#selection(selection, ys, xs), signal);
  }

  /** Viv reports a failed tile here; an aborted one is expected (the view moved). */
  onTileError(err: Error): void {
    if ((err as { code?: string }).code !== "Aborted") console.error(err);
  }
}

/** Viv's loader of an opened multiscale (its levels, its OME attributes). */
function loaderOf(ms: Multiscale): { data: ShardfetchPixelSource[]; metadata: Record<string, unknown>; multiscale: Multiscale } {
  try {
    const data = ms.levels.map((l) => new ShardfetchPixelSource(l, ms));
    const multiscales = [{ name: ms.name, version: ms.version, axes: ms.axes, datasets: ms.levels.map((l) => ({ path: l.path })) }];
    const metadata = { omero: ms.omero, name: ms.name, version: ms.version, multiscales };
    return { data, metadata, multiscale: ms };
  } catch (e) {
    ms.close();
    throw e;
  }
}

/**
 * Open the OME-Zarr image at `url` as Viv's loader: `{ data, metadata }`, `data` one
 * `PixelSource` per level (finest first), `metadata` the image's OME attributes (`omero`,
 * `multiscales`).
 */
export async function loadOmeZarr(url: string, options: OpenOptions = {}): Promise<{ data: ShardfetchPixelSource[]; metadata: Record<string, unknown>; multiscale: Multiscale }> {
  return loaderOf(await openMultiscale(url, options));
}

/** OME-XML's `Pixels`, as Viv's own `loadOmeTiff` gives it (what Viv apps read channels from). */
function pixelsOf(ms: Multiscale): Record<string, unknown> {
  const shape = ms.levels[0].array.shape;
  const size = (name: string) => {
    const k = ms.axes.findIndex((a) => a.name === name);
    return k < 0 ? 1 : shape[k];
  };
  const channels = (ms.omero?.channels as Array<Record<string, unknown>> | undefined) ?? [];
  const pixels: Record<string, unknown> = {
    DimensionOrder: "XYZCT",
    SizeX: size("x"),
    SizeY: size("y"),
    SizeZ: size("z"),
    SizeC: size("c"),
    SizeT: size("t"),
    Type: ms.levels[0].array.dtype,
    Channels: Array.from({ length: size("c") }, (_, k) => ({
      ID: `Channel:0:${k}`,
      Name: (channels[k]?.label as string | undefined) ?? `Channel ${k}`,
      SamplesPerPixel: 1,
      ...(typeof channels[k]?.color === "string" ? { Color: channels[k].color } : {}),
    })),
  };
  for (const a of ms.axes) {
    const k = ms.axes.indexOf(a);
    if (a.type === "space" && ["x", "y", "z"].includes(a.name)) {
      pixels[`PhysicalSize${a.name.toUpperCase()}`] = ms.levels[0].scale[k];
      if (a.unit) pixels[`PhysicalSize${a.name.toUpperCase()}Unit`] = a.unit;
    }
  }
  return pixels;
}

/**
 * Open the OME-TIFF at `url` as Viv's `loadOmeTiff` would: `{ data, metadata }`, `data` one
 * `PixelSource` per pyramid level (its SubIFDs; finest first), `metadata` with OME-XML's
 * `Name` and `Pixels` (sizes, type, channels, physical sizes) besides the OME-Zarr attributes.
 * A file of several series gives series `series` (default 0). Tiles are read by range, decoded
 * by shardfetch's workers.
 */
export async function loadOmeTiff(
  url: string,
  options: OpenOptions & { series?: number } = {},
): Promise<{ data: ShardfetchPixelSource[]; metadata: Record<string, unknown>; multiscale: Multiscale }> {
  const { series = 0, ...rest } = options;
  let node = await open(url, rest);
  if (node instanceof Group && node.attributes["bioformats2raw.layout"] !== undefined) {
    node = await node.open(String(series), rest);
  }
  const loader = loaderOf(await openMultiscale(node, rest));
  loader.metadata = { ...loader.metadata, Name: loader.multiscale.name ?? "", Pixels: pixelsOf(loader.multiscale) };
  return loader;
}
