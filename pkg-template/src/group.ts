/**
 * {@link Group}: an opened group; its children open as the group's format, without probing.
 * @packageDocumentation
 */
import type { WasmGroupMeta } from "./wasm/shardfetch.js";
import { api, initialize } from "./module.js";
import type { ShardedArray } from "./array.js";
import type { Format, OpenOptions } from "./types.js";
import { ShardfetchError } from "./errors.js";

/**
 * @internal A node's attributes from the JSON text the module hands over (an object's text,
 * unparsed in the module so that large attributes cost nothing until read).
 */
export function parseAttributes(text: string): Readonly<Record<string, unknown>> {
  const v: unknown = JSON.parse(text);
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** How a group opens its children (the package's `open`). */
type Opener = (url: string, options: OpenOptions) => Promise<ShardedArray | Group>;

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

  /** @internal Use {@link open} or {@link Group.open}. */
  constructor(meta: WasmGroupMeta, options: OpenOptions, open: Opener) {
    this.url = meta.url;
    this.format = meta.format;
    this.attributesText = meta.attributes ?? "{}";
    this.#root = meta.root;
    this.#path = meta.path;
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
    if (node instanceof Group) {
      throw new ShardfetchError("NotAnArray", `${node.url} is a group, not an array`, { url: node.url });
    }
    return node;
  }

  /** Open a child node (path relative to this group); options default to the group's. */
  async open(child: string, options: OpenOptions = {}): Promise<ShardedArray | Group> {
    await initialize();
    const path = api().childPath(this.#path, api().childPath(child, options.path ?? ""));
    return this.#open(this.#root, { format: this.format, ...this.#options, ...options, path });
  }
}
