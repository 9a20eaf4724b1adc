/**
 * {@link openMultiscale}: a multiscale image as one object — OME-Zarr (0.5 under `ome`, 0.4 and
 * older in the group's attributes) or a Neuroglancer precomputed volume. The description (axes,
 * levels finest first with their scale and translation, channels) comes from the core
 * (`metadata/multiscale.rs`); this module opens the levels and adapts types.
 * @packageDocumentation
 */
import type { WasmMultiscale } from "./wasm/shardfetch.js";
import { api, initialize } from "./module.js";
import type { ShardedArray } from "./array.js";
import { Group } from "./group.js";
import { open } from "./open.js";
import type { OpenOptions } from "./types.js";
import { ShardfetchError } from "./errors.js";

/** One axis of a multiscale image. */
export interface MultiscaleAxis {
  name: string;
  /** `"space"`, `"time"`, `"channel"` (or what the writer named), if known. */
  type: string | null;
  unit: string | null;
}

/** One resolution level: its array, and where its voxels sit in physical space. */
export interface MultiscaleLevel {
  /** Relative to the image (OME: the dataset's path; precomputed: the scale's key). */
  path: string;
  /** Physical size of a voxel per axis. */
  scale: number[];
  /** Physical position of voxel 0 per axis. */
  translation: number[];
  array: ShardedArray;
}

type Description = WasmMultiscale;

/** A multiscale image; levels finest first. */
export class Multiscale {
  readonly url: string;
  readonly format: "ome-zarr" | "precomputed";
  /** OME-Zarr's version (`"0.5"`, `"0.4"`, …) or `"precomputed"`. */
  readonly version: string;
  readonly name: string | null;
  readonly axes: readonly MultiscaleAxis[];
  readonly levels: readonly MultiscaleLevel[];
  /** OME `omero`: the channels' labels, colours and display windows, as written. */
  readonly omero: Readonly<Record<string, unknown>> | null;
  /** OME `image-label`, as written, when this image is a label image. */
  readonly imageLabel: Readonly<Record<string, unknown>> | null;
  readonly #group: Group | null;
  readonly #options: OpenOptions;

  /** @internal Use {@link openMultiscale}. */
  constructor(url: string, d: Description, levels: MultiscaleLevel[], group: Group | null, options: OpenOptions) {
    this.url = url;
    this.format = group ? "ome-zarr" : "precomputed";
    this.version = d.version;
    this.name = d.name;
    this.axes = Object.freeze(d.axes);
    this.levels = Object.freeze(levels);
    this.omero = (d.omero as Record<string, unknown>) ?? null;
    this.imageLabel = (d.imageLabel as Record<string, unknown>) ?? null;
    this.#group = group;
    this.#options = options;
  }

  /** OME-Zarr: the names of the label images under `labels/` (none: `[]`). */
  async labels(): Promise<string[]> {
    if (!this.#group) return [];
    try {
      const g = await this.#group.open("labels", this.#options);
      // OME 0.5 keeps the list under `ome`; 0.4 and older at the top.
      const attrs = g instanceof Group ? (g.attributes as { ome?: { labels?: unknown }; labels?: unknown }) : undefined;
      const names = attrs?.ome?.labels ?? attrs?.labels;
      return Array.isArray(names) ? names.filter((n): n is string => typeof n === "string") : [];
    } catch (e) {
      if ((e as { code?: string }).code === "NotFound") return [];
      throw e;
    }
  }

  /**
   * OME-Zarr: open the label image `name` (one of {@link labels}), through this image's group
   * (its URL's query string, a signed URL's token, is kept).
   */
  async openLabel(name: string, options: OpenOptions = {}): Promise<Multiscale> {
    if (!this.#group) throw new ShardfetchError("NotFound", `${this.url}: a precomputed volume has no OME labels`, { url: this.url });
    const merged = { ...this.#options, ...options };
    return openMultiscale(await this.#group.open(`labels/${name}`, merged), merged);
  }

  /** Close every level's array. */
  close(): void {
    for (const l of this.levels) l.array.close();
  }
}

/**
 * Open the multiscale image at `url` (or the group, or precomputed volume, already opened
 * there): an OME-Zarr image group (Zarr v3 or v2) or a Neuroglancer precomputed volume. Every level is opened (precomputed: from the one `info`).
 * Rejects with `UnsupportedFormat` when `url` holds neither.
 */
export async function openMultiscale(url: string | Group | ShardedArray, options: OpenOptions = {}): Promise<Multiscale> {
  await initialize();
  // An already opened group (or precomputed volume) is taken as is: no request again.
  const node = typeof url === "string" ? await open(url, options) : url;
  if (!(node instanceof Group)) {
    if (!node.scales) {
      node.close();
      throw new ShardfetchError("UnsupportedFormat", `${node.url} is a single array, not a multiscale image`, { url: node.url });
    }
    const info = { scales: node.scales.map((s) => ({ key: s.key, resolution: s.resolution, voxel_offset: s.voxelOffset })) };
    const d = api().precomputedMultiscale(JSON.stringify(info));
    const byKey = new Map(node.scales.map((s, i) => [s.key, i]));
    const levels = d.levels.map((l) => {
      const i = byKey.get(l.path) ?? Number(l.path);
      return { ...l, array: i === node.scaleIndex ? node : node.openScale(i) };
    });
    return new Multiscale(node.url, d, levels, null, options);
  }
  const d = api().omeMultiscale(node.attributesText, undefined);
  if (d === undefined) {
    throw new ShardfetchError("UnsupportedFormat", `${node.url}: a group without OME-Zarr "multiscales"`, { url: node.url });
  }
  const arrays = await Promise.all(d.levels.map((l) => node.openArray(l.path, options)));
  if (arrays.some((a) => a.shape.length !== d.axes.length)) {
    for (const a of arrays) a.close();
    throw new ShardfetchError("InvalidMetadata", `${node.url}: the axes and the levels' dimensions disagree`, { url: node.url });
  }
  const levels = d.levels.map((l, i) => ({ ...l, array: arrays[i] }));
  return new Multiscale(node.url, d, levels, node, options);
}
