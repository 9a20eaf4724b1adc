/**
 * A decoding worker: its own instance of the wasm module, decoders rebuilt from the documents of each array
 * (no network), buffers transferred both ways.
 *
 * Messages in: `{ module }` once (the compiled WebAssembly.Module; answered `{ ready }`), then
 * groups `{ key, documents?, decoders?, items: [{ id, coords, bytes, lo?, hi? }] }` (`documents` and
 * the compiled decoder modules the array needs the first time this worker sees array `key`), or
 * `{ forget: key }`. Out, one message per group:
 * `{ results: [{ id, bytes, shape?, stride?, ms } | { id, error }], trapped, memory }` (`ms`:
 * decoding time; `trapped`: this worker's instance stopped on a bug, so the pool replaces the
 * worker; `memory`: its instance's bytes, `{ ready }` has them too).
 * @internal
 */
import type { Item } from "./pool.js";
import init, { WasmDecoder, trapForTest } from "./wasm/shardfetch.js";
import { addDecoder, runDecoder } from "./decoders.js";
import { nodeImport } from "./node-import.js";

interface Group {
  key: number;
  documents?: string;
  /** With `documents`: the compiled modules of the decoders outside the module it needs. */
  decoders?: Record<string, WebAssembly.Module>;
  items: Item[];
}

type Incoming = { module: WebAssembly.Module } | { forget: number } | { trapForTest: true } | Group;

interface Scope {
  onmessage: ((ev: MessageEvent<Incoming>) => void) | null;
  postMessage(message: unknown, transfer?: Transferable[]): void;
}

/** Node's `worker_threads` as a worker scope: the same messages, through `parentPort`. */
async function nodeScope(): Promise<Scope> {
  const { parentPort } = await (nodeImport("node:worker_threads") as Promise<typeof import("node:worker_threads")>);
  if (!parentPort) throw new Error("shardfetch's worker.js runs as a decoding worker only");
  const scope: Scope = {
    onmessage: null,
    postMessage: (message, transfer) => parentPort.postMessage(message, transfer as never),
  };
  parentPort.on("message", (data: Incoming) => scope.onmessage?.({ data } as MessageEvent<Incoming>));
  return scope;
}

// No top-level await: bundlers may emit this worker as a classic script.
if (typeof self === "undefined") {
  nodeScope().then(listen, (e) => {
    throw e;
  });
} else {
  listen(self as unknown as Scope);
}
let ready: Promise<unknown> | undefined;
/** This worker's instance's linear memory (reported with each answer: the pool replaces a worker grown too large). */
let memory: WebAssembly.Memory | undefined;
const memoryBytes = () => memory?.buffer.byteLength ?? 0;
/** Set once this worker's instance trapped (a bug): it decodes nothing more and is replaced. */
let trap: { code: string; message: string } | undefined;

function trapped(e: unknown): boolean {
  if (!(e instanceof WebAssembly.RuntimeError)) return false;
  trap ??= { code: "Internal", message: `decoding worker: the module stopped on a bug (${e.message}); the worker is replaced — please report this` };
  return true;
}
const decoders = new Map<number, WasmDecoder>();
/** The decoder modules handed over so far, instantiated. */
let decodersReady: Promise<unknown> = Promise.resolve();
const documentsByKey = new Map<number, string>();

function decoder(key: number): WasmDecoder {
  let d = decoders.get(key);
  if (!d) {
    const documents = documentsByKey.get(key);
    if (documents === undefined) throw { code: "Internal", message: `decoding worker: no documents for array ${key}` };
    d = new WasmDecoder(documents, runDecoder);
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

function listen(scope: Scope): void {
  scope.onmessage = async (ev) => {
    const m = ev.data;
    if ("module" in m) {
      ready = init({ module_or_path: m.module });
      memory = ((await ready) as { memory?: WebAssembly.Memory }).memory;
      scope.postMessage({ ready: true, memory: memoryBytes() });
      return;
    }
    if ("forget" in m) {
      decoders.get(m.forget)?.free();
      decoders.delete(m.forget);
      documentsByKey.delete(m.forget);
      return;
    }
    await ready;
    if ("trapForTest" in m) {
      try {
        await trapForTest(false);
      } catch (e) {
        trapped(e);
      }
      scope.postMessage({ results: [], trapped: trap !== undefined });
      return;
    }
    if (m.documents !== undefined) documentsByKey.set(m.key, m.documents);
    if (m.decoders !== undefined) {
      const modules = Object.entries(m.decoders);
      // Reported by each chunk that needs one that failed (the decoder is then not loaded).
      decodersReady = decodersReady.then(() => Promise.all(modules.map(([n, module]) => addDecoder(n, module)))).catch(() => undefined);
    }
    // Messages are handled concurrently: a group that came after one carrying decoder modules
    // waits for them too.
    await decodersReady;
    const results: unknown[] = [];
    const transfer: Transferable[] = [];
    for (const it of m.items) {
      if (trap) {
        results.push({ id: it.id, error: trap });
        continue;
      }
      try {
        const d = decoder(m.key);
        const t0 = performance.now();
        if (it.lo && it.hi) {
          const box = d.cut(it.coords, it.bytes, it.lo, it.hi);
          results.push({ id: it.id, bytes: box, ms: performance.now() - t0 });
          transfer.push(box.buffer);
        } else {
          const r = d.decode(it.coords, it.bytes) as { bytes: Uint8Array; shape: number[]; stride: number[] };
          results.push({ id: it.id, bytes: r.bytes, shape: r.shape, stride: r.stride, ms: performance.now() - t0 });
          transfer.push(r.bytes.buffer);
        }
      } catch (e) {
        results.push({ id: it.id, error: trapped(e) ? trap : errorOf(e) });
      }
    }
    scope.postMessage({ results, trapped: trap !== undefined, memory: memoryBytes() }, transfer);
  };
}
