/**
 * The entry points: {@link open} and {@link openArray}.
 * @packageDocumentation
 */
import type { WasmArray, WasmGroup } from "./wasm/shardfetch.js";
import type { OpenOptions } from "./types.js";
import { checkSignal, ShardfetchError, toError } from "./errors.js";
import { api, initialize, unlessTrapped } from "./module.js";
import { dropEarly, earlyMetadataRequest, wasmOptions } from "./early.js";
import { opens } from "./warmup.js";
import { ShardedArray } from "./array.js";
import { Group, notAnArray } from "./group.js";
import { loadDecoders, missingDecoder } from "./decoder-urls.js";

/** Open the node (array or group) at `url` (+ `options.path`). */
export function open(url: string, options: OpenOptions = {}): Promise<ShardedArray | Group> {
  return openVia(url, options);
}

/** {@link open}, through a group whose consolidated metadata answers the node's metadata. */
async function openVia(url: string, options: OpenOptions, via?: WasmGroup): Promise<ShardedArray | Group> {
  if (typeof url !== "string" && !((url as unknown) instanceof URL)) {
    throw new ShardfetchError("InvalidSelection", "url must be a string");
  }
  checkSignal(options.signal);
  const opening = opens();
  const early = earlyMetadataRequest(String(url), options);
  let node: WasmArray | WasmGroup;
  let glue: ReturnType<typeof api>;
  try {
    try {
      // (The file's reader module too, when one loads beside the first request: an open that
      // started without it would stop at its first question and start again.)
      await Promise.all([initialize(), early?.reader]);
    } finally {
      opening.done();
    }
    checkSignal(options.signal);
    glue = api();
    for (let loaded = 0; ; loaded++) {
      try {
        // (The early answer goes to the attempt that asks for it: an HDF5 open asks after its reader loaded.)
        const o = wasmOptions(options, early);
        node = await unlessTrapped(via ? via.openChild(String(url), o) : glue.openNode(String(url), o));
        break;
      } catch (e) {
        // A store kind that reads through a decoder module (HDF5) asks for it before any request
        // of its own: loaded, the open starts again.
        const name = loaded < 3 ? missingDecoder(e) : null;
        if (name === null) throw toError(e);
        await loadDecoders([name]);
      }
    }
  } finally {
    // An early answer the open did not take (it failed, or was aborted, first): not left unread.
    dropEarly(early);
  }
  const isArray = (n: WasmArray | WasmGroup): n is WasmArray => n instanceof glue.WasmArray;
  try {
    if (isArray(node)) {
      // The decoders outside the module that this array (every scale of it) needs, loaded
      // now: its codec chain calls them synchronously.
      try {
        await loadDecoders(node.decoders());
      } catch (e) {
        node.free();
        throw e;
      }
      return new ShardedArray(node, node.meta(), options);
    }
    // A group needs nothing more from the module once its metadata is read, but for what its
    // children open from: its consolidated metadata, the directory of the archive holding it.
    const meta = node.meta();
    const keep = meta.consolidated || meta.container !== null ? node : null;
    if (keep === null) node.free();
    return new Group(meta, options, openVia, keep);
  } catch (e) {
    throw toError(e);
  }
}

/** Open the array at `url` (+ `options.path`); a group there rejects with code `NotAnArray`. */
export async function openArray(url: string, options: OpenOptions = {}): Promise<ShardedArray> {
  const node = await open(url, options);
  if (!(node instanceof ShardedArray)) throw notAnArray(node);
  return node;
}
