#!/usr/bin/env python3
"""Pinned generator of the viewer's second sample: www/sample/cells.precomputed.

The OME-Zarr sample's levels 1..3 (as zarr-python reads them back from cells.ome.zarr) as a
Neuroglancer precomputed image, the way EM volumes are usually served: uint8 (a fixed contrast
window of the uint16 data), JPEG chunks of 128 x 128 x 1, three scales, each sharded
(`neuroglancer_uint64_sharded_v1`, murmurhash3_x86_128, gzip minishard indexes). Written by
tensorstore 0.1.86 (driver `neuroglancer_precomputed`); shardfetch never writes it.

Also writes probes-precomputed.json: values at probe points of every scale as tensorstore reads
them back (JPEG is lossy; the viewer tests allow for decoders that round differently).

Deterministic: the same bytes on every run. Regenerate (after generate.py):
             python3 -m venv /tmp/venv-sample-pc
             /tmp/venv-sample-pc/bin/pip install -r www/sample/requirements-precomputed.txt
             /tmp/venv-sample-pc/bin/python www/sample/generate_precomputed.py
"""

from __future__ import annotations

import importlib.metadata as md
import json
import shutil
import sys
from pathlib import Path

PINNED = {"zarr": "3.1.6", "tensorstore": "0.1.86", "numpy": "2.4.6"}


sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "fixtures"))
from fixture_common import check_versions  # noqa: E402

check_versions(PINNED, "www/sample/generate_precomputed.py", "www/sample/requirements-precomputed.txt")

import numpy as np  # noqa: E402
import tensorstore as ts  # noqa: E402
import zarr  # noqa: E402

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "cells.ome.zarr"
OUT = HERE / "cells.precomputed"
PROBES = HERE / "probes-precomputed.json"
LEVELS = [1, 2, 3]  # of the OME-Zarr sample: 16 x 512 x 512, 8 x 256 x 256, 4 x 128 x 128
LO, HI = 140, 2300  # contrast window of the uint16 data onto 0..255
SHARDING = {"@type": "neuroglancer_uint64_sharded_v1", "hash": "murmurhash3_x86_128", "preshift_bits": 2,
            "minishard_bits": 2, "shard_bits": 1, "minishard_index_encoding": "gzip", "data_encoding": "raw"}


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    kv = {"driver": "file", "path": str(OUT)}
    group = zarr.open_group(str(SOURCE), mode="r")
    scales = []
    for i, level in enumerate(LEVELS):
        zyx = np.asarray(group[str(level)][...]).astype(np.float64)
        u8 = np.clip(np.round((zyx - LO) * 255.0 / (HI - LO)), 0, 255).astype(np.uint8)
        xyzc = np.ascontiguousarray(u8.transpose(2, 1, 0))[..., None]  # [x, y, z, channel]
        f = 2**level  # voxel size relative to the OME-Zarr level 0 (0.25 x 0.25 x 1 um)
        scale = {"size": list(xyzc.shape[:3]), "chunk_size": [128, 128, 1], "encoding": "jpeg",
                 "jpeg_quality": 90, "resolution": [250.0 * f, 250.0 * f, 1000.0 * f], "sharding": SHARDING}
        spec = {"driver": "neuroglancer_precomputed", "kvstore": kv, "scale_metadata": scale, "create": True}
        if i == 0:
            spec["multiscale_metadata"] = {"data_type": "uint8", "num_channels": 1, "type": "image"}
        ts.open(spec).result()[...] = xyzc
        scales.append(xyzc.shape[:3])

    # Probes, as tensorstore reads the written volume back (fixed seed).
    rng = np.random.default_rng(7)
    out = {"writer": f"tensorstore {md.version('tensorstore')}", "window": [LO, HI], "scales": []}
    for i, shape in enumerate(scales):
        back = np.asarray(ts.open({"driver": "neuroglancer_precomputed", "kvstore": kv, "scale_index": i})
                          .result().read().result())[..., 0]
        pts = []
        for _ in range(3000 if i == 0 else 1500):
            x, y, z = (int(rng.integers(0, n)) for n in shape)
            pts.append([x, y, z, int(back[x, y, z])])
        out["scales"].append({"size": [int(n) for n in shape], "factor": 2**i, "probes": pts})
    PROBES.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"wrote {OUT} ({size} bytes) and {PROBES}")


if __name__ == "__main__":
    main()
