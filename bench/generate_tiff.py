#!/usr/bin/env python3
"""COGs for `node bench/tiff.mjs` (shardfetch vs geotiff.js): the Zarr bench's images
(bench/generate.py's code and seeds) written by GDAL's COG driver through rasterio (pins in
bench/requirements-tiff.txt), plus, per file, `<name>.json` with the ground truth the page checks
every run against — computed here from what rasterio (GDAL) reads back, never by a reader under test.

    python bench/generate_tiff.py [--out bench/data-tiff] [--force]

Datasets (4096², one band; overviews as the COG driver makes them: halving until one block):
  u16_deflate  bench/generate.py's uint16 image, DEFLATE + PREDICTOR=2, 256² blocks
  u16_zstd     the same image, ZSTD + PREDICTOR=2, 256² blocks
  u8_jpeg      a uint8 mosaic of u8_3d_zstd's volume (every 4th z plane, 8 × 8 planes of 512²),
               JPEG (quality 75), 512² blocks; lossy: `<name>.ref/<level>.raw` hold GDAL's decoded
               levels and readers must agree with them within `tolerance`

Checksums as bench/generate.py (its docstring): full image, tiles (C-ordered tile grid of level 0),
first tile, and the viewport windows: a viewer's 1024×768 view panning and zooming across levels.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import rasterio
from affine import Affine
from rasterio.crs import CRS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import checksum, cut, image_u16, tiles_checksum, volume_u8  # noqa: E402

VIEW_H, VIEW_W = 768, 1024
DATASETS = {
    "u16_deflate": dict(image="u16", block=256, opts=dict(compress="DEFLATE", predictor=2),
                        note="4096² uint16 (the Zarr bench image), DEFLATE + PREDICTOR=2, tiles 256²"),
    "u16_zstd": dict(image="u16", block=256, opts=dict(compress="ZSTD", predictor=2),
                     note="the same image, ZSTD + PREDICTOR=2, tiles 256²"),
    "u8_jpeg": dict(image="u8", block=512, opts=dict(compress="JPEG", quality=75), tolerance=4,
                    note="4096² uint8 mosaic of u8_3d_zstd's z planes 0, 4, …, 252, JPEG quality 75, tiles 512²"),
}


def image(kind: str) -> np.ndarray:
    """The 2-D image, checked against the Zarr bench's checksum of its source when bench/data is there."""
    if kind == "u16":
        src = data = image_u16(1, 4096)  # bench/generate.py: u16_zstd, u16_gzip, …
        zarr_name = "u16_zstd"
    else:
        src = volume_u8(2, (256, 512, 512))  # bench/generate.py: u8_3d_zstd
        data = np.ascontiguousarray(src[::4].reshape(8, 8, 512, 512).transpose(0, 2, 1, 3).reshape(4096, 4096))
        zarr_name = "u8_3d_zstd"
    f = HERE / "data" / zarr_name / "bench.json"
    if f.exists() and json.loads(f.read_text())["full"] != checksum(src):
        sys.exit(f"{kind}: content differs from bench/data/{zarr_name}")
    return data


def viewport_path(levels: list[tuple[int, int]]) -> list[dict]:
    """20 views of VIEW_W × VIEW_H as a viewer pans and zooms: fit, zoom in twice, pan about, zoom
    out, jump to two corners. Centres in level-0 pixels, kept where the view fits in the image."""
    h0, w0 = levels[0]
    lvl = next(k for k, (h, w) in enumerate(levels) if h <= VIEW_W and w <= VIEW_W)
    cy, cx = h0 // 2, w0 // 2
    views = []

    def view(dl=0, dy=0, dx=0):
        """Zoom by `dl` levels, or pan by (dy, dx) × 256 screen pixels."""
        nonlocal lvl, cy, cx
        lvl += dl
        h, w = levels[lvl]
        vh, vw = min(VIEW_H, h), min(VIEW_W, w)
        cy = int(np.clip(cy + (dy * 256 << lvl), (vh // 2) << lvl, (h - vh // 2) << lvl))
        cx = int(np.clip(cx + (dx * 256 << lvl), (vw // 2) << lvl, (w - vw // 2) << lvl))
        y0, x0 = (cy >> lvl) - vh // 2, (cx >> lvl) - vw // 2
        views.append({"level": lvl, "selection": [[y0, y0 + vh], [x0, x0 + vw]]})

    view()
    view(dl=-1)
    view(dx=1)
    view(dx=1)
    view(dl=-1)
    for dy, dx in [(0, -1)] * 3 + [(1, 0)] * 2 + [(0, 1)] * 3 + [(-1, 0)]:
        view(dy=dy, dx=dx)
    view(dl=1)
    view(dy=-1)
    view(dy=-1)
    view(dl=1)
    for y, x in [(0, 0), (h0, w0)]:  # a jump to two corners, at full resolution
        lvl, cy, cx = 0, y, x
        view()
    return views


def write(out: Path, name: str, spec: dict, data: np.ndarray) -> None:
    path = out / f"{name}.tif"
    profile = dict(
        driver="COG", width=data.shape[1], height=data.shape[0], count=1, dtype=data.dtype.name,
        crs=CRS.from_epsg(32633), transform=Affine(10, 0, 500000, 0, -10, 5000000),
        blocksize=spec["block"], **spec["opts"],
    )
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data, 1)
    levels = []
    arrays = []
    with rasterio.open(path) as src:
        if src.block_shapes[0] != (spec["block"], spec["block"]):
            sys.exit(f"{name}: blocks {src.block_shapes[0]}")
        factors = src.overviews(1)
    for k in range(len(factors) + 1):
        with rasterio.open(path, overview_level=k - 1) if k else rasterio.open(path) as src:
            a = src.read(1)
        levels.append(a.shape)
        arrays.append(a)
    lossy = "tolerance" in spec
    back = arrays[0]
    if not lossy and not np.array_equal(back, data):
        sys.exit(f"{name}: GDAL read back different data")
    if lossy:
        err = int(np.abs(back.astype(np.int32) - data.astype(np.int32)).max())
        print(f"  {name}: JPEG max error vs the source {err} (mean {np.abs(back.astype(np.int32) - data).mean():.2f})")
        ref = out / f"{name}.ref"
        if ref.exists():
            shutil.rmtree(ref)
        ref.mkdir()
        for k, a in enumerate(arrays):
            (ref / f"{k}.raw").write_bytes(np.ascontiguousarray(a, a.dtype.newbyteorder("<")).tobytes())
    block = (spec["block"], spec["block"])
    tiles, first = tiles_checksum(back, block)
    windows = viewport_path(levels)
    for w in windows:
        w["checksum"] = checksum(cut(arrays[w["level"]], w["selection"]))
    info = {
        "name": name,
        "note": spec["note"],
        "file": path.name,
        "dtype": str(data.dtype),
        "shape": list(data.shape),
        "tileShape": list(block),
        "levels": [list(s) for s in levels],
        "creation": {k.upper(): v for k, v in spec["opts"].items()} | {"BLOCKSIZE": spec["block"]},
        "fileBytes": path.stat().st_size,
        "decodedBytes": int(data.nbytes),
        "tiles": tiles,
        "tileCount": int(np.prod([n // b for n, b in zip(data.shape, block)])),
        "full": checksum(back),
        "firstTile": first,
        "windows": windows,
        "windowBytes": int(sum(np.prod([b - a for a, b in w["selection"]]) for w in windows) * data.itemsize),
        "tolerance": spec.get("tolerance", 0),
        "reference": f"{name}.ref" if lossy else None,
        "checksumsOf": "GDAL's decoded values" if lossy else "the source image (= GDAL's decoded values)",
    }
    (out / f"{name}.json").write_text(json.dumps(info, indent=1) + "\n")
    print(f"  {name}: {path.stat().st_size / 2**20:.1f} MiB file, levels {levels}, {info['tileCount']} tiles")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "data-tiff"))
    ap.add_argument("--force", action="store_true", help="rewrite datasets that exist")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    versions = {"rasterio": rasterio.__version__, "gdal": rasterio.__gdal_version__, "numpy": np.__version__}
    todo = [n for n in DATASETS if args.force or not (out / f"{n}.json").exists()]
    if not todo:
        print("[generate_tiff] all datasets present (use --force to rewrite)")
        return
    print(f"[generate_tiff] writing {', '.join(todo)} into {out} with {versions}")
    for kind in ("u16", "u8"):
        names = [n for n in todo if DATASETS[n]["image"] == kind]
        if not names:
            continue
        data = image(kind)
        for n in names:
            write(out, n, DATASETS[n], data)
    (out / "generator.json").write_text(json.dumps({"versions": versions, "datasets": list(DATASETS)}, indent=1) + "\n")


if __name__ == "__main__":
    main()
