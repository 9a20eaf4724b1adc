// Module Web Worker used by browser.html?worker=1: runs checkFixtures inside the worker.
import * as api from "../../pkg/index.js";
import { checkFixtures, loadManifests } from "./check-fixtures.mjs";

self.onmessage = async (ev) => {
  const { data, cases } = ev.data;
  try {
    const manifest = await loadManifests(async (rel) => (await fetch(`${data}/fx/${rel}`)).json());
    const loader = async (rel) => {
      const r = await fetch(`${data}/fx/${rel}`);
      if (!r.ok) throw new Error(`${rel}: HTTP ${r.status}`);
      return new Uint8Array(await r.arrayBuffer());
    };
    const result = await checkFixtures(api, `${data}/fixtures`, manifest, loader, { cases, groups: !cases });
    self.postMessage(result);
  } catch (e) {
    self.postMessage({ error: `${e?.code ?? ""} ${e?.stack ?? e}` });
  }
};
