#!/usr/bin/env python3
"""Reference sets at scale for bench/refs-scale.mjs: one raw file, data.bin (a 2000 x 2000 uint16
array in 40,000 chunks of 10 x 10, chunk after chunk in C order), described three ways under
bench/data-refs/: a kerchunk version-1 JSON file (refs.json, every chunk a [url, offset, length]
entry) and fsspec's Parquet reference set of the same references (refs.parq/, record_size 10,000,
written by fsspec's LazyReferenceMapper with fastparquet, as kerchunk's refs_to_dataframe does).

Run in the venv of tests/fixtures/requirements-containers.txt (fsspec, pandas, fastparquet):
    /tmp/venv-containers/bin/python bench/generate_refs.py
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fixtures"))
from fixture_common import check_versions  # noqa: E402

check_versions({"fsspec": "2026.9.0", "pandas": "3.1.1", "fastparquet": "2026.9.0", "numpy": "2.4.6"},
               "bench/generate_refs.py", "tests/fixtures/requirements-containers.txt")

import numpy as np  # noqa: E402
from fsspec.implementations.reference import LazyReferenceMapper  # noqa: E402

OUT = Path(__file__).resolve().parent / "data-refs"
SHAPE, CHUNK = (2000, 2000), (10, 10)


def value(i, j):
    return ((i * 7 + j * 13) % 65536).astype("<u2")


def main():
    OUT.mkdir(exist_ok=True)
    grid = (SHAPE[0] // CHUNK[0], SHAPE[1] // CHUNK[1])
    nbytes = CHUNK[0] * CHUNK[1] * 2
    i, j = np.indices(SHAPE)
    full = value(i, j)
    refs = {
        ".zgroup": json.dumps({"zarr_format": 2}),
        "x/.zarray": json.dumps({"shape": list(SHAPE), "chunks": list(CHUNK), "dtype": "<u2", "compressor": None,
                                 "filters": None, "fill_value": 0, "order": "C", "zarr_format": 2}),
        "x/.zattrs": json.dumps({"_ARRAY_DIMENSIONS": ["y", "x"]}),
    }
    with open(OUT / "data.bin", "wb") as f:
        for a in range(grid[0]):
            for b in range(grid[1]):
                off = f.tell()
                f.write(np.ascontiguousarray(full[a * 10:(a + 1) * 10, b * 10:(b + 1) * 10]).tobytes())
                refs[f"x/{a}.{b}"] = ["data.bin", off, nbytes]
    (OUT / "refs.json").write_text(json.dumps({"version": 1, "refs": refs}))
    parq = OUT / "refs.parq"
    if parq.exists():
        import shutil
        shutil.rmtree(parq)
    parq.mkdir()
    m = LazyReferenceMapper.create(str(parq), record_size=10000)
    for k, v in refs.items():
        m[k] = v.encode() if isinstance(v, str) else v
    m.flush()
    print(f"wrote {OUT}: {grid[0] * grid[1]} chunks; refs.json {(OUT / 'refs.json').stat().st_size} B, "
          f"refs.parq {sum(p.stat().st_size for p in parq.rglob('*') if p.is_file())} B")


if __name__ == "__main__":
    main()
