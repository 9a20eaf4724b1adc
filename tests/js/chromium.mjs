// The headless Chromium every browser test and the benchmark launch (playwright-core, no
// bundled browser: Debian's chromium, installed by scripts/ensure-tools.sh).
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Flags for a quiet headless run in a container: no sandbox, GPU or background traffic. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
