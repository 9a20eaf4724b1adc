// Run by node.test.mjs in a fresh process: reads an array through the worker_threads pool,
// prints the worker job count, and returns without closing anything — the process must exit
// by itself (idle decoding threads do not keep it alive).
//   node workers-exit-child.mjs PKG_ENTRY_URL ARRAY_URL
const [entry, url] = process.argv.slice(2);
const api = await import(entry);
const arr = await api.openArray(url, { workers: 1 });
for (let k = 0; k < 100 && arr.stats().workerJobs === 0; k++) {
  await arr.get(arr.shape.map(() => null));
  if (arr.stats().workerJobs === 0) await new Promise((res) => setTimeout(res, 20));
}
console.log(`workerJobs ${arr.stats().workerJobs}`);
