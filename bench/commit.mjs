// What every results file records about the build measured.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The commit measured, "+dirty" when tracked files differ from it. */
export function commit() {
  const git = (...a) => execFileSync("git", a, { cwd: repo, encoding: "utf8" }).trim();
  try {
    return git("rev-parse", "--short", "HEAD") + (git("status", "--porcelain", "--untracked-files=no") ? "+dirty" : "");
  } catch {
    return "unknown";
  }
}
