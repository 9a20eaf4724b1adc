/**
 * Running the decoders kept outside the module (jpeg, png, jxl, bz2, lzma, pcodec, compresso, parquet, hdf5, webp, lerc, tiff, ccitt, netcdf3; and the map adapters' raster module): each a wasm
 * module of its own (`wasm/decoders/<name>.wasm`, exports only: `decoders/abi`), instantiated on
 * each thread that decodes — this one, each decoding worker — and called synchronously by the
 * module's codec chain (`WasmDecoders`). Where the modules come from is `decoder-urls.ts` (the
 * page's entry only: workers are handed compiled modules).
 * @internal
 */

interface Exports {
  memory: WebAssembly.Memory;
  input(n: number): number;
  decode(a0: number, a1: number, a2: number, a3: number): number;
  output(): number;
  output_len(): number;
  release(): void;
}

/** Compiled decoder modules this thread has, and their instances. */
const modules = new Map<string, WebAssembly.Module>();
const instances = new Map<string, Exports>();
/** Instances being replaced after a trap. */
const replacing = new Map<string, Promise<void>>();

/** Instantiate decoder `name` from its compiled module on this thread (once). */
export async function addDecoder(name: string, module: WebAssembly.Module): Promise<void> {
  if (instances.has(name)) return;
  const instance = await WebAssembly.instantiate(module, {});
  modules.set(name, module);
  instances.set(name, instance.exports as unknown as Exports);
}

/** The compiled modules of the decoders this thread has, among `names` (for a worker). */
export function compiledDecoders(names: readonly string[]): Record<string, WebAssembly.Module> {
  const out: Record<string, WebAssembly.Module> = {};
  for (const n of names) {
    const m = modules.get(n);
    if (m) out[n] = m;
  }
  return out;
}

/** Whether decoder `name` is instantiated on this thread. */
export function hasDecoder(name: string): boolean {
  return instances.has(name);
}

const CODES = ["", "CorruptChunk", "TooLarge", "UnsupportedCodec"];

/**
 * The module's `WasmDecoders`: decode `input` with decoder `name` and its numeric `args`; the
 * decoded bytes (a copy), or throws `{ code, message }`.
 */
export function runDecoder(name: string, input: Uint8Array, args: Float64Array): Uint8Array {
  const d = instances.get(name);
  if (!d) throw { code: "UnsupportedCodec", message: `${name}: the ${name} decoder is not loaded` };
  let status: number;
  let out: Uint8Array;
  try {
    const at = d.input(input.length) >>> 0;
    new Uint8Array(d.memory.buffer, at, input.length).set(input);
    status = d.decode(args[0] ?? 0, args[1] ?? 0, args[2] ?? 0, args[3] ?? 0);
    out = new Uint8Array(d.memory.buffer, d.output() >>> 0, d.output_len() >>> 0).slice();
    d.release();
  } catch (e) {
    if (!(e instanceof WebAssembly.RuntimeError)) throw e;
    // A trap stops this decoder's instance only (never the module's): a new one takes its place.
    replace(name);
    const why = `${name}: the decoder stopped on this chunk (${e.message}); it was restarted`;
    throw { code: "CorruptChunk", message: why };
  }
  if (status !== 0) {
    throw { code: CODES[status] ?? "CorruptChunk", message: `${name}: ${new TextDecoder().decode(out)}` };
  }
  return out;
}

function replace(name: string): void {
  instances.delete(name);
  const module = modules.get(name);
  if (!module || replacing.has(name)) return;
  const p = addDecoder(name, module)
    .catch(() => undefined)
    .finally(() => replacing.delete(name));
  replacing.set(name, p);
}
