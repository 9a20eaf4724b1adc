#!/usr/bin/env bash
# Install what the build and tests need, skipping whatever is already present. Idempotent; works
# unattended (CI=true, no stdin) on a fresh Debian 12 machine with rustup, cargo and Node 20.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

WASM_BINDGEN_VERSION=0.2.130
WASM_PACK_VERSION=0.15.1
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

say() { printf '[ensure-tools] %s\n' "$*"; }
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

# `ensure-tools.sh --python 3.12`: print the path of a Python >= 3.12 (what icechunk 2.x needs to
# regenerate the Icechunk fixtures; npm test itself does not), found on PATH or in pyenv, else
# installed with pyenv. Nothing else is done in this mode.
if [ "${1:-}" = "--python" ]; then
  want=${2:?--python needs a version, e.g. 3.12}
  fits() { "$1" -c "import sys; sys.exit(sys.version_info[:2] < tuple(map(int, '$want'.split('.'))))" 2>/dev/null; }
  for py in python3 python3.14 python3.13 python3.12 \
            "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/python3; do
    p=$(command -v "$py" 2>/dev/null || true)
    if [ -n "$p" ] && fits "$p"; then echo "$p"; exit 0; fi
  done
  if command -v pyenv >/dev/null 2>&1; then
    say "pyenv install -s $want" >&2
    pyenv install -s "$want" >&2 || true
    p="$(pyenv root)/versions/$(pyenv latest "$want" 2>/dev/null || true)/bin/python3"
    if fits "$p"; then echo "$p"; exit 0; fi
  fi
  say "ERROR: no Python >= $want on PATH or in pyenv, and pyenv could not install one" >&2
  exit 1
fi

# 1. Rust target
if ! command -v rustup >/dev/null 2>&1; then
  say "ERROR: rustup not found (install Rust via rustup first)"; exit 1
fi
if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "rust target wasm32-unknown-unknown: present"
else
  say "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# The downloads (Debian packages, npm, PyPI) run in the background while cargo compiles the
# wasm-bindgen CLI: on a fresh 2-core machine that saves minutes. Each job logs to its own file,
# shown when it fails.
JOBS=tests/.tmp/ensure-tools
mkdir -p "$JOBS"
if ! command -v node >/dev/null 2>&1; then
  say "ERROR: node not found (Node >= 20 is required)"; exit 1
fi

# `npm ci` in a test app kept apart from the package's dev dependencies (`$1`), when its lock
# changed or `$1/node_modules/$2` is missing.
npm_ci_apart() {
  local stamp=$1/node_modules/.package-lock.json
  if [ ! -f "$stamp" ] || [ "$1/package-lock.json" -nt "$stamp" ] || [ ! -e "$1/node_modules/$2" ]; then
    say "npm ci ($1)"
    npm ci --prefix "$1" --no-audit --no-fund </dev/null
    touch "$stamp"
  else
    say "$1/node_modules: up to date"
  fi
}

packages_and_python() {
  # 3. Debian packages: Chromium + chromedriver (browser tests); clang + llvm (llvm-ar) to compile
  #    the C zstd (feature zstd-c) for wasm32 (gcc covers the native build).
  packages=""
  { [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; } || packages="$packages chromium chromium-driver"
  { command -v clang >/dev/null 2>&1 && command -v llvm-ar >/dev/null 2>&1; } || packages="$packages clang llvm"
  # nginx: the real-server tests (tests/js/servers.test.mjs) start their own, on a free port.
  [ -x /usr/sbin/nginx ] || packages="$packages nginx"
  if [ -z "$packages" ]; then
    say "chromium, chromedriver, clang, llvm-ar, nginx: present"
  else
    say "apt-get install$packages"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update </dev/null
    # shellcheck disable=SC2086
    as_root apt-get install -y --no-install-recommends $packages </dev/null
  fi


  # 5. The S3 API server of the tests (moto in server mode, boto3 to fill it), in its own venv:
  #    a tool like the others, kept for the machine (outside the clone, one per set of pins in
  #    tests/s3/requirements.txt; a fresh clone does not install it again) and linked at
  #    tests/.tmp/venv-s3. Where no cache directory can be made, in the clone.
  local cache key link=tests/.tmp/venv-s3
  cache="${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/shardfetch"
  key=$(grep -v "^#" tests/s3/requirements.txt | sha256sum | cut -c1-16)
  S3_VENV="$cache/venv-s3-$key"
  mkdir -p tests/.tmp
  if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
    S3_VENV=$link
  fi
  s3_venv() {
    if [ -x "$S3_VENV/bin/moto_server" ] && [ -f "$S3_VENV/.stamp" ]; then
      say "moto (S3 API server): present ($S3_VENV)"
      return
    fi
    say "python3 -m venv $S3_VENV; pip install -r tests/s3/requirements.txt"
    rm -rf "$S3_VENV"
    if ! python3 -m venv "$S3_VENV"; then
      # Debian's own python3 makes venvs only with python3-venv (pyenv's has it built in).
      say "apt-get install python3-venv"
      rm -rf "$S3_VENV"
      as_root apt-get install -y --no-install-recommends python3-venv </dev/null
      python3 -m venv "$S3_VENV"
    fi
    if ! "$S3_VENV/bin/pip" install -q --disable-pip-version-check -r tests/s3/requirements.txt </dev/null; then
      rm -rf "$S3_VENV"
      return 1
    fi
    touch "$S3_VENV/.stamp"
  }
  if [ "$S3_VENV" != "$link" ] && command -v flock >/dev/null 2>&1; then
    # Two runs on one machine: one installs, the other waits for it.
    ( flock 9 && s3_venv ) 9>"$cache/venv-s3.lock"
  else
    s3_venv
  fi
  if [ "$S3_VENV" != "$link" ]; then
    rm -rf "$link"
    ln -s "$S3_VENV" "$link"
  fi
}

npm_packages() {
  # 4. npm dev dependencies (typescript, playwright-core, binaryen's wasm-opt)
  stamp=node_modules/.package-lock.json # rewritten by npm on every install
  if [ -f package-lock.json ]; then
    if [ ! -d node_modules ] || [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] \
       || [ ! -x node_modules/.bin/wasm-opt ] || [ ! -x node_modules/.bin/tsc ]; then
      say "npm ci"
      npm ci --no-audit --no-fund </dev/null
      touch "$stamp"
    else
      say "node_modules: up to date"
    fi
  else
    if [ ! -d node_modules ] || [ ! -x node_modules/.bin/wasm-opt ]; then
      say "npm install"
      npm install --no-audit --no-fund </dev/null
    else
      say "node_modules: present"
    fi
  fi

  # 4b. The bundlers of the smoke tests (tests/bundlers: Vite, webpack 5, esbuild), kept apart
  #     from the package's own dev dependencies.
  npm_ci_apart tests/bundlers .bin/vite

  # 4c. Viv and deck.gl for the Viv rendering test (tests/viv), kept apart as well.
  npm_ci_apart tests/viv @vivjs/layers

  # 4d. MapLibre GL JS (and maplibre-cog-protocol, its COG path) for tests/maplibre, apart too.
  npm_ci_apart tests/maplibre maplibre-gl

  # 4e. OpenLayers (and geotiff.js, its GeoTIFF source's reader) for tests/ol, kept apart as well.
  npm_ci_apart tests/ol ol

  # 4f. h5web (@h5web/app, React) for the h5web rendering test (tests/h5web), kept apart as well.
  npm_ci_apart tests/h5web @h5web/app

}

packages_and_python > "$JOBS/apt-pip.log" 2>&1 &
APT_PID=$!
npm_packages > "$JOBS/npm.log" 2>&1 &
NPM_PID=$!

# 2. wasm-bindgen CLI (must match the wasm-bindgen crate version exactly; no --locked: its
#    lockfile wants a crate version the registry lacks)
have_bg="$(wasm-bindgen --version 2>/dev/null || true)"
have_runner="$(command -v wasm-bindgen-test-runner || true)"
if [ "$have_bg" = "wasm-bindgen $WASM_BINDGEN_VERSION" ] && [ -n "$have_runner" ]; then
  say "wasm-bindgen $WASM_BINDGEN_VERSION: present"
else
  say "cargo install wasm-bindgen-cli --version $WASM_BINDGEN_VERSION (had: ${have_bg:-none})"
  # No TLS (its default rustls builds ring): the test runner drives a local chromedriver.
  # Unoptimised (--debug): it compiles in half the CPU time (90 s against 186, the
  # largest part of a fresh machine's tools) and runs for seconds per build either way.
  CARGO_PROFILE_DEV_DEBUG=0 cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --no-default-features --force --debug
fi

# 2b. wasm-pack: `npm test` runs the wasm tests as the README gives them, `wasm-pack test
#     --headless --chrome`. It downloads nothing there: it takes the wasm-bindgen CLI above
#     from PATH (the same version as Cargo.lock's wasm-bindgen) and chromedriver from PATH
#     (/usr/bin, Debian's). `--locked` (its own lockfile builds here); unoptimised, like the CLI
#     above (67 s of a 2-core machine; it only starts cargo and the test runner).
if [ "$(wasm-pack --version 2>/dev/null || true)" = "wasm-pack $WASM_PACK_VERSION" ]; then
  say "wasm-pack $WASM_PACK_VERSION: present"
else
  say "cargo install wasm-pack --version $WASM_PACK_VERSION"
  CARGO_PROFILE_DEV_DEBUG=0 cargo install wasm-pack --version "$WASM_PACK_VERSION" --locked --no-default-features --force --debug
fi

wait_job() { # pid name log
  if wait "$1"; then
    cat "$3"
  else
    cat "$3" >&2
    say "ERROR: $2 failed (log: $3)"
    exit 1
  fi
}
wait_job "$APT_PID" "Debian packages / Python" "$JOBS/apt-pip.log"
wait_job "$NPM_PID" "npm packages" "$JOBS/npm.log"
