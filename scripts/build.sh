#!/usr/bin/env bash
# Build the npm package into pkg/: Rust → wasm32 → wasm-bindgen (--target web) → wasm-opt
# (binaryen from npm, never Debian's) → TypeScript wrapper (pkg-template/src) → package files.
# The decoders kept out of the module (jpeg, png, jxl, bz2, lzma, pcodec, compresso, parquet, hdf5, webp, lerc, tiff, ccitt, netcdf3), and the map adapters' raster module, are wasm modules of
# their own in pkg/wasm/decoders/, plain exports, no glue (decoders/abi).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

bash scripts/ensure-tools.sh

TARGET_DIR="${CARGO_TARGET_DIR:-target}"
WASM_IN="$TARGET_DIR/wasm32-unknown-unknown/release/shardfetch.wasm"
OUT="${SHARDFETCH_OUT:-pkg}"
# The decoders kept out of the module: each a wasm module of its own (decoders/<name>), fetched
# when an opened array names it.
DECODERS="jpeg png jxl bz2 lzma pcodec compresso parquet hdf5 webp lerc tiff ccitt netcdf3 raster"
# Features wasm-opt may use: what rustc enables by default for wasm32-unknown-unknown (binaryen
# also reads the module's target_features section). Keep in sync if rustc's defaults change.
WASM_FEATURES="--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue"

echo "[build] cargo build --lib --target wasm32-unknown-unknown --release (the module, without the decoders)"
cargo build --lib --target wasm32-unknown-unknown --release --no-default-features --features zstd-c
echo "[build] cargo build the decoder modules: $DECODERS"
cargo build --lib --target wasm32-unknown-unknown --release \
  $(for d in $DECODERS; do printf -- '-p shardfetch-%s ' "$d"; done) \
  --features "$(for d in $DECODERS; do printf 'shardfetch-%s/module,' "$d"; done)"

echo "[build] wasm-bindgen --target web"
rm -rf "$OUT"
mkdir -p "$OUT/wasm/decoders"
wasm-bindgen --target web --out-dir "$OUT/wasm" --out-name shardfetch "$WASM_IN"

echo "[build] glue factory (a trapped module can be replaced)"
node scripts/glue-factory.mjs "$OUT/wasm"

node scripts/strip-exports.mjs "$OUT/wasm/shardfetch_bg.wasm" rust_zstd_wasm_shim_

echo "[build] wasm-opt -O3: the module and the decoders"
# shellcheck disable=SC2086
node_modules/.bin/wasm-opt -O3 $WASM_FEATURES -o "$OUT/wasm/shardfetch_bg.wasm" "$OUT/wasm/shardfetch_bg.wasm" &
for d in $DECODERS; do
  # shellcheck disable=SC2086
  node_modules/.bin/wasm-opt -O3 $WASM_FEATURES --strip-debug --strip-producers \
    -o "$OUT/wasm/decoders/$d.wasm" "$TARGET_DIR/wasm32-unknown-unknown/release/shardfetch_$d.wasm" &
done
wait

echo "[build] tsc: type-check, declarations (pkg-template/src → $OUT/)"
node_modules/.bin/tsc -p pkg-template/tsconfig.json --emitDeclarationOnly
# The wrapper's modules (one concern each) ship as one file per entry point: a page loading
# fifteen small modules waits for their waterfall (measured: +40 ms to import, which delayed
# the warm-up past a first open). The wasm glue stays one shared module.
echo "[build] esbuild: index.js, worker.js, warm.js, viv.js, openlayers.js"
node_modules/.bin/esbuild pkg-template/src/index.ts pkg-template/src/worker.ts pkg-template/src/warm.ts \
  --bundle --format=esm --target=es2022 --outdir="$OUT" --external:./wasm/shardfetch.js --external:./wasm/factory.js --external:'node:*' --log-level=warning
# shardfetch/viv: the Viv adapter, importing the package's entry (one module instance).
node_modules/.bin/esbuild pkg-template/src/viv.ts \
  --bundle --format=esm --target=es2022 --outdir="$OUT" --external:./index.js --log-level=warning
# shardfetch/maplibre: MapLibre's addProtocol tiles, likewise (MapLibre itself is not imported).
node_modules/.bin/esbuild pkg-template/src/maplibre.ts \
  --bundle --format=esm --target=es2022 --outdir="$OUT" --external:./index.js --external:maplibre-gl --log-level=warning
# shardfetch/openlayers: OpenLayers' tile source; `ol` is the page's (a peer dependency), never bundled.
node_modules/.bin/esbuild pkg-template/src/openlayers.ts \
  --bundle --format=esm --target=es2022 --outdir="$OUT" --external:./index.js --external:ol --external:'ol/*' --log-level=warning
# shardfetch/h5web: h5web's data provider (no import of h5web: its interface, restated).
node_modules/.bin/esbuild pkg-template/src/h5web.ts \
  --bundle --format=esm --target=es2022 --outdir="$OUT" --external:./index.js --external:@h5web/app --log-level=warning
cp pkg-template/package.json pkg-template/README.md "$OUT/"

echo "[build] verify the optimised module loads"
node scripts/verify-wasm.mjs "$OUT"

raw=$(wc -c < "$OUT/wasm/shardfetch_bg.wasm")
gz=$(gzip -9 -c "$OUT/wasm/shardfetch_bg.wasm" | wc -c)
echo "[build] done: $OUT/wasm/shardfetch_bg.wasm $raw bytes raw, $gz bytes gzipped"
for d in $DECODERS; do
  echo "[build]   decoder $d: $(wc -c < "$OUT/wasm/decoders/$d.wasm") bytes raw, $(gzip -9 -c "$OUT/wasm/decoders/$d.wasm" | wc -c) gzipped"
done
# The module's budget (README, Supported): what every page downloads.
BUDGET_GZ=369500
if [ "$gz" -gt "$BUDGET_GZ" ]; then
  echo "[build] ERROR: the module is $gz bytes gzipped, above its $BUDGET_GZ-byte budget" >&2
  exit 1
fi
