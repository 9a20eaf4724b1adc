/**
 * {@link Group}: an opened group; its children open as the group's format, without probing.
 * @packageDocumentation
 */
import type { WasmGroup, WasmGroupMeta } from "./wasm/shardfetch.js";
import { api, initialize, moduleGeneration } from "./module.js";
import type { ShardedArray } from "./array.js";
import type { Container, Format, OpenOptions } from "./types.js";
import { ShardfetchError } from "./errors.js";
import { containerOf, parseAttributes } from "./node-meta.js";

/**
 * @internal `NotAnArray` for `g` (closed: nobody holds it), saying what the group holds where its
 * metadata shows it: an OME-Zarr image's levels, or the arrays its consolidated metadata lists.
 */
export function notAnArray(g: Group): ShardfetchError {
  g.close();
  let hint = "";
  try {
    const a = g.attributes as { ome?: { multiscales?: unknown }; multiscales?: unknown };
    const ms = (a.ome?.multiscales ?? a.multiscales) as { datasets?: { path?: unknown }[] }[] | undefined;
    const first = Array.isArray(ms) ? ms[0]?.datasets?.[0]?.path : undefined;
    const arrays = g.children().filter((c) => c.kind === "array").map((c) => `"${c.name}"`);
    if (typeof first === "string") {
      hint = ` (an OME-Zarr multiscale image: openMultiscale() opens its levels, the first at path "${first}")`;
    } else if (arrays.length > 0) {
      hint = ` (its arrays: ${arrays.slice(0, 4).join(", ")}${arrays.length > 4 ? ", …" : ""})`;
    }
  } catch {
    // Attributes that are not JSON: no hint.
  }
  return new ShardfetchError("NotAnArray", `${g.url} is a group, not an array${hint}`, { url: g.url });
}

/**
 * How a group opens its children (the package's `open`); `via`: the group's module object,
 * whose consolidated metadata answers the children's metadata requests.
 */
type Opener = (url: string, options: OpenOptions, via?: WasmGroup) => Promise<ShardedArray | Group>;

/** A member of a group, as its consolidated metadata lists it. */
export interface GroupChild {
  name: string;
  kind: "array" | "group";
}

/** An opened group (Zarr v3, v2 or draft v3). */
export class Group {
  /** URL of the group's directory (no trailing slash). */
  readonly url: string;
  /** The storage format; children are opened as the same format without detection. */
  readonly format: Format;
  /** @internal The attributes' JSON text, as the module handed it over. */
  readonly attributesText: string;
  #attributes: Readonly<Record<string, unknown>> | undefined;
  /** The URL the group was opened from and its path under it (a store root for the draft layout). */
  readonly #root: string;
  readonly #path: string;
  readonly #options: OpenOptions;
  readonly #open: Opener;
  readonly #children: readonly GroupChild[];
  /** Whether consolidated metadata describes this group's members. */
  readonly consolidated: boolean;
  /** The archive holding the group (a `.zip`, an `.ozx`) or its Icechunk repository, or `null`. */
  readonly container: Container | null;
  /** The module's group (kept while it has consolidated metadata to answer from), and its instance. */
  #handle: WasmGroup | null;
  readonly #generation: number;

  /** @internal Use {@link open} or {@link Group.open}. */
  constructor(meta: WasmGroupMeta, options: OpenOptions, open: Opener, handle: WasmGroup | null = null) {
    this.url = meta.url;
    this.format = meta.format;
    this.attributesText = meta.attributes ?? "{}";
    this.#root = meta.root;
    this.#path = meta.path;
    this.#children = Object.freeze((meta.children ?? []).map((c) => Object.freeze({ name: c.name, kind: c.kind })));
    this.consolidated = meta.consolidated ?? false;
    this.container = containerOf(meta.container);
    this.#handle = handle;
    this.#generation = moduleGeneration();
    const { path: _path, ...rest } = options;
    void _path;
    this.#options = rest;
    this.#open = open;
  }

  /** The group's attributes (parsed on first access). */
  get attributes(): Readonly<Record<string, unknown>> {
    return (this.#attributes ??= parseAttributes(this.attributesText));
  }

  /** Open a child array (path relative to this group); options default to the group's. */
  async openArray(childPath: string, options: OpenOptions = {}): Promise<ShardedArray> {
    const node = await this.open(childPath, options);
    if (node instanceof Group) throw notAnArray(node);
    return node;
  }

  /**
   * The group's children as its consolidated metadata lists them (Zarr v3
   * `consolidated_metadata`, v2 `.zmetadata`; a child group's from its parent's), or an Icechunk
   * snapshot does: name and kind, in the document's (snapshot's) order. Empty when there is none
   * (a plain store cannot be listed over HTTP).
   */
  children(): readonly GroupChild[] {
    return this.#children;
  }

  /**
   * Open a child node (path relative to this group); options default to the group's. With
   * consolidated metadata, its metadata comes from there: no request.
   */
  async open(child: string, options: OpenOptions = {}): Promise<ShardedArray | Group> {
    await initialize();
    const path = api().childPath(this.#path, api().childPath(child, options.path ?? ""));
    // The module's group belongs to the instance that made it: after a replacement, plain reads.
    const via = this.#handle !== null && this.#generation === moduleGeneration() ? this.#handle : undefined;
    // (The root names the group's store as it was read: a repository's children at its snapshot.)
    return this.#open(this.#root, { format: this.format, ...this.#options, ...options, path }, via);
  }

  /** Let go of the consolidated metadata held for the children (otherwise kept until the page goes). */
  close(): void {
    this.#handle?.free();
    this.#handle = null;
  }
}
