#!/usr/bin/env python3
"""The COG of `node bench/maplibre.mjs` (shardfetch/maplibre vs @geomatico/maplibre-cog-protocol in
MapLibre): bench/generate.py's 4096² uint16 image placed in Web Mercator at zoom 12 (from tile
2176, 1408) and written by GDAL's COG driver with TILING_SCHEME=GoogleMapsCompatible, DEFLATE +
PREDICTOR=2, 256² tiles, overviews down to one tile (zooms 11 to 8); through rasterio (pins in
tests/fixtures/requirements-maplibre.txt).

    python bench/generate_maplibre.py [--out bench/data-maplibre] [--force]
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import rasterio
import rasterio.shutil
from affine import Affine

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import image_u16  # noqa: E402

HALF = math.pi * 6378137.0
ZOOM, TX, TY, N = 12, 2176, 1408, 4096


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "data-maplibre"))
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args()
    out = Path(a.out)
    file = out / "u16_mercator.tif"
    if file.exists() and not a.force:
        print(f"{file} exists")
        return
    out.mkdir(parents=True, exist_ok=True)
    img = image_u16(7, N)
    r = 2 * HALF / (256 * 2**ZOOM)
    src = out / "src.tif"
    with rasterio.open(src, "w", driver="GTiff", width=N, height=N, count=1, dtype="uint16", crs="EPSG:3857",
                       transform=Affine(r, 0, -HALF + TX * 256 * r, 0, -r, HALF - TY * 256 * r)) as d:
        d.write(img[None])
    rasterio.shutil.copy(src, file, driver="COG", TILING_SCHEME="GoogleMapsCompatible", BLOCKSIZE=256,
                         COMPRESS="DEFLATE", PREDICTOR=2, WARP_RESAMPLING="NEAREST", RESAMPLING="AVERAGE")
    src.unlink()
    with rasterio.open(file) as d:
        meta = {"file": file.name, "zoom": ZOOM, "tile": [TX, TY], "size": N, "overviews": d.overviews(1),
                "bytes": file.stat().st_size, "min": int(img.min()), "max": int(img.max()),
                "writer": f"GDAL {rasterio.__gdal_version__} (rasterio {rasterio.__version__})"}
    (out / "u16_mercator.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(meta)


if __name__ == "__main__":
    main()
