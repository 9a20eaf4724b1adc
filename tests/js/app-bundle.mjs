// A test app (tests/<name>/: app.js, index.html, its own pinned node_modules) bundled by its own
// esbuild with `shardfetch` as an installed package (node_modules/shardfetch → pkg/), into
// dist/ beside the package's worker, warm-up and wasm files, as a page deploying it would.
import fs from "node:fs";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

/** Bundles `app` (`esbuild`: more flags; `assets`: files of the app copied into dist/). */
export async function bundleApp(app, root, { esbuild = [], assets = [] } = {}) {
  const dist = path.join(app, "dist");
  const link = path.join(app, "node_modules/shardfetch");
  fs.rmSync(link, { recursive: true, force: true });
  fs.symlinkSync(path.relative(path.dirname(link), path.join(root, "pkg")), link, "dir");
  fs.rmSync(dist, { recursive: true, force: true });
  const args = ["app.js", "--bundle", "--format=esm", "--outdir=dist", ...esbuild, "--log-level=warning"];
  await promisify(execFile)(path.join(app, "node_modules/.bin/esbuild"), args, { cwd: app });
  for (const f of ["worker.js", "warm.js"]) fs.copyFileSync(path.join(link, f), path.join(dist, f));
  fs.cpSync(path.join(link, "wasm"), path.join(dist, "wasm"), { recursive: true });
  for (const f of [...assets, "index.html"]) fs.copyFileSync(path.join(app, f), path.join(dist, path.basename(f)));
  return dist;
}
