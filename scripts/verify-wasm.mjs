// Checks that a built package's wasm instantiates (catches a broken wasm-opt output) and that
// the public entry point loads. Usage: node scripts/verify-wasm.mjs [pkgDir]
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const dir = path.resolve(process.argv[2] ?? "pkg");
const bytes = fs.readFileSync(path.join(dir, "wasm/shardfetch_bg.wasm"));
if (!WebAssembly.validate(bytes)) throw new Error("shardfetch_bg.wasm does not validate");
const glue = await import(pathToFileURL(path.join(dir, "wasm/shardfetch.js")).href);
glue.initSync({ module: bytes });
for (const name of ["openNode", "WasmArray", "WasmGroup"]) {
  if (typeof glue[name] !== "function") throw new Error(`wasm module lacks export ${name}`);
}
const api = await import(pathToFileURL(path.join(dir, "index.js")).href);
await api.initialize();
for (const name of ["open", "openArray", "ShardedArray", "Group", "ShardfetchError"]) {
  if (typeof api[name] !== "function") throw new Error(`pkg/index.js lacks export ${name}`);
}
// An unreachable URL must reject with a ShardfetchError (exercises the error path end to end).
try {
  await api.openArray("http://127.0.0.1:9/none");
  throw new Error("openArray on a closed port succeeded");
} catch (e) {
  if (!(e instanceof api.ShardfetchError)) throw e;
  console.log(`[verify-wasm] ok (${bytes.length} bytes; closed port → ${e.code})`);
}
