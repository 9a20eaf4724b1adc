// Run by node.test.mjs in a fresh process (a fresh instance of the package: its wasm is not
// compiled yet when open() is called). Prints one JSON line of what it saw.
//   node first-open-child.mjs PKG_ENTRY_URL ARRAY_URL FORMAT|- [PATH [URL_OPENED_BEFORE]]
const [entry, url, format, path, before0] = process.argv.slice(2);
const api = await import(entry);
const calls = [];
const fetch = (input, init) => {
  const h = new Headers(init?.headers);
  calls.push({ url: String(input), xTest: h.get("x-test"), range: h.get("range") });
  return globalThis.fetch(input, init);
};
const options = { fetch, headers: { "X-Test": "1" } };
if (format !== "-") options.format = format;
if (path) options.path = path;
// (Opened first: the module is then loaded when `url` is opened; its requests are not counted.)
if (before0) (await api.open(before0)).close?.();
const opening = api.open(url, options);
const before = calls.length;
let after = -1;
let requests = -1;
let chunk = null;
try {
  const node = await opening;
  after = calls.length;
  if (node instanceof api.ShardedArray) {
    const r = await node.getChunk(node.shape.map(() => 0));
    chunk = Array.from(new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength).slice(0, 16));
    requests = node.stats().requests;
  }
} catch {
  after = calls.length;
}
console.log(JSON.stringify({ before, after, requests, calls, chunk }));
