// The peers the file-format benchmarks compare against, pinned, installed on first use into
// bench/.build/peers (not devDependencies: `npm test` on a fresh machine does not download them).
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const prefix = path.join(here, ".build/peers");

/** The installed package directory of `name`@`version` (installed now when missing). */
export function peer(name, version) {
  const dir = path.join(prefix, "node_modules", name);
  const have = fs.existsSync(path.join(dir, "package.json")) && JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
  if (have !== version) {
    fs.mkdirSync(prefix, { recursive: true });
    if (!fs.existsSync(path.join(prefix, "package.json"))) fs.writeFileSync(path.join(prefix, "package.json"), '{"private":true}\n');
    process.stderr.write(`[bench] installing ${name}@${version} into bench/.build/peers\n`);
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--save-exact", "--prefix", prefix, `${name}@${version}`], { stdio: "inherit" });
  }
  return dir;
}
