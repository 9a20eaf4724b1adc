#!/usr/bin/env bash
# Build, serve the repository over HTTP (port $PORT, default 8080) and print a sample array.
# The server keeps running until interrupted.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
PORT="${PORT:-8080}"
SAMPLE="${SAMPLE:-tests/fixtures/data/zp/shard_gzip_end}"

bash scripts/ensure-tools.sh
bash scripts/build.sh

mkdir -p tests/.tmp
out=tests/.tmp/start-server.out
node tests/server.mjs --root /fixtures=tests/fixtures/data --root /fx=tests/fixtures --root "/=." --port "$PORT" > "$out" &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT INT TERM
URL=""
for _ in $(seq 1 100); do
  URL=$(sed -n 's/^LISTENING //p' "$out" | head -1)
  [ -n "$URL" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { echo "server failed to start (port $PORT in use?)" >&2; exit 1; }
  sleep 0.1
done
[ -n "$URL" ] || { echo "server did not start" >&2; exit 1; }

node examples/print-sample.mjs "$URL/$SAMPLE"

echo
echo "Serving $(pwd) at $URL  (sample array: $URL/$SAMPLE; browser test page: $URL/tests/js/browser.html)"
echo "Press Ctrl-C to stop."
wait "$SERVER_PID"
