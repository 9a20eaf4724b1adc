// Exit 1 with a clear message when the running Node does not satisfy package.json `engines.node`
// (run by scripts/test.sh first, so that `npm test` fails at once rather than minutes in).
// Reads the comparators npm's ranges are written with here: `>=20`, `>=20.10 <25`, `^22 || ^24`,
// `^20.19.0 || >=22.12.0`. The range is what `npm test` needs: `node --test` with
// `--test-concurrency` (20.10), `--test-timeout` (20.11) and `--test-force-exit` (20.14, 22.0),
// `zlib.crc32` (20.15, 22.2; tests/js/zip-consolidated.test.mjs), and the bundler smoke tests'
// Vite 8 and Rolldown, whose own `engines` ask for 20.19 or 22.12 (require of ES modules).
import fs from "node:fs";

const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const range = pkg.engines?.node;
if (!range) {
  console.error("[check-node] package.json has no engines.node");
  process.exit(1);
}
const running = process.versions.node;
const parse = (v) => {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(v);
  return m ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] : null;
};
const cmp = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
const have = parse(running);
const ok = (token) => {
  const m = /^(>=|<=|>|<|=|\^|~)?(.+)$/.exec(token);
  const want = m && parse(m[2]);
  if (!want) {
    console.error(`[check-node] cannot read engines.node "${range}" (at "${token}")`);
    process.exit(1);
  }
  const c = cmp(have, want);
  switch (m[1]) {
    case ">=": return c >= 0;
    case "<=": return c <= 0;
    case ">": return c > 0;
    case "<": return c < 0;
    case "^": return c >= 0 && have[0] === want[0];
    case "~": return c >= 0 && have[0] === want[0] && have[1] === want[1];
    default: return c === 0;
  }
};
const satisfied = range.split("||").some((set) => set.trim().split(/\s+/).every(ok));
if (!satisfied) {
  console.error(`[check-node] Node ${running} (${process.execPath}) does not satisfy package.json engines.node "${range}": put a Node that does first on PATH`);
  process.exit(1);
}
console.log(`[check-node] Node ${running} satisfies engines.node "${range}"`);
