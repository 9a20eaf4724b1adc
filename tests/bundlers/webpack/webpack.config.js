// A stock webpack 5 config: nothing shardfetch-specific (webpack 5 emits the worker and the wasm
// it finds through `new Worker(new URL(...))` / `new URL(..., import.meta.url)`).
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export default {
  mode: "production",
  entry: "./main.js",
  context: here,
  output: { path: path.join(here, "dist"), filename: "main.js", publicPath: "auto", clean: true },
  performance: { hints: false },
  infrastructureLogging: { level: "warn" },
  stats: "errors-warnings",
};
