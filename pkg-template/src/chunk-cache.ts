/**
 * Decoded chunks kept for `getChunk` (option `chunkCacheBytes`), least recently used out;
 * results are copies both ways. Each is kept with the stamp of its object's version (the
 * module's `chunkStamp`): served only while that is its object's version, and, under `recheck`
 * after a time, only that long.
 * @internal
 */
import type { ArrayData, ChunkResult } from "./types.js";

type Result = ChunkResult<ArrayData>;

function copyResult(r: Result): Result {
  const data = (r.data as Uint8Array).slice() as unknown as ArrayData; // typed arrays and arrays have slice()
  return { data, shape: [...r.shape], stride: [...r.stride] };
}

/** Bytes a result holds (value arrays: an estimate per element). */
function sizeOf(r: Result): number {
  return "byteLength" in r.data ? r.data.byteLength : r.data.length * 64;
}

interface Kept {
  result: Result;
  stamp: number;
  at: number;
}

export class ChunkCache {
  readonly #map = new Map<string, Kept>();
  #bytes = 0;
  hits = 0;
  /** `maxAgeMs`: how long an entry is served (`recheck` in milliseconds), else for good. */
  constructor(readonly capacity: number, readonly maxAgeMs = Infinity) {}

  /** The chunk at `coords` if kept under `stamp` (its object's version now) and not too old. */
  get(coords: readonly number[], stamp: number): Result | undefined {
    const k = coords.join(",");
    const e = this.#map.get(k);
    if (!e) return undefined;
    this.#map.delete(k);
    if (e.stamp !== stamp || performance.now() - e.at > this.maxAgeMs) {
      this.#bytes -= sizeOf(e.result);
      return undefined;
    }
    this.#map.set(k, e);
    this.hits++;
    return copyResult(e.result);
  }

  /** Keep `r`, read under `stamp`, if `now` (its object's stamp now) is still that. */
  put(coords: readonly number[], r: Result, stamp: number, now: number): void {
    const k = coords.join(",");
    const size = sizeOf(r);
    if (size > this.capacity || this.#map.has(k) || stamp !== now) return;
    this.#map.set(k, { result: copyResult(r), stamp, at: performance.now() });
    this.#bytes += size;
    for (const [old, v] of this.#map) {
      if (this.#bytes <= this.capacity) break;
      this.#map.delete(old);
      this.#bytes -= sizeOf(v.result);
    }
  }
}
