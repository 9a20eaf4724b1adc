/**
 * Decoded chunks kept for `getChunk` (option `chunkCacheBytes`), least recently used out;
 * results are copies both ways.
 * @internal
 */
import type { ChunkResult, TypedArray } from "./types.js";

function copyResult(r: ChunkResult): ChunkResult {
  const data = (r.data as Uint8Array).slice() as unknown as TypedArray; // every TypedArray has slice()
  return { data, shape: [...r.shape], stride: [...r.stride] };
}

export class ChunkCache {
  readonly #map = new Map<string, ChunkResult>();
  #bytes = 0;
  hits = 0;
  constructor(readonly capacity: number) {}

  get(coords: readonly number[]): ChunkResult | undefined {
    const k = coords.join(",");
    const r = this.#map.get(k);
    if (!r) return undefined;
    this.#map.delete(k);
    this.#map.set(k, r);
    this.hits++;
    return copyResult(r);
  }

  put(coords: readonly number[], r: ChunkResult): void {
    const k = coords.join(",");
    const size = r.data.byteLength;
    if (size > this.capacity || this.#map.has(k)) return;
    this.#map.set(k, copyResult(r));
    this.#bytes += size;
    for (const [old, v] of this.#map) {
      if (this.#bytes <= this.capacity) break;
      this.#map.delete(old);
      this.#bytes -= v.data.byteLength;
    }
  }
}
