/**
 * Loading the WebAssembly module: compiled once (streaming where served as `application/wasm`),
 * kept to start workers without compiling again, instantiated on this thread.
 * @internal
 */
import init from "./wasm/shardfetch.js";
import { errorMessage, ShardfetchError } from "./errors.js";

let ready: Promise<void> | undefined;
let compiled: WebAssembly.Module | undefined;
let loaded = false;
const onLoad: (() => void)[] = [];

export function isNode(): boolean {
  return typeof process !== "undefined" && typeof process.versions?.node === "string";
}

async function compileWasm(): Promise<WebAssembly.Module> {
  const wasmUrl = new URL("./wasm/shardfetch_bg.wasm", import.meta.url);
  if (isNode() && wasmUrl.protocol === "file:") {
    // Node's fetch cannot read file: URLs.
    const fs = await import(/* webpackIgnore: true */ /* @vite-ignore */ "node:fs/promises");
    return WebAssembly.compile(await fs.readFile(wasmUrl));
  }
  const response = fetch(wasmUrl);
  try {
    return await WebAssembly.compileStreaming(response);
  } catch {
    // Served without `application/wasm`: compile from the bytes.
    return WebAssembly.compile(await (await fetch(wasmUrl)).arrayBuffer());
  }
}

async function load(): Promise<void> {
  compiled = await compileWasm();
  await init({ module_or_path: compiled });
  loaded = true;
  for (const f of onLoad) f();
}

/**
 * Load and instantiate the WebAssembly module. Called automatically on first use; call it
 * yourself to start loading early. Safe to call many times.
 */
export function initialize(): Promise<void> {
  if (!ready) {
    ready = load().catch((e: unknown) => {
      ready = undefined; // allow a retry (e.g. after a network error)
      throw new ShardfetchError("Internal", `failed to load the shardfetch WebAssembly module: ${errorMessage(e)}`, {
        cause: e,
      });
    });
  }
  return ready;
}

/** The compiled module, once loaded (for workers: they instantiate it without compiling). */
export function wasmModule(): WebAssembly.Module | undefined {
  return compiled;
}

/** Whether the module is instantiated on this thread. */
export function isLoaded(): boolean {
  return loaded;
}

/** Run `f` each time the module has loaded on this thread. */
export function whenLoaded(f: () => void): void {
  onLoad.push(f);
}
