/**
 * The typed array of each data type, and wasm chunks as {@link ChunkResult}s (shapes and
 * strides come ready from the module, trailing element axis included).
 * @internal
 */
import type { WasmChunk } from "./wasm/shardfetch.js";
import type { ArrayData, ChunkResult, DataType, TypedArray } from "./types.js";

export type TypedArrayCtor = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): TypedArray;
  readonly BYTES_PER_ELEMENT: number;
};

const CTORS: Record<DataType, TypedArrayCtor | undefined> = {
  bool: Uint8Array,
  uint8: Uint8Array,
  int8: Int8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
  datetime64: BigInt64Array,
  timedelta64: BigInt64Array,
  float32: Float32Array,
  float64: Float64Array,
  complex64: Float32Array,
  complex128: Float64Array,
  raw_bytes: Uint8Array,
  structured: Uint8Array,
  // One JS value per element (see ArrayData): no typed array.
  string: undefined,
  bytes: undefined,
  json: undefined,
  fixed_length_utf32: undefined,
  null_terminated_bytes: undefined,
  fixed_length_string: undefined,
  // Where the platform has one; else the raw IEEE half bits.
  float16: (globalThis as { Float16Array?: TypedArrayCtor }).Float16Array ?? Uint16Array,
};

export function ctorFor(dtype: DataType): TypedArrayCtor {
  return CTORS[dtype] ?? Uint8Array;
}

export function toResult(chunk: WasmChunk, ctor: TypedArrayCtor): ChunkResult<ArrayData> {
  if ("values" in chunk) return { data: chunk.values, shape: chunk.shape, stride: chunk.stride };
  let bytes = chunk.bytes;
  const size = ctor.BYTES_PER_ELEMENT;
  if (bytes.byteOffset % size !== 0) bytes = bytes.slice(); // defensive: realign (never expected)
  const data = new ctor(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / size));
  return { data, shape: Array.from(chunk.shape), stride: Array.from(chunk.stride) };
}
