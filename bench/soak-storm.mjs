// The abort storm of issue 24, run by bench/soak.mjs as `node --expose-gc soak-storm.mjs PKG_URL
// ARRAY_URL`: one warm-up round, then 20 rounds of 1,000 reads (getChunk and 300² regions) on
// one array, 90 % aborted at a random moment within 50 ms; RSS and JS heap after each round
// (after GC). Prints one JSON line.
const [entry, url] = process.argv.slice(2);
const api = await import(entry);
const MiB = 2 ** 20;
const arr = await api.openArray(url);
let rng = 1;
const random = () => ((rng = (rng * 1103515245 + 12345) >>> 0) / 2 ** 32);
const grid = arr.shape.map((n, k) => n / arr.chunkShape[k]);
const rounds = [];
for (let round = 0; round <= 20; round++) {
  const reads = [];
  for (let i = 0; i < 1000; i++) {
    const ctl = new AbortController();
    const p =
      random() < 0.5
        ? arr.getChunk([Math.floor(random() * grid[0]), Math.floor(random() * grid[1])], { signal: ctl.signal })
        : (() => {
            const y = Math.floor(random() * (arr.shape[0] - 300));
            const x = Math.floor(random() * (arr.shape[1] - 300));
            return arr.get([[y, y + 300], [x, x + 300]], { signal: ctl.signal });
          })();
    reads.push(p.then(() => "ok", (e) => e.code));
    if (random() < 0.9) setTimeout(() => ctl.abort(), random() * 50);
  }
  const out = await Promise.all(reads);
  for (let i = 0; i < 3; i++) {
    global.gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  const m = process.memoryUsage();
  const codes = {};
  for (const c of out) codes[c] = (codes[c] ?? 0) + 1;
  if (round > 0) rounds.push({ round, rss: m.rss / MiB, heap: m.heapUsed / MiB, arrayBuffers: m.arrayBuffers / MiB, codes });
}
arr.close();
console.log(JSON.stringify({ rounds }));
process.exit(0);
