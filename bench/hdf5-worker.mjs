// h5wasm's lazy-file mode (bench/hdf5-page.mjs, library "h5wasm-lazy"): Emscripten's
// FS.createLazyFile reads the file by synchronous XHR (HEAD for the length, then Range GETs of
// 1 MiB blocks, each block kept), which browsers allow only in workers.
// Messages: {op: "import", h5} | {op: "open", url, variable} | {op: "read", t}; answers carry the id.
let h5;
let FS;
let ds;
let shape;

const now = () => performance.timeOrigin + performance.now();

onmessage = async ({ data: m }) => {
  try {
    if (m.op === "import") {
      h5 = (await import(m.h5)).default;
      ({ FS } = await h5.ready);
      postMessage({ id: m.id });
    } else if (m.op === "open") {
      const name = m.url.replace(/^.*\//, "");
      FS.createLazyFile("/", name, m.url, true, false);
      const file = new h5.File(`/${name}`, "r");
      ds = file.get(m.variable);
      shape = ds.shape;
      postMessage({ id: m.id, marks: [["open (worker)", now()]] });
    } else if (m.op === "read") {
      // slice() returns a copy out of the wasm heap: transferred, not copied again.
      const data = ds.slice([[m.t, m.t + 1], [], []]);
      postMessage({ id: m.id, data, shape: [1, ...shape.slice(1)] }, [data.buffer]);
    } else throw new Error(`unknown op ${m.op}`);
  } catch (e) {
    postMessage({ id: m.id, error: String(e?.stack ?? e) });
  }
};
