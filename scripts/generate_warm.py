#!/usr/bin/env python3
"""Writes pkg-template/src/warm-data.ts: the small stores the warm-up worker reads.

The package compiles its read path in a background worker by reading these stores (see
pkg-template/src/warm.ts). The Zarr ones are written by zarr-python 3.1.6, the Neuroglancer
precomputed ones by tensorstore 0.1.86 (never by shardfetch), and each read carries the sum of
its values as the writer reads them back, so the warm-up also checks itself
(tests/js/browser.test.mjs asserts it reports no error). JPEG is lossy and decoders round
differently: its sums carry a tolerance of one level per voxel.

Regenerate:  python3 -m venv /tmp/venv-zp && /tmp/venv-zp/bin/pip install -r tests/fixtures/requirements-zp.txt
             /tmp/venv-zp/bin/python scripts/generate_warm.py
"""

from __future__ import annotations

import base64
import importlib.metadata as md
import json
import sys
import tempfile
from pathlib import Path

PINNED = {"zarr": "3.1.6", "numcodecs": "0.16.6", "numpy": "2.4.6", "tensorstore": "0.1.86"}


def have(pkg: str) -> str | None:
    try:
        return md.version(pkg)
    except md.PackageNotFoundError:
        return None


bad = [f"{p}: need {v}, found {have(p)}" for p, v in PINNED.items() if have(p) != v]
if bad:
    sys.exit("generate_warm.py refuses to run with unpinned versions:\n  " + "\n  ".join(bad))

import numcodecs  # noqa: E402
import numpy as np  # noqa: E402
import tensorstore as ts  # noqa: E402
import zarr  # noqa: E402
from zarr.codecs import BloscCodec, GzipCodec, ZstdCodec  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "pkg-template" / "src" / "warm-data.ts"


def grid(shape, f):
    idx = np.indices(shape)
    return f(*idx)


# name, zarr_format, data, chunks, shards, compressors. What a first open meets most: sharded
# arrays with the common codecs (gzip, zstd, blosc, none), a plain one, a Zarr v2 one.
CASES = [
    ("sharded-gzip", 3, grid((20, 24), lambda i, j: (i * 37 + j * 11) % 1000).astype("uint16"),
     (8, 8), (16, 16), GzipCodec(level=5)),
    ("sharded-zstd-3d", 3, grid((16, 16, 16), lambda i, j, k: (i * 5 + j * 3 + k) % 251).astype("uint8"),
     (8, 8, 8), (16, 16, 16), ZstdCodec(level=0)),
    ("sharded-blosc", 3, grid((16, 16), lambda i, j: ((i * 7 + j) % 64) / 4 - 3).astype("float32"),
     (8, 8), (16, 16), BloscCodec(cname="zstd", clevel=5, shuffle="shuffle")),
    ("sharded-raw", 3, grid((16, 16), lambda i, j: (i * 16 + j) / 8).astype("float32"),
     (8, 8), (16, 16), None),
    ("plain-zstd", 3, grid((16, 16), lambda i, j: (i * 300 + j) % 4096).astype("uint16"),
     (8, 8), None, ZstdCodec(level=0)),
    ("v2-blosc", 2, grid((16, 16), lambda i, j: (i * 13 + j * 29) % 2000).astype("uint16"),
     (8, 8), None, numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)),
]


# name, multiscale metadata, scale metadata, data [x, y, z, channel]. What Neuroglancer layers
# hold most: sharded raw images (murmurhash, gzip), compressed_segmentation labels. (JPEG images
# decode in a decoder module of their own, fetched when an array needs it: nothing to warm here.)
SHARD = {"@type": "neuroglancer_uint64_sharded_v1", "hash": "murmurhash3_x86_128", "preshift_bits": 1,
         "minishard_bits": 1, "shard_bits": 1, "minishard_index_encoding": "gzip", "data_encoding": "gzip"}
PRECOMPUTED = [
    ("precomputed-sharded", {"data_type": "uint8", "num_channels": 1, "type": "image"},
     {"size": [24, 24, 8], "chunk_size": [16, 16, 8], "encoding": "raw", "resolution": [4, 4, 40],
      "sharding": SHARD},
     grid((24, 24, 8, 1), lambda x, y, z, c: (x * 9 + y * 5 + z * 17) % 256).astype("uint8")),
    ("precomputed-cseg", {"data_type": "uint64", "num_channels": 1, "type": "segmentation"},
     {"size": [24, 24, 8], "chunk_size": [16, 16, 8], "encoding": "compressed_segmentation",
      "compressed_segmentation_block_size": [8, 8, 8], "resolution": [4, 4, 40], "sharding": SHARD},
     grid((24, 24, 8, 1), lambda x, y, z, c: 1 + x // 5 + 7 * (y // 6) + 50 * (z // 4)).astype("uint64")),
]


METADATA = {"zarr.json", ".zarray", ".zattrs", ".zgroup", "info"}


def store(name, path: Path, dtype, chunk, region, cut, read, tolerance=0, open_at=""):
    """One store's entry; `read(selection)` reads it back through its writer, afresh each time.

    Files no read touches are dropped (not from an archive, `open_at`: opened at that file):
    the writer, reading without them, gets the same sums."""

    def sums():
        return [float(np.asarray(read(sel)).astype("float64").sum()) for sel in (chunk, region, cut)]

    want = sums()
    for p in sorted(path.rglob("*")):
        if p.is_file() and p.name not in METADATA and not open_at:
            kept = p.read_bytes()
            p.unlink()
            if sums() != want:
                p.write_bytes(kept)
    return {
        "name": name,
        **({"open": open_at} if open_at else {}),
        "dtype": str(dtype),
        "files": files_of(path),
        "chunk": [0] * len(chunk),
        "chunkSum": want[0],
        "region": [[r.start, r.stop] for r in region],
        "regionSum": want[1],
        "cut": [[r.start for r in cut], [r.stop for r in cut]],
        "cutSum": want[2],
        "tolerance": tolerance,
    }


def precomputed_store(tmp: str, name, multiscale, scale, data):
    path = Path(tmp) / name
    kv = {"driver": "file", "path": str(path)}
    t = ts.open({"driver": "neuroglancer_precomputed", "kvstore": kv, "multiscale_metadata": multiscale,
                 "scale_metadata": scale, "create": True}).result()
    t[...] = data

    def read(sel):
        return ts.open({"driver": "neuroglancer_precomputed", "kvstore": kv}).result()[sel].read().result()

    chunk = list(scale["chunk_size"]) + [data.shape[3]]
    chunk0 = tuple(slice(0, c) for c in chunk)
    region = tuple(slice(2, min(s, c + 5)) for s, c in zip(data.shape[:3], chunk[:3])) + (slice(0, data.shape[3]),)
    cut = tuple(slice(3, c) for c in chunk[:3]) + (slice(0, chunk[3]),)
    return store(name, path, data.dtype, chunk0, region, cut, read, tolerance=1 if scale["encoding"] == "jpeg" else 0)


def zip_store(tmp: str):
    """The first case again, in an archive written by zarr-python's ZipStore (entries stored): a
    page that opens a `.zip` or `.ozx` finds the archive's directory parser compiled too."""
    name, _, data, chunks, shards, comp = CASES[0]
    path = Path(tmp) / f"zip-{name}"
    path.mkdir()
    archive = path / "data.zip"
    with zarr.storage.ZipStore(archive, mode="w") as zs:
        arr = zarr.create_array(store=zs, shape=data.shape, chunks=chunks, shards=shards, dtype=data.dtype,
                                fill_value=0, compressors=comp)
        arr[...] = data

    def read(sel):
        with zarr.storage.ZipStore(archive, mode="r") as zs:
            return zarr.open_array(zs, mode="r")[sel]

    chunk0 = tuple(slice(0, c) for c in chunks)
    region = tuple(slice(2, min(s, c + 5)) for s, c in zip(data.shape, chunks))
    cut = tuple(slice(3, c) for c in chunks)
    return store(f"zip-{name}", path, data.dtype, chunk0, region, cut, read, open_at="data.zip")


def files_of(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            raw = p.read_bytes()
            if p.name in METADATA:
                raw = json.dumps(json.loads(raw), separators=(",", ":")).encode()  # same JSON, no blanks
            out[p.relative_to(root).as_posix()] = base64.b64encode(raw).decode()
    return out


def main() -> None:
    stores = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, fmt, data, chunks, shards, comp in CASES:
            path = Path(tmp) / name
            kw = {"compressors": comp} if comp is not None else {"compressors": None}
            if shards is not None:
                kw["shards"] = shards
            arr = zarr.create_array(store=str(path), shape=data.shape, chunks=chunks, dtype=data.dtype,
                                    fill_value=0, zarr_format=fmt, **kw)
            arr[...] = data
            chunk0 = tuple(slice(0, c) for c in chunks)
            region = tuple(slice(2, min(s, c + 5)) for s, c in zip(data.shape, chunks))  # crosses chunks
            cut = tuple(slice(3, c) for c in chunks)  # a box inside chunk 0
            stores.append(store(name, path, data.dtype, chunk0, region, cut,
                                lambda sel, path=path: zarr.open_array(str(path), mode="r")[sel]))
        for case in PRECOMPUTED:
            stores.append(precomputed_store(tmp, *case))
        stores.append(zip_store(tmp))
    body = warm_stores_ts(stores)
    OUT.write_text(
        "// Generated by scripts/generate_warm.py (zarr-python "
        + f"{md.version('zarr')}, numcodecs {md.version('numcodecs')}, tensorstore {md.version('tensorstore')}, "
        + f"numpy {md.version('numpy')}). Do not edit.\n"
        + "// Small stores read by the warm-up worker (warm.ts); files base64, sums as their writer reads them;\n"
        + "// `tolerance`: how far a sum may be off per element (lossy JPEG).\n"
        + "/** @internal */\n"
        + "export interface WarmStore {\n  name: string;\n  dtype: string;\n  files: Record<string, string>;\n"
        + "  chunk: number[];\n  chunkSum: number;\n  region: [number, number][];\n  regionSum: number;\n"
        + "  cut: [number[], number[]];\n  cutSum: number;\n  tolerance: number;\n"
        + "  /** The file to open, when not the store's root (an archive). */\n  open?: string;\n}\n\n"
        + "/** @internal */\nexport const WARM_STORES: WarmStore[] = "
        + body
        + ";\n"
    )
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(stores)} stores)")


def warm_stores_ts(stores):
    """The stores as a TypeScript array literal: one store per line (it is data, not code)."""
    return "[\n" + ",\n".join(json.dumps(s, separators=(", ", ": ")) for s in stores) + "\n]"


if __name__ == "__main__":
    main()
