/**
 * The warm-up worker: compiles the module's read path on a background thread.
 *
 * V8 compiles a wasm function at its first call, on the calling thread (~15 ms on the first
 * open and read of a slow machine). The compiled code belongs to the module, which every
 * thread that instantiates it shares: reading small stores here (Zarr v3/v2 written by
 * zarr-python, one of them in a zip archive, Neuroglancer precomputed by tensorstore:
 * `warm-data.ts`) through the entry points the page uses leaves them compiled for the page.
 * No network: the stores are answered from memory. Each read is checked against the sums its
 * writer read back, so a broken warm-up shows in the tests rather than going unnoticed.
 *
 * Message in: `{ module }`. Out: `{ ms, checked, errors }`.
 * @internal
 */
import init, { openNode, WasmArray, WasmDecoder, type WasmChunk } from "./wasm/shardfetch.js";
import { WARM_STORES, type WarmStore } from "./warm-data.js";

interface Scope {
  onmessage: ((ev: MessageEvent<{ module: WebAssembly.Module }>) => void) | null;
  postMessage(message: unknown): void;
}

function bytesOf(b64: string): Uint8Array<ArrayBuffer> {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** A `fetch` over one store's files: GET, `bytes=a-b` and `bytes=-n`, 404 for the rest. */
function memoryFetch(base: string, files: Record<string, string>) {
  return async (input: string, init: RequestInit): Promise<Response> => {
    const b64 = input.startsWith(base) ? files[input.slice(base.length)] : undefined;
    if (b64 === undefined) return new Response(null, { status: 404 });
    const body = bytesOf(b64);
    const range = new Headers(init.headers).get("range");
    const m = range ? /^bytes=(\d*)-(\d*)$/.exec(range) : null;
    if (!m) return new Response(body, { status: 200, headers: { "content-length": String(body.length) } });
    const n = body.length;
    const [a, b] = m[1] === "" ? [Math.max(0, n - Number(m[2])), n - 1] : [Number(m[1]), m[2] === "" ? n - 1 : Math.min(n - 1, Number(m[2]))];
    return new Response(body.slice(a, b + 1), { status: 206, headers: { "content-range": `bytes ${a}-${b}/${n}` } });
  };
}

const VIEWS: Record<string, new (b: ArrayBuffer, o: number, n: number) => ArrayLike<number>> = {
  uint8: Uint8Array,
  uint16: Uint16Array,
  float32: Float32Array,
};
const BIG: Record<string, new (b: ArrayBuffer, o: number, n: number) => ArrayLike<bigint>> = { uint64: BigUint64Array };

/**
 * Sum of the elements of a result holding exactly box `shape` (a region, a box cut for a
 * worker, an inner chunk away from the array's edge): in whatever order its strides lay them
 * out, the sum is the same, so nothing here walks strides (the module does that).
 */
function sum(dtype: string, bytes: Uint8Array, shape: number[]): number {
  const View = BIG[dtype] ?? VIEWS[dtype] ?? Uint8Array;
  const size = (View as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
  const n = Math.floor(bytes.byteLength / size);
  if (n !== shape.reduce((a, b) => a * b, 1)) return NaN; // an edge chunk: not a warm-up case
  const v = new View(bytes.buffer as ArrayBuffer, bytes.byteOffset, n);
  let total = 0;
  for (let i = 0; i < n; i++) total += Number(v[i]);
  return total;
}

/** The warm-up's stores are numeric: their chunks come as bytes. */
function chunkBytes(c: WasmChunk): Uint8Array {
  return "bytes" in c ? c.bytes : new Uint8Array(0);
}

/** Read one store the ways the page does; returns the number of checks that passed. */
async function warmStore(s: WarmStore, errors: string[]): Promise<number> {
  const base = `warm://${s.name}/`;
  const url = s.open ? base + s.open : base.slice(0, -1);
  const node = await openNode(url, { fetch: memoryFetch(base, s.files) });
  if (!(node instanceof WasmArray)) {
    node.free();
    throw new Error("not an array");
  }
  let passed = 0;
  const check = (what: string, got: number, want: number, shape: number[]) => {
    const slack = s.tolerance * shape.reduce((a, b) => a * b, 1);
    if (Math.abs(got - want) <= slack) passed++;
    else errors.push(`${s.name} ${what}: sum ${got}, its writer ${want}`);
  };
  try {
    node.meta();
    // The page's getChunk (batched), get, and the decoding workers' path: fetch, decode, cut.
    let chunk: WasmChunk | undefined;
    // Callbacks never throw: an exception must not unwind through the module's frames.
    await node.readChunks([s.chunk], true, new AbortController().signal, 0, (_, r) => {
      if ("error" in r) errors.push(`${s.name} getChunk: ${describe(r.error)}`);
      else if (!("encoded" in r)) chunk = r;
    });
    if (chunk) check("getChunk", sum(s.dtype, chunkBytes(chunk), chunk.shape), s.chunkSum, chunk.shape);
    const inline = node.region(s.region);
    try {
      await inline.read(true, null, 0, () => undefined);
      const region = inline.finish();
      check("get", sum(s.dtype, chunkBytes(region), region.shape), s.regionSum, region.shape);
    } finally {
      inline.free();
    }
    const decoder = new WasmDecoder(node.documents(), undefined);
    try {
      let encoded: Uint8Array | undefined;
      await node.readChunks([s.chunk], false, null, 0, (_, r) => {
        if ("error" in r) errors.push(`${s.name} readChunks: ${describe(r.error)}`);
        else if ("encoded" in r) encoded = r.encoded; // else decoded already (no compression)
      });
      if (encoded) {
        const d = decoder.decode(s.chunk, encoded);
        check("decode", sum(s.dtype, chunkBytes(d), d.shape), s.chunkSum, d.shape);
        const box = decoder.cut(s.chunk, encoded, s.cut[0], s.cut[1]);
        const boxShape = s.cut[1].map((h, k) => h - s.cut[0][k]!);
        check("cut", sum(s.dtype, box, boxShape), s.cutSum, boxShape);
        // The workers' region path: the box pasted into a region read undecoded.
        const region = node.region(s.region);
        try {
          await region.read(false, null, 0, (i, item) => {
            if ("encoded" in item) region.paste(i, decoder.cut(item.coords, item.encoded, item.lo, item.hi));
          });
          region.finish();
        } finally {
          region.free();
        }
      }
    } finally {
      decoder.free();
    }
    node.stats();
  } finally {
    node.free();
  }
  return passed;
}

function describe(e: unknown): string {
  const o = e as { message?: unknown } | null;
  return typeof o?.message === "string" ? o.message : String(e);
}

const scope = self as unknown as Scope;
scope.onmessage = async (ev) => {
  const t0 = performance.now();
  const errors: string[] = [];
  let checked = 0;
  try {
    await init({ module_or_path: ev.data.module });
    for (const s of WARM_STORES) {
      try {
        checked += await warmStore(s, errors);
      } catch (e) {
        errors.push(`${s.name}: ${describe(e)}`);
      }
    }
  } catch (e) {
    errors.push(`warm-up: ${String(e)}`);
  }
  scope.postMessage({ ms: performance.now() - t0, checked, errors });
};
