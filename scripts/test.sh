#!/usr/bin/env bash
# Run every test suite: native Rust tests, the build, Rust wasm tests in headless Chromium, and
# the Node + browser tests of the built package. Fails if any part fails or runs zero tests.
# Ends with one summary line: "N passed, M failed".
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

LOGS=tests/.tmp/test-logs
mkdir -p "$LOGS"
total_pass=0
total_fail=0
status=0
SERVER_PID=""

cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
}
trap cleanup EXIT

say() { printf '\n[test] %s\n' "$*"; }
fail_part() { # name [count]
  say "FAILED: $1"
  status=1
  total_fail=$((total_fail + ${2:-1}))
}
summary_and_exit() {
  echo
  echo "$total_pass passed, $total_fail failed"
  exit "$status"
}

strip_ansi() { sed -E 's/\x1b\[[0-9;]*[A-Za-z]//g'; }

# Sum "test result: ... N passed; M failed" lines (cargo test / wasm-bindgen-test-runner).
cargo_counts() { # log → "passed failed"
  strip_ansi < "$1" | grep -E '^test result: ' | sed -E 's/.* ([0-9]+) passed; ([0-9]+) failed.*/\1 \2/' |
    awk '{p += $1; f += $2} END {print p + 0, f + 0}'
}

# --- (a) tools -------------------------------------------------------------------------------
say "ensure tools"
if ! bash scripts/ensure-tools.sh; then
  fail_part "ensure-tools"
  summary_and_exit
fi

# --- (b) native Rust tests -------------------------------------------------------------------
say "cargo test --workspace (native: the core with its decoders linked, and the decoder crates)"
cargo test --workspace 2>&1 | tee "$LOGS/cargo-native.log"
rc=${PIPESTATUS[0]}
read -r p f < <(cargo_counts "$LOGS/cargo-native.log")
total_pass=$((total_pass + p))
total_fail=$((total_fail + f))
if [ "$rc" -ne 0 ]; then
  [ "$f" -gt 0 ] && { status=1; say "FAILED: cargo test ($f failed)"; } || fail_part "cargo test (exit $rc)"
elif [ "$p" -eq 0 ]; then
  fail_part "cargo test ran zero tests"
fi

# --- (b2) the pure-Rust zstd path (without the C zstd feature) --------------------------------
say "cargo test --no-default-features --features native-decoders (ruzstd instead of C zstd)"
cargo test --no-default-features --features native-decoders 2>&1 | tee "$LOGS/cargo-ruzstd.log"
rc=${PIPESTATUS[0]}
read -r p f < <(cargo_counts "$LOGS/cargo-ruzstd.log")
total_pass=$((total_pass + p))
total_fail=$((total_fail + f))
if [ "$rc" -ne 0 ]; then
  [ "$f" -gt 0 ] && { status=1; say "FAILED: cargo test, ruzstd ($f failed)"; } || fail_part "cargo test, ruzstd (exit $rc)"
elif [ "$p" -eq 0 ]; then
  fail_part "cargo test (ruzstd) ran zero tests"
fi

# --- (c) build -------------------------------------------------------------------------------
say "build"
if ! bash scripts/build.sh; then
  fail_part "build"
  summary_and_exit
fi

# --- (d) Rust wasm tests in headless Chromium ------------------------------------------------
if [ -f tests/web.rs ]; then
  say "wasm-pack test --headless --chrome (Rust tests in headless Chromium)"
  node tests/server.mjs --root /fixtures=tests/fixtures --port 0 > "$LOGS/server.out" 2> "$LOGS/server.err" &
  SERVER_PID=$!
  URL=""
  for _ in $(seq 1 100); do
    URL=$(sed -n 's/^LISTENING //p' "$LOGS/server.out" 2>/dev/null | head -1)
    [ -n "$URL" ] && break
    sleep 0.1
  done
  if [ -z "$URL" ]; then
    cat "$LOGS/server.err" >&2
    fail_part "test server did not start"
  else
    # The same command a developer types (no environment needed: tests/web.rs embeds the
    # fixtures); the server URL adds the real-fetch path. The decoders kept out of the package's
    # module are linked into the test module (the default feature native-decoders), so that
    # every fixture is read in the browser here too.
    SHARDFETCH_FIXTURES_URL="$URL/fixtures" \
      WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-300}" \
      wasm-pack test --headless --chrome --chromedriver /usr/bin/chromedriver 2>&1 | tee "$LOGS/cargo-wasm.log"
    rc=${PIPESTATUS[0]}
    read -r p f < <(cargo_counts "$LOGS/cargo-wasm.log")
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
    if [ "$rc" -ne 0 ]; then
      [ "$f" -gt 0 ] && { status=1; say "FAILED: wasm tests ($f failed)"; } || fail_part "wasm tests (exit $rc)"
    elif ! strip_ansi < "$LOGS/cargo-wasm.log" | grep -qE '^test result: ok\. [1-9][0-9]* passed'; then
      fail_part "wasm tests ran zero tests (check run_in_browser / WASM_BINDGEN_USE_BROWSER)"
    fi
  fi
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
else
  say "SKIP wasm browser tests: tests/web.rs does not exist yet"
fi

# --- (e) Node + browser tests of the built package -------------------------------------------
say "node --test tests/js/"
node --test --test-reporter=spec tests/js/ 2>&1 | tee "$LOGS/node.log"
rc=${PIPESTATUS[0]}
p=$(strip_ansi < "$LOGS/node.log" | sed -n -E 's/^ℹ pass ([0-9]+)$/\1/p' | tail -1)
f=$(strip_ansi < "$LOGS/node.log" | sed -n -E 's/^ℹ fail ([0-9]+)$/\1/p' | tail -1)
p=${p:-0}
f=${f:-0}
total_pass=$((total_pass + p))
total_fail=$((total_fail + f))
if [ "$rc" -ne 0 ]; then
  [ "$f" -gt 0 ] && { status=1; say "FAILED: node tests ($f failed)"; } || fail_part "node tests (exit $rc)"
elif [ "$p" -eq 0 ]; then
  fail_part "node tests ran zero tests"
fi

# --- (f) summary -----------------------------------------------------------------------------
summary_and_exit
