// The benchmark's page (bench/h5web.mjs): h5web's <App> opening `url` at `path`, through
// shardfetch/h5web (`provider=shardfetch`: by range; h5web 16's entities) or @h5web/h5wasm (`provider=h5wasm`: the
// file fetched whole, then H5WasmBufferProvider, the way @h5web/h5wasm offers for a remote file).
// `window.__drawn`: ms from navigation to two frames after the heatmap's colour bar showed its
// domain (h5web renders it with the values).
import { createElement as h, useMemo, useState, useEffect } from "react";
import { createRoot } from "react-dom/client";
import { App, DataProvider } from "@h5web/app";
import { H5WasmBufferProvider } from "@h5web/h5wasm";
import "@h5web/app/styles.css";
import { ShardfetchApi } from "shardfetch/h5web";

const q = new URLSearchParams(location.search);
const url = q.get("url");
const path = q.get("path");
const provider = q.get("provider");
const app = h(App, { initialPath: path, propagateErrors: true });

// What h5web asked the provider for (shardfetch's only: h5wasm's provider is internal).
window.__values = [];
function ViaShardfetch() {
  const api = useMemo(() => {
    const a = new ShardfetchApi(url, { h5webVersion: 16 });
    const getValue = a.getValue.bind(a);
    a.getValue = (params, signal, progress) => {
      window.__values.push({ path: params.dataset.path, selection: params.selection ?? null });
      return getValue(params, signal, progress);
    };
    return a;
  }, []);
  return h(DataProvider, { api }, app);
}

function ViaH5Wasm() {
  const [buffer, setBuffer] = useState(null);
  useEffect(() => {
    fetch(url)
      .then((r) => (r.ok ? r.arrayBuffer() : Promise.reject(new Error(`${url}: ${r.status}`))))
      .then(setBuffer, (e) => (window.__error = String(e)));
  }, []);
  return buffer && h(H5WasmBufferProvider, { filename: url.split("/").pop(), buffer }, app);
}

// The colour bar's two ends (e-notation, a minus as U+2212) appear once the values are in.
function domainShown() {
  const ends = [...document.querySelectorAll("body *")]
    .map((e) => (e.children.length === 0 ? e.textContent.trim().replace("\u2212", "-") : ""))
    .filter((t) => /^[-+]?\d+(\.\d+)?e[-+]\d+$/.test(t));
  return ends.length >= 2 ? [...new Set(ends)] : null;
}
new MutationObserver((_, obs) => {
  const ends = domainShown();
  if (!ends) return;
  obs.disconnect();
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      window.__domain = ends.map(Number);
      window.__drawn = performance.now();
    }),
  );
}).observe(document.body, { childList: true, subtree: true, characterData: true });

window.addEventListener("error", (e) => (window.__error = String(e.error?.stack ?? e.message)));
window.addEventListener("unhandledrejection", (e) => (window.__error = String(e.reason?.stack ?? e.reason)));
const Viewer = provider === "h5wasm" ? ViaH5Wasm : ViaShardfetch;
createRoot(document.getElementById("root")).render(h("div", { style: { height: "100vh" } }, h(Viewer)));
