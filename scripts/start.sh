#!/usr/bin/env bash
# Build, serve the repository over HTTP (port $PORT, default 8080) and print the URL of the demo
# viewer (www/) on the embedded sample (www/sample/cells.ome.zarr). The server keeps running
# until interrupted.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
PORT="${PORT:-8080}"
SAMPLE="${SAMPLE:-www/sample/cells.ome.zarr}"

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

# the package in Node, on the sample's full-resolution level
node examples/print-sample.mjs "$URL/$SAMPLE/0" || true

echo
echo "Serving $(pwd) at $URL"
echo
echo "  Viewer:  $URL/www/?url=$URL/$SAMPLE"
echo "           $URL/www/?url=$URL/www/sample/cells.precomputed   (the same tissue as Neuroglancer precomputed: JPEG, sharded)"
echo
echo "(any dataset: $URL/www/?url=<dataset URL>; browser test page: $URL/tests/js/browser.html)"
echo "Press Ctrl-C to stop."
wait "$SERVER_PID"
