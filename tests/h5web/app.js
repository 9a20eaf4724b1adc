// h5web's own viewer (`<App>` of @h5web/app) given shardfetch/h5web's data provider: the page
// opens `url` at `path` (h5web's initial path) and shows what h5web shows for it. The benchmark
// opens the same file through @h5web/h5wasm's provider when `provider=h5wasm` (bench only).
import { createElement as h, useMemo } from "react";
import { createRoot } from "react-dom/client";
import { App, DataProvider } from "@h5web/app";
import "@h5web/app/styles.css";
import { ShardfetchApi } from "shardfetch/h5web";

const q = new URLSearchParams(location.search);
const url = q.get("url");
const path = q.get("path") ?? "/";

// Every value h5web asked for, with its selection (the test checks what was read).
window.__values = [];

function Viewer() {
  const api = useMemo(() => {
    const a = new ShardfetchApi(url);
    const getValue = a.getValue.bind(a);
    a.getValue = async (params, signal, progress) => {
      const v = await getValue(params, signal, progress);
      window.__values.push({ path: params.dataset.path, selection: params.selection ?? null, length: v?.length ?? null });
      return v;
    };
    window.__api = a;
    return a;
  }, []);
  return h("div", { style: { height: "100vh" } }, h(DataProvider, { api }, h(App, { initialPath: path, propagateErrors: true })));
}

window.addEventListener("error", (e) => (window.__error = String(e.error?.stack ?? e.message)));
window.addEventListener("unhandledrejection", (e) => (window.__error = String(e.reason?.stack ?? e.reason)));
createRoot(document.getElementById("root")).render(h(Viewer));
