/**
 * Where the decoder modules come from: the package's `wasm/decoders/<name>.wasm`, fetched and
 * compiled once per page when an opened array names the decoder (read from the package's files
 * in Node). Each URL is a literal `new URL(…, import.meta.url)`, so that bundlers (Vite, webpack)
 * emit the modules as assets with no configuration.
 * @internal
 */
import { addDecoder, hasDecoder } from "./decoders.js";
import { errorMessage, ShardfetchError } from "./errors.js";
import { isNode } from "./module.js";
import { nodeImport } from "./node-import.js";
import { cancelBody } from "./bodies.js";

const URLS: Record<string, () => URL> = {
  jpeg: () => new URL("./wasm/decoders/jpeg.wasm", import.meta.url),
  png: () => new URL("./wasm/decoders/png.wasm", import.meta.url),
  jxl: () => new URL("./wasm/decoders/jxl.wasm", import.meta.url),
  bz2: () => new URL("./wasm/decoders/bz2.wasm", import.meta.url),
  lzma: () => new URL("./wasm/decoders/lzma.wasm", import.meta.url),
  pcodec: () => new URL("./wasm/decoders/pcodec.wasm", import.meta.url),
  compresso: () => new URL("./wasm/decoders/compresso.wasm", import.meta.url),
  parquet: () => new URL("./wasm/decoders/parquet.wasm", import.meta.url),
  hdf5: () => new URL("./wasm/decoders/hdf5.wasm", import.meta.url),
  webp: () => new URL("./wasm/decoders/webp.wasm", import.meta.url),
  lerc: () => new URL("./wasm/decoders/lerc.wasm", import.meta.url),
  tiff: () => new URL("./wasm/decoders/tiff.wasm", import.meta.url),
  ccitt: () => new URL("./wasm/decoders/ccitt.wasm", import.meta.url),
  netcdf3: () => new URL("./wasm/decoders/netcdf3.wasm", import.meta.url),
  raster: () => new URL("./wasm/decoders/raster.wasm", import.meta.url),
};

/** Loads under way (a failed one is forgotten: the next open tries again). */
const loading = new Map<string, Promise<void>>();

/** Requests of decoder modules made (tests). */
export const decoderLoads: string[] = [];

async function compile(url: URL): Promise<WebAssembly.Module> {
  if (isNode() && url.protocol === "file:") {
    const fs = await (nodeImport("node:fs/promises") as Promise<typeof import("node:fs/promises")>);
    return WebAssembly.compile(await fs.readFile(url));
  }
  const response = await fetch(url);
  if (!response.ok) {
    cancelBody(response);
    throw new Error(`HTTP ${response.status}`);
  }
  // Streaming needs the wasm content type; otherwise from the bytes.
  if (response.headers.get("content-type")?.startsWith("application/wasm")) return WebAssembly.compileStreaming(response);
  return WebAssembly.compile(await response.arrayBuffer());
}

/**
 * The decoder module an error says is missing (a store kind that reads through one — HDF5's
 * reader — asked for it while opening), or null.
 */
export function missingDecoder(e: unknown): string | null {
  const { code, message } = (e ?? {}) as { code?: unknown; message?: unknown };
  if (code !== "UnsupportedCodec" || typeof message !== "string") return null;
  const m = /\bno (\w+) decoder is loaded|\bthe (\w+) decoder is not loaded/.exec(message);
  const name = m?.[1] ?? m?.[2];
  return name !== undefined && name in URLS && !hasDecoder(name) ? name : null;
}

/** Load the decoders `names` (an opened array's `decoders()`) on this thread. */
export async function loadDecoders(names: readonly string[]): Promise<void> {
  await Promise.all(
    names.map((name) => {
      if (hasDecoder(name)) return undefined;
      let p = loading.get(name);
      if (!p) {
        const make = URLS[name];
        if (!make) return Promise.reject(new ShardfetchError("UnsupportedCodec", `no decoder module named ${name}`));
        const url = make();
        decoderLoads.push(name);
        // Compiling or instantiating: either failure is typed and forgotten, so the next open retries.
        p = compile(url)
          .then((module) => addDecoder(name, module))
          .catch((e: unknown) => {
            loading.delete(name);
            const network = !(e instanceof WebAssembly.CompileError || e instanceof WebAssembly.LinkError || e instanceof RangeError);
            throw new ShardfetchError(network ? "Network" : "Internal", `the ${name} decoder module ${url.href} failed to load: ${errorMessage(e)}`, { cause: e, url: url.href });
          });
        loading.set(name, p);
      }
      return p;
    }),
  );
}
