#!/usr/bin/env python3
"""Benchmark data for `npm run bench`: five sharded Zarr v3 arrays written by zarr-python
(versions pinned in requirements.txt), plus, per array, `bench.json` with the ground truth the
benchmark checks every run against (checksums computed here with numpy, never by a reader).

    python bench/generate.py [--out bench/data] [--force]

Deterministic: fixed seeds; zstd/gzip output is a function of the input (gzip's header time is
pinned to 0), so reruns write identical files.
Content is image-like (smooth background, blurred blobs, shot noise) so that compression ratios
are those of real microscopy-style data, not of zeros or white noise.

Checksum of a C-ordered block of n elements (also in bench/page.mjs): with w_i the element's
raw bits as a uint32 (uint8/uint16 zero-extended, float32 bit pattern),
    h = sum_i w_i * ((i mod 65521) + 1)  mod 2^32,   s = sum_i w_i  mod 2^32.
The "tiles" checksum combines the per-inner-chunk (h_c, s_c) over the C-ordered chunk grid:
    T = sum_c (h_c * (c + 1) + s_c)  mod 2^32.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from unittest import mock

import numcodecs
import numpy as np
import zarr
from zarr.codecs import BloscCodec, BytesCodec, GzipCodec, ZstdCodec
from zarr.storage import LocalStore

MOD = 65521
MASK = np.uint64(0xFFFFFFFF)
N_WINDOWS = 20
WINDOW = 512


# --- content ---------------------------------------------------------------------------------


def upsample_axis(a: np.ndarray, axis: int, n: int) -> np.ndarray:
    """Linear interpolation of `a` along `axis` to `n` samples (a separable smooth field)."""
    m = a.shape[axis]
    pos = np.linspace(0, m - 1, n)
    lo = np.clip(np.floor(pos).astype(np.int64), 0, m - 2)
    t = (pos - lo).astype(np.float32)
    w = np.zeros((n, m), np.float32)
    w[np.arange(n), lo] = 1 - t
    w[np.arange(n), lo + 1] += t
    return np.moveaxis(np.tensordot(w, np.moveaxis(a, axis, 0), axes=(1, 0)), 0, axis)


def smooth_field(rng: np.random.Generator, shape: tuple[int, ...], coarse: int) -> np.ndarray:
    f = rng.random(tuple(coarse for _ in shape), dtype=np.float32)
    for ax, n in enumerate(shape):
        f = upsample_axis(f, ax, n)
    return f.astype(np.float32)


def add_blobs(rng: np.random.Generator, img: np.ndarray, count: int, sigma: tuple[float, float], amp: float) -> None:
    """Gaussian blobs ("cells"), each computed in its own ±3σ box."""
    for _ in range(count):
        s = rng.uniform(*sigma)
        c = [rng.uniform(0, n) for n in img.shape]
        a = rng.uniform(0.2, 1.0) * amp
        r = int(3 * s) + 1
        box = tuple(slice(max(0, int(ci) - r), min(n, int(ci) + r + 1)) for ci, n in zip(c, img.shape))
        grids = np.ogrid[box]
        d2 = sum(((g - ci) / s) ** 2 for g, ci in zip(grids, c))
        img[box] += (a * np.exp(-0.5 * d2)).astype(np.float32)


def image_u16(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = 100 + 150 * smooth_field(rng, (n, n), 17)
    add_blobs(rng, img, 150, (8, 60), 3000)
    img += rng.standard_normal(img.shape, dtype=np.float32) * (1.5 + 0.3 * np.sqrt(img))  # read + shot noise
    return np.clip(np.rint(img), 0, 65535).astype(np.uint16)


def volume_u8(seed: int, shape: tuple[int, int, int]) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vol = 20 + 60 * smooth_field(rng, shape, 9)
    add_blobs(rng, vol, 1500, (3, 14), 160)
    vol += rng.standard_normal(vol.shape, dtype=np.float32) * 2
    return np.clip(np.rint(vol), 0, 255).astype(np.uint8)


def image_f32(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = 0.1 + 0.3 * smooth_field(rng, (n, n), 17)
    add_blobs(rng, img, 200, (8, 60), 3.0)
    img += rng.standard_normal(img.shape, dtype=np.float32) * 0.02
    return img.astype(np.float32)


# --- checksums (see the module docstring) ----------------------------------------------------


def words(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.dtype == np.float32:
        a = a.view(np.uint32)
    return a.astype(np.uint64)


def checksum_rows(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(h, s) of every row of a 2-D array of words (one block per row)."""
    weights = (np.arange(w.shape[1], dtype=np.uint64) % MOD) + np.uint64(1)
    h = np.zeros(w.shape[0], np.uint64)
    s = np.zeros(w.shape[0], np.uint64)
    for k in range(0, w.shape[0], 64):  # bounded temporaries
        part = w[k : k + 64]
        h[k : k + 64] = (part * weights).sum(axis=1, dtype=np.uint64) & MASK
        s[k : k + 64] = part.sum(axis=1, dtype=np.uint64) & MASK
    return h, s


def checksum(a: np.ndarray) -> list[int]:
    h, s = checksum_rows(words(a).reshape(1, -1))
    return [int(h[0]), int(s[0])]


def tiles_checksum(a: np.ndarray, inner: tuple[int, ...]) -> tuple[int, list[int]]:
    grid = tuple(n // c for n, c in zip(a.shape, inner))
    split = []
    for g, c in zip(grid, inner):
        split += [g, c]
    nd = a.ndim
    blocks = words(a).reshape(split).transpose([2 * k for k in range(nd)] + [2 * k + 1 for k in range(nd)])
    rows = blocks.reshape(int(np.prod(grid)), int(np.prod(inner)))
    h, s = checksum_rows(rows)
    idx = np.arange(1, len(h) + 1, dtype=np.uint64)
    total = int(((h * idx + s).sum(dtype=np.uint64)) & MASK)
    return total, [int(h[0]), int(s[0])]


# --- datasets --------------------------------------------------------------------------------


def windows_2d(rng: np.random.Generator, shape: tuple[int, int]) -> list[list]:
    out = []
    for _ in range(N_WINDOWS):
        y = int(rng.integers(0, shape[0] - WINDOW + 1))
        x = int(rng.integers(0, shape[1] - WINDOW + 1))
        out.append([[y, y + WINDOW], [x, x + WINDOW]])
    return out


def windows_3d(rng: np.random.Generator, shape: tuple[int, int, int]) -> list[list]:
    # One 512×512 plane at a random z (the whole y/x extent of this volume): a viewer's slice.
    zs = rng.choice(shape[0], size=N_WINDOWS, replace=False)
    return [[int(z), [0, WINDOW], [0, WINDOW]] for z in zs]


def cut(a: np.ndarray, sel: list) -> np.ndarray:
    return a[tuple(s if isinstance(s, int) else slice(s[0], s[1]) for s in sel)]


def write(out: Path, name: str, data: np.ndarray, inner, shard, compressors, note: str, windows) -> None:
    path = out / name
    if path.exists():
        shutil.rmtree(path)
    arr = zarr.create_array(
        store=LocalStore(path),
        shape=data.shape,
        dtype=data.dtype,
        chunks=inner,
        shards=shard,
        compressors=compressors,
        serializer=BytesCodec(endian="little"),
        fill_value=0,
        zarr_format=3,
    )
    # numcodecs' gzip puts the wall-clock time in every member header; pin it so that reruns
    # write identical files (the data and sizes do not depend on it).
    with mock.patch("gzip.time.time", return_value=0.0):
        arr[...] = data
    back = arr[...]
    if not np.array_equal(back, data):
        sys.exit(f"{name}: zarr-python read back different data")
    stored = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and f.name != "zarr.json")
    full = checksum(data)
    tiles, first = tiles_checksum(data, inner)
    info = {
        "name": name,
        "note": note,
        "dtype": str(data.dtype),
        "shape": list(data.shape),
        "chunkShape": list(inner),
        "shardShape": list(shard),
        "codec": [c.to_dict()["name"] for c in compressors] if compressors else [],
        "decodedBytes": int(data.nbytes),
        "storedBytes": int(stored),
        "innerChunks": int(np.prod([n // c for n, c in zip(data.shape, inner)])),
        "full": full,
        "tiles": tiles,
        "firstChunk": first,
        "windows": [{"selection": w, "checksum": checksum(cut(data, w))} for w in windows],
        "windowBytes": int(cut(data, windows[0]).nbytes),
    }
    (path / "bench.json").write_text(json.dumps(info, indent=1) + "\n")
    print(f"  {name}: {data.nbytes / 2**20:.1f} MiB decoded, {stored / 2**20:.1f} MiB stored "
          f"(ratio {data.nbytes / stored:.2f}), {info['innerChunks']} inner chunks")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "data"))
    ap.add_argument("--force", action="store_true", help="rewrite datasets that exist")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    versions = {"zarr": zarr.__version__, "numpy": np.__version__, "numcodecs": numcodecs.__version__}
    print(f"[generate] writing into {out} with {versions}")

    names = ["u16_zstd", "u16_gzip", "u8_3d_zstd", "f32_raw", "u16_tiny_zstd", "u16_raw",
             "u16_blosc_zstd", "u16_blosc_lz4"]
    todo = [n for n in names if args.force or not (out / n / "bench.json").exists()]
    if not todo:
        print("[generate] all datasets present (use --force to rewrite)")
        return
    print(f"[generate] writing {', '.join(todo)}")

    def write_missing(out: Path, name: str, *rest) -> None:
        if name in todo:
            write(out, name, *rest)

    img = image_u16(1, 4096)
    wins = windows_2d(np.random.default_rng(11), img.shape)
    write_missing(out, "u16_zstd", img, (256, 256), (1024, 1024), [ZstdCodec()],
                  "4096² uint16, zstd (level 0 = library default), shard 1024², inner 256²", wins)
    write_missing(out, "u16_gzip", img, (256, 256), (1024, 1024), [GzipCodec()],
                  "the same image, gzip (level 5)", wins)
    write_missing(out, "u16_tiny_zstd", img, (64, 64), (2048, 2048), [ZstdCodec()],
                  "the same image, many tiny chunks: inner 64², shard 2048², zstd", wins)
    write_missing(out, "u16_raw", img, (256, 256), (1024, 1024), None,
                  "the same image uncompressed: the baseline the decoder measurement subtracts", wins)
    # Decoder measurement only: blosc as OME-Zarr writers configure it (ome-zarr-py: zstd 5 +
    # byte shuffle), and with lz4, blosc's other common inner codec.
    write_missing(out, "u16_blosc_zstd", img, (256, 256), (1024, 1024),
                  [BloscCodec(cname="zstd", clevel=5, shuffle="shuffle")],
                  "the same image, blosc (zstd level 5, byte shuffle)", wins)
    write_missing(out, "u16_blosc_lz4", img, (256, 256), (1024, 1024),
                  [BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")],
                  "the same image, blosc (lz4 level 5, byte shuffle)", wins)
    del img

    vol = volume_u8(2, (256, 512, 512))
    write_missing(out, "u8_3d_zstd", vol, (64, 64, 64), (128, 256, 256), [ZstdCodec()],
                  "256×512×512 uint8, zstd, shard 128×256×256, inner 64³; windows = one whole z plane",
                  windows_3d(np.random.default_rng(12), vol.shape))
    del vol

    f = image_f32(3, 2048)
    write_missing(out, "f32_raw", f, (256, 256), (1024, 1024), None,
                  "2048² float32, no compression (bytes codec only), shard 1024², inner 256²",
                  windows_2d(np.random.default_rng(13), f.shape))
    (out / "generator.json").write_text(json.dumps({"versions": versions, "datasets": names}, indent=1) + "\n")


if __name__ == "__main__":
    main()
