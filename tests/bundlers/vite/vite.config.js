// A stock Vite config: nothing shardfetch-specific (its worker and wasm are found through
// `new URL(..., import.meta.url)`). `base: "./"` only so the test can serve dist/ under a path.
export default { base: "./", logLevel: "warn", build: { outDir: "dist", emptyOutDir: true } };
