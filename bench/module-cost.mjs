// What a page pays for the module before its first read (issue 21's "cold start"): bytes on the
// wire (gzip -9) and compile time (WebAssembly.compile, median of N, in this Node's V8).
// node bench/module-cost.mjs pkg [/tmp/pkg-before] [--n 21]
import fs from "node:fs";
import zlib from "node:zlib";
import path from "node:path";

const args = process.argv.slice(2);
const n = Number(args.includes("--n") ? args[args.indexOf("--n") + 1] : 21);
const dirs = args.filter((a, i) => !a.startsWith("--") && args[i - 1] !== "--n");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const rows = [];
for (const dir of dirs) {
  const files = [["module", path.join(dir, "wasm/shardfetch_bg.wasm")]];
  const dec = path.join(dir, "wasm/decoders");
  if (fs.existsSync(dec)) for (const f of fs.readdirSync(dec).sort()) files.push([`decoder ${f.replace(/\.wasm$/, "")}`, path.join(dec, f)]);
  for (const [what, file] of files) {
    const bytes = fs.readFileSync(file);
    const gz = zlib.gzipSync(bytes, { level: 9 }).length;
    const times = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await WebAssembly.compile(bytes);
      times.push(performance.now() - t);
    }
    rows.push({ dir, what, raw: bytes.length, gz, compileMs: median(times) });
  }
}
console.log("| package | file | raw bytes | gzip -9 bytes | compile ms (median) |");
console.log("|---|---|---:|---:|---:|");
for (const r of rows) console.log(`| ${r.dir} | ${r.what} | ${r.raw.toLocaleString("en")} | ${r.gz.toLocaleString("en")} | ${r.compileMs.toFixed(1)} |`);
