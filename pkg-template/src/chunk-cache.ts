/**
 * Decoded chunks kept for `getChunk` (option `chunkCacheBytes`), least recently used out;
 * results are copies both ways.
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

export class ChunkCache {
  readonly #map = new Map<string, Result>();
  #bytes = 0;
  hits = 0;
  constructor(readonly capacity: number) {}

  get(coords: readonly number[]): Result | undefined {
    const k = coords.join(",");
    const r = this.#map.get(k);
    if (!r) return undefined;
    this.#map.delete(k);
    this.#map.set(k, r);
    this.hits++;
    return copyResult(r);
  }

  put(coords: readonly number[], r: Result): void {
    const k = coords.join(",");
    const size = sizeOf(r);
    if (size > this.capacity || this.#map.has(k)) return;
    this.#map.set(k, copyResult(r));
    this.#bytes += size;
    for (const [old, v] of this.#map) {
      if (this.#bytes <= this.capacity) break;
      this.#map.delete(old);
      this.#bytes -= sizeOf(v);
    }
  }
}
