/**
 * A decoding worker: its own instance of the wasm module, decoders rebuilt from array specs
 * (no network), buffers transferred both ways.
 *
 * Messages in: `{ module }` once (the compiled WebAssembly.Module), then jobs `{ id, key, spec?,
 * coords, bytes, lo?, hi? }` (`spec` the first time a worker sees array `key`), or
 * `{ forget: key }`. Out: `{ id, bytes, shape?, stride?, ms }` (`ms`: decoding time) or
 * `{ id, error }`.
 * @internal
 */
import init, { WasmDecoder } from "./wasm/shardfetch.js";

interface Job {
  id: number;
  key: number;
  spec?: string;
  coords: number[];
  bytes: Uint8Array;
  lo?: number[];
  hi?: number[];
}

type Incoming = { module: WebAssembly.Module } | { forget: number } | Job;

interface Scope {
  onmessage: ((ev: MessageEvent<Incoming>) => void) | null;
  postMessage(message: unknown, transfer?: Transferable[]): void;
}

const scope = self as unknown as Scope;
let ready: Promise<unknown> | undefined;
const decoders = new Map<number, WasmDecoder>();
const specs = new Map<number, string>();

function decoder(key: number): WasmDecoder {
  let d = decoders.get(key);
  if (!d) {
    const spec = specs.get(key);
    if (spec === undefined) throw { code: "Internal", message: `decoding worker: no spec for array ${key}` };
    d = new WasmDecoder(spec);
    decoders.set(key, d);
  }
  return d;
}

function errorOf(e: unknown): { code: string; message: string; status?: number } {
  const o = (e ?? {}) as { code?: unknown; message?: unknown; status?: unknown };
  return {
    code: typeof o.code === "string" ? o.code : "Internal",
    message: typeof o.message === "string" ? o.message : String(e),
    ...(typeof o.status === "number" ? { status: o.status } : {}),
  };
}

scope.onmessage = async (ev) => {
  const m = ev.data;
  if ("module" in m) {
    ready = init({ module_or_path: m.module });
    return;
  }
  if ("forget" in m) {
    decoders.get(m.forget)?.free();
    decoders.delete(m.forget);
    specs.delete(m.forget);
    return;
  }
  try {
    await ready;
    if (m.spec !== undefined) specs.set(m.key, m.spec);
    const d = decoder(m.key);
    const t0 = performance.now();
    if (m.lo && m.hi) {
      const box = d.cut(m.coords, m.bytes, m.lo, m.hi);
      scope.postMessage({ id: m.id, bytes: box, ms: performance.now() - t0 }, [box.buffer]);
    } else {
      const r = d.decode(m.coords, m.bytes) as { bytes: Uint8Array; shape: number[]; stride: number[] };
      const ms = performance.now() - t0;
      scope.postMessage({ id: m.id, bytes: r.bytes, shape: r.shape, stride: r.stride, ms }, [r.bytes.buffer]);
    }
  } catch (e) {
    scope.postMessage({ id: m.id, error: errorOf(e) });
  }
};
