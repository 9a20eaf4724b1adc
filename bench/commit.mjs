// What every results file records about the build measured and the machine it ran on.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
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

/** The machine: processor, cores, memory, load (at the call), Node, the browser's version. */
export function machine(browserVersion) {
  let model = os.cpus()[0]?.model;
  try {
    model = /model name\s*:\s*(.*)/.exec(fs.readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? model;
  } catch {
    // not Linux: the os module's name
  }
  return {
    cpu: model,
    cores: os.cpus().length,
    ramGiB: Math.round(os.totalmem() / 2 ** 30),
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    node: process.version,
    chromium: browserVersion,
    platform: `${os.type()} ${os.release()}`,
  };
}
