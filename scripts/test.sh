#!/usr/bin/env bash
# Run every test suite: native Rust tests, the build, Rust wasm tests in headless Chromium, and
# the Node + browser tests of the built package. Fails if any part fails or runs zero tests.
# Ends with one summary line: "N passed, M failed (phase times)".
#
# On 2 cores the time goes to compiles: native tests once (the default features: C zstd, the
# decoders linked in), the pure-Rust zstd path once more but only the tests that read zstd
# (its unit tests and the fixture suite), one release build of the module and its decoder
# modules, and the wasm tests' own build (every test target and example for wasm32, as
# `wasm-pack test` builds them; the native-only test files compile to nothing there). The native tests' compile starts
# first, beside the tools' installs (which mostly wait on downloads); the other two start when
# the tools are there, in the background; the wasm tests then run in Chromium (`wasm-pack test
# --headless --chrome`, as the README gives it) beside the native test runs, and the Node test
# files run two at a time. Test builds carry no debug info. Phase times:
# "tools" the installs (the native compile beside them), "compile" what is left of the native
# tests' compile (the background builds beside it), "native" their runs (the wasm tests beside
# them), "build" and "wasm" what is left of the build and of the wasm tests after them.
#
# No phase can hang: each runs under a time limit (`timeout`), and a phase past its limit fails
# with its name; each Node test file has its own limit (--test-timeout) and exits when its tests
# are done (--test-force-exit), so a stuck file fails with its name and the others still run.
# The limits are about three times the phase's (or the slowest file's) time on a fresh 2-core
# machine; SHARDFETCH_TIMEOUT_SCALE=2 doubles them all on a slower one.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
# The test builds without debug info: no test reads it, the native compile takes a quarter less
# CPU and the wasm tests' module is 25 MB instead of 125 (which wasm-bindgen and Chromium then
# process in seconds less). A failing test still names its file and line.
export CARGO_PROFILE_DEV_DEBUG=0

# The Node it runs on, against package.json `engines`, before anything else (tested: 20, 22, 24).
if ! command -v node > /dev/null 2>&1; then
  echo "[test] no node on PATH: npm test needs Node (package.json engines.node)" >&2
  exit 1
fi
node scripts/check-node.mjs || exit 1

# Time limits in seconds (see above). Measured on this 2-core machine, shared with other builds
# (load 7-8): tools ~200 s on a fresh machine (apt, cargo install wasm-bindgen-cli; 112 s since
# the CLI is built unoptimised, the native compile beside it); the build ~420 s cold; compile
# 164 s, native 87 s, wasm 46 s after the build, node 224 s (the slowest file,
# tests/js/browser.test.mjs, ~105 s alone; 222-251 s since the HDF5 and TIFF suites joined
# the fixtures). The Node phase's limit leaves room for a stuck file to be cut off at its own
# limit, and named, before the phase's.
SCALE=${SHARDFETCH_TIMEOUT_SCALE:-1}
limit_of() { echo $(($1 * SCALE)); }
LIMIT_TOOLS=$(limit_of 900)       # ensure-tools.sh
LIMIT_COMPILE=$(limit_of 1200)    # the native tests' compile (beside the two background builds)
LIMIT_BUILD=$(limit_of 1500)      # scripts/build.sh, from its start in the background
LIMIT_WASM_BUILD=$(limit_of 1200) # the wasm tests' build, from its start in the background
LIMIT_NATIVE=$(limit_of 600)      # cargo test --workspace (the runs)
LIMIT_RUZSTD=$(limit_of 600)      # the ruzstd build and its tests
LIMIT_WASM=$(limit_of 900)        # wasm-pack test (its build done already; the runner, Chromium: its page 600 s at most)
LIMIT_NODE=$(limit_of 1200)       # every Node test file, two at a time
NODE_FILE_MS=$(limit_of 480000)   # one Node test file: ~2x the slowest under load

LOGS=tests/.tmp/test-logs
mkdir -p "$LOGS"
total_pass=0
total_fail=0
status=0
SERVER_PID=""
NATIVE_BUILD_PID=""
BUILD_PID=""
WASM_BUILD_PID=""
WASM_PID=""
PHASES=""
T0=$(date +%s)
phase_start=$T0

# A process and what it started (cargo, the wasm test runner, chromedriver): children first, so
# that none is left running when the script stops early.
kill_tree() {
  local child
  for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
cleanup() {
  for pid in "$SERVER_PID" "$NATIVE_BUILD_PID" "$BUILD_PID" "$WASM_BUILD_PID" "$WASM_PID"; do
    if [ -n "$pid" ]; then kill_tree "$pid"; fi
  done
}
trap cleanup EXIT

say() { printf '\n[test] %s\n' "$*"; }
# End the current phase: record its time under `name`.
phase() {
  local now
  now=$(date +%s)
  PHASES="$PHASES${PHASES:+, }$1 $((now - phase_start)) s"
  phase_start=$now
}
fail_part() { # name [count]
  say "FAILED: $1"
  status=1
  total_fail=$((total_fail + ${2:-1}))
}
summary_and_exit() {
  echo
  echo "$total_pass passed, $total_fail failed in $(($(date +%s) - T0)) s ($PHASES)"
  exit "$status"
}

strip_ansi() { sed -E 's/\x1b\[[0-9;]*[A-Za-z]//g'; }

# Run a command under a time limit: `timeout` ends it and everything it started (its own process
# group; KILL 30 s after TERM), and the exit code is then 124 (or 137).
limited() { # seconds cmd...
  local secs=$1
  shift
  timeout -k 30 "$secs" "$@"
}
timed_out() { [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; } # rc

# Sum "test result: ... N passed; M failed" lines (cargo test / wasm-bindgen-test-runner).
cargo_counts() { # log → "passed failed"
  strip_ansi < "$1" | grep -E '^test result: ' | sed -E 's/.* ([0-9]+) passed; ([0-9]+) failed.*/\1 \2/' |
    awk '{p += $1; f += $2} END {print p + 0, f + 0}'
}

# Run a cargo test command into a log, within `secs`, and count it. `what` names it in failures.
cargo_part() { # what log secs cmd...
  local what=$1 log=$2 secs=$3
  shift 3
  limited "$secs" "$@" 2>&1 | tee "$log"
  count_part "$what" "$log" "${PIPESTATUS[0]}" "$secs"
}
count_part() { # what log rc [secs]
  local what=$1 log=$2 rc=$3 p f
  read -r p f < <(cargo_counts "$log")
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
  if [ "$rc" -ne 0 ] && timed_out "$rc" && [ -n "${4:-}" ]; then
    fail_part "$what: TIMED OUT after ${4} s (exit $rc)"
  elif [ "$rc" -ne 0 ]; then
    if [ "$f" -gt 0 ]; then status=1; say "FAILED: $what ($f failed)"; else fail_part "$what (exit $rc)"; fi
  elif [ "$p" -eq 0 ]; then
    fail_part "$what ran zero tests"
  fi
}

# --- (a) tools, beside the native tests' compile ----------------------------------------------
# The native tests need only cargo and a C compiler (what a Rust install has): their compile
# starts at once, in the time the tools' downloads and installs wait on the network and disk.
say "cargo test --workspace --no-run, in the background ($LOGS/cargo-native-build.log): the native tests (the core with its decoders linked, and the decoder crates)"
rm -f "$LOGS/cargo-native-build.rc"
(
  limited "$LIMIT_COMPILE" env CARGO_TARGET_DIR=target/native cargo test --workspace --no-run > "$LOGS/cargo-native-build.log" 2>&1
  echo "rc $?" > "$LOGS/cargo-native-build.rc"
) &
NATIVE_BUILD_PID=$!
say "ensure tools"
limited "$LIMIT_TOOLS" bash scripts/ensure-tools.sh
rc=$?
if [ "$rc" -ne 0 ]; then
  if timed_out "$rc"; then fail_part "ensure-tools: TIMED OUT after $LIMIT_TOOLS s"; else fail_part "ensure-tools (exit $rc)"; fi
  summary_and_exit
fi
phase tools

# --- (b) compiles, overlapped -----------------------------------------------------------------
# Three compiles that share nothing (the release wasm build, the wasm tests' debug build, the
# native tests), each in a target directory of its own so that none waits for another's lock:
# one alone leaves a core idle much of the time (LTO's single-threaded codegen, wasm-opt, link).
# The wasm tests take the fixture server's URL at compile time, so the server starts first.
node tests/server.mjs --root /fixtures=tests/fixtures --port 0 > "$LOGS/server.out" 2> "$LOGS/server.err" &
SERVER_PID=$!
URL=""
for _ in $(seq 1 100); do
  URL=$(sed -n 's/^LISTENING //p' "$LOGS/server.out" 2>/dev/null | head -1)
  [ -n "$URL" ] && break
  sleep 0.1
done
# The wasm tests are the README's command, `wasm-pack test --headless --chrome`, with one
# variable more: the fixture server's URL, at compile time (tests/web.rs then reads every fixture
# over HTTP too). Its time limit in the browser comes from .cargo/config.toml, as for anyone
# running the command. `--mode no-install`: the tools are ensure-tools.sh's (wasm-bindgen and its
# test runner on PATH, /usr/bin/chromedriver), and wasm-pack fails rather than download one.
# In a target directory of its own, built in the background first: what wasm-pack then builds
# (`cargo build --tests` for wasm32, then `cargo test`, which builds the examples too) is done.
WASM_TESTS_TARGET=target/wasm-tests
wasm_env() { # cmd... (with the fixture server's URL and the wasm tests' target directory)
  SHARDFETCH_FIXTURES_URL="$URL/fixtures" CARGO_TARGET_DIR=$WASM_TESTS_TARGET "$@"
}
say "build and the wasm tests' build, in the background ($LOGS/build.log, $LOGS/wasm-build.log)"
limited "$LIMIT_BUILD" bash scripts/build.sh > "$LOGS/build.log" 2>&1 &
BUILD_PID=$!
if [ -n "$URL" ]; then
  rm -f "$LOGS/wasm-build.rc"
  (
    wasm_env limited "$LIMIT_WASM_BUILD" cargo build --tests --examples --target wasm32-unknown-unknown > "$LOGS/wasm-build.log" 2>&1
    echo "rc $?" > "$LOGS/wasm-build.rc"
  ) &
  WASM_BUILD_PID=$!
fi

say "cargo test --workspace --no-run (waiting for it)"
wait "$NATIVE_BUILD_PID"
NATIVE_BUILD_PID=""
cat "$LOGS/cargo-native-build.log"
native_build_rc=$(sed -n 's/^rc //p' "$LOGS/cargo-native-build.rc" 2>/dev/null)
native_build_rc=${native_build_rc:-1}
phase compile

# The wasm tests (`wasm-pack test --headless --chrome`: tests/web.rs in headless Chromium; see the
# README) beside the native test runs (the fuzzer holds one core, the network tests mostly
# wait): no environment needed (the fixtures are embedded), and with a fixture server's URL the
# real-fetch path too.
WASM_RC_FILE="$LOGS/cargo-wasm.rc"
rm -f "$WASM_RC_FILE" "$LOGS/cargo-wasm.log"
WASM_PID=""
if [ -n "$URL" ]; then
  (
    # (not `wait`: the build is this subshell's sibling)
    while [ -n "$WASM_BUILD_PID" ] && kill -0 "$WASM_BUILD_PID" 2>/dev/null; do sleep 1; done
    # (a build that ran out of time is not started again here: it fails as its own part)
    build_rc=$(sed -n 's/^rc //p' "$LOGS/wasm-build.rc" 2>/dev/null)
    if [ -n "$build_rc" ] && timed_out "$build_rc"; then
      echo "$build_rc" > "$WASM_RC_FILE"
      exit
    fi
    wasm_env limited "$LIMIT_WASM" wasm-pack test --mode no-install --headless --chrome > "$LOGS/cargo-wasm.log" 2>&1
    echo $? > "$WASM_RC_FILE"
  ) &
  WASM_PID=$!
fi

say "cargo test --workspace (native)"
if timed_out "$native_build_rc"; then
  fail_part "cargo test --no-run: TIMED OUT after $LIMIT_COMPILE s"
elif [ "$native_build_rc" -ne 0 ]; then
  fail_part "cargo test --no-run (exit $native_build_rc)"
else
  cargo_part "cargo test" "$LOGS/cargo-native.log" "$LIMIT_NATIVE" env CARGO_TARGET_DIR=target/native cargo test --workspace
fi
# The pure-Rust zstd path (builds without a C compiler): what reads zstd, with ruzstd.
say "cargo test --no-default-features --features native-decoders: zstd unit tests and the fixture suite, through ruzstd"
cargo_part "cargo test (ruzstd)" "$LOGS/cargo-ruzstd.log" "$LIMIT_RUZSTD" env CARGO_TARGET_DIR=target/native \
  cargo test --no-default-features --features native-decoders --lib --test native -- zstd every_fixture
phase native

# --- (c) build -------------------------------------------------------------------------------
say "build (waiting for it)"
wait "$BUILD_PID"
build_rc=$?
BUILD_PID=""
cat "$LOGS/build.log"
if [ "$build_rc" -ne 0 ]; then
  if timed_out "$build_rc"; then fail_part "build: TIMED OUT after $LIMIT_BUILD s"; else fail_part "build (exit $build_rc)"; fi
  summary_and_exit
fi
phase build

# --- (d) Rust wasm tests in headless Chromium ------------------------------------------------
say "wasm-pack test --headless --chrome (the Rust tests of tests/web.rs in headless Chromium; waiting for them)"
if [ -z "$URL" ]; then
  cat "$LOGS/server.err" >&2
  fail_part "test server did not start"
else
  wait "$WASM_PID" 2>/dev/null || true
  WASM_PID=""
  WASM_BUILD_PID=""
  wasm_build_rc=$(sed -n 's/^rc //p' "$LOGS/wasm-build.rc" 2>/dev/null)
  if [ -n "$wasm_build_rc" ] && timed_out "$wasm_build_rc"; then
    cat "$LOGS/wasm-build.log"
    fail_part "wasm tests' build: TIMED OUT after $LIMIT_WASM_BUILD s"
  else
    touch "$LOGS/cargo-wasm.log"
    cat "$LOGS/cargo-wasm.log"
    count_part "wasm tests" "$LOGS/cargo-wasm.log" "$(cat "$WASM_RC_FILE" 2>/dev/null || echo 1)" "$LIMIT_WASM"
    if ! strip_ansi < "$LOGS/cargo-wasm.log" | grep -qE '^test result: ok\. [1-9][0-9]* passed'; then
      fail_part "wasm tests ran zero tests (check run_in_browser / WASM_BINDGEN_USE_BROWSER)"
    fi
  fi
fi
kill "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
phase wasm

# --- (e) Node + browser tests of the built package -------------------------------------------
# Two files at a time (each starts its own servers on free ports). The files are named: from
# Node 21 on, `node --test <directory>` looks for a module of that name and runs nothing. Each
# file: --test-timeout (Node 20 and 22 time the file as a whole, Node 24 each test in it) and
# --test-force-exit (a file whose tests are done exits, whatever handle is left open). A test
# cut off by its limit is "cancelled": counted as failed.
NODE_TESTS=()
for f in tests/js/*.test.mjs; do [ -f "$f" ] && NODE_TESTS+=("$f"); done
say "node --test (${#NODE_TESTS[@]} files in tests/js/, each within $((NODE_FILE_MS / 1000)) s)"
rc=0
if [ "${#NODE_TESTS[@]}" -eq 0 ]; then
  fail_part "node tests: no tests/js/*.test.mjs"
else
  limited "$LIMIT_NODE" node --test --test-concurrency=2 --test-timeout="$NODE_FILE_MS" --test-force-exit \
    --test-reporter=spec "${NODE_TESTS[@]}" 2>&1 | tee "$LOGS/node.log"
  rc=${PIPESTATUS[0]}
  p=$(strip_ansi < "$LOGS/node.log" | sed -n -E 's/^ℹ pass ([0-9]+)$/\1/p' | tail -1)
  f=$(strip_ansi < "$LOGS/node.log" | sed -n -E 's/^ℹ fail ([0-9]+)$/\1/p' | tail -1)
  c=$(strip_ansi < "$LOGS/node.log" | sed -n -E 's/^ℹ cancelled ([0-9]+)$/\1/p' | tail -1)
  p=${p:-0}
  f=$((${f:-0} + ${c:-0}))
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
  if timed_out "$rc"; then
    fail_part "node tests: TIMED OUT after $LIMIT_NODE s"
  elif [ "$rc" -ne 0 ]; then
    if [ "$f" -gt 0 ]; then status=1; say "FAILED: node tests ($f failed or cancelled)"; else fail_part "node tests (exit $rc)"; fi
  elif [ "$p" -eq 0 ]; then
    fail_part "node tests ran zero tests"
  fi
fi
phase node

# --- (f) summary -----------------------------------------------------------------------------
summary_and_exit
