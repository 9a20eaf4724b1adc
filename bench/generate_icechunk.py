#!/usr/bin/env python3
"""The bench datasets committed to Icechunk repositories (`bench/run.mjs --layout icechunk`,
issue 22 item 6): one repository per dataset, bench/data-icechunk/<name>.icechunk, written by
the `icechunk` package itself (2.3.0, spec v2; it needs Python >= 3.12), with the same pins as
the test fixtures (tests/fixtures/requirements-icechunk.txt):

    python3.12 -m venv /tmp/venv-bench-ice
    /tmp/venv-bench-ice/bin/pip install -r tests/fixtures/requirements-icechunk.txt
    /tmp/venv-bench-ice/bin/python bench/generate_icechunk.py [--data bench/data] [--out bench/data-icechunk]
        [--force] [name ...]

(bench/run.mjs --layout icechunk does this itself when a repository is missing.) Each repository
holds a root group and the array at path <name>; one commit on `main`. The array is copied byte
for byte: its zarr.json as written by bench/generate.py and every shard file, each stored as one
native Icechunk chunk, so chunks, shards, codecs and stored bytes are those of the plain
dataset and a reader moves the same chunk bytes in both layouts; what differs is Icechunk's own
files (repo, snapshot, manifest) and the chunk objects' names. Checked after the commit, through
icechunk and zarr: the metadata and every value equal the plain dataset's (whose checksums the
benchmark checks each run, bench.json).

A repository present is kept (--force rewrites it); each is written into <name>.icechunk.tmp
and renamed when complete, so an interrupted run leaves none half written. Icechunk's object
ids and timestamps are random, so rewritten repositories differ in their file names, never in
what they hold.
"""
from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import shutil
import sys
from pathlib import Path

PINNED = {"icechunk": "2.3.0", "zarr": "3.1.6"}
if any(md.version(p) != v for p, v in PINNED.items()):
    sys.exit(f"bench/generate_icechunk.py needs {PINNED} (tests/fixtures/requirements-icechunk.txt, Python >= 3.12)")

import icechunk as ic  # noqa: E402
import numpy as np  # noqa: E402
import zarr  # noqa: E402
from zarr.core.buffer import default_buffer_prototype  # noqa: E402
from zarr.core.sync import sync  # noqa: E402

if hasattr(ic, "set_logs_filter"):
    ic.set_logs_filter("error")

HERE = Path(__file__).resolve().parent
DEFAULT = ["u16_zstd", "u16_gzip", "u8_3d_zstd", "f32_raw", "u16_tiny_zstd"]  # bench/run.mjs's DATASETS


def files_of(src: Path) -> list[str]:
    """The store's keys: zarr.json and every shard file (not bench.json)."""
    keys = [p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file() and p.name != "bench.json"]
    return sorted(keys, key=lambda k: (k != "zarr.json", k))


def convert(src: Path, dest: Path, name: str) -> dict:
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    repo = ic.Repository.create(ic.local_filesystem_storage(str(tmp)))
    session = repo.writable_session("main")
    store = session.store
    zarr.create_group(store=store, attributes={"source": f"bench/data/{name}", "writer": f"bench/generate_icechunk.py, icechunk {ic.__version__}"})
    keys = files_of(src)
    proto = default_buffer_prototype()
    for key in keys:  # zarr.json first: icechunk wants the array node before its chunks
        sync(store.set(f"{name}/{key}", proto.buffer.from_bytes((src / key).read_bytes())))
    snap = session.commit(f"bench dataset {name}, copied from bench/data/{name} (zarr.json and {len(keys) - 1} shards, byte for byte)")

    # Checks, through icechunk itself: metadata, chunk storage and values as in the plain dataset.
    plain = zarr.open_array(store=str(src), mode="r")
    ice = zarr.open_array(store=repo.readonly_session("main").store, path=name, mode="r")
    if ice.metadata.to_dict() != plain.metadata.to_dict():
        sys.exit(f"{name}: the metadata read from Icechunk differs from bench/data/{name}/zarr.json")
    if (ice.chunks, ice.shards, ice.compressors) != (plain.chunks, plain.shards, plain.compressors):
        sys.exit(f"{name}: chunks, shards or codecs differ")
    stored = sum((src / k).stat().st_size for k in keys if k != "zarr.json")
    chunk_files = sum(p.stat().st_size for p in (tmp / "chunks").iterdir())
    if chunk_files != stored:
        sys.exit(f"{name}: {chunk_files} bytes of Icechunk chunks for {stored} bytes of shards")
    if not np.array_equal(ice[...], plain[...]):
        sys.exit(f"{name}: values read from Icechunk differ from bench/data/{name}")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return {"snapshot": snap, "shards": len(keys) - 1, "storedBytes": stored}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help=f"datasets (default: {', '.join(DEFAULT)})")
    ap.add_argument("--data", default=str(HERE / "data"), help="the plain datasets (bench/generate.py)")
    ap.add_argument("--out", default=str(HERE / "data-icechunk"))
    ap.add_argument("--force", action="store_true", help="rewrite repositories that exist")
    args = ap.parse_args()
    data, out = Path(args.data), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.names or DEFAULT:
        src = data / name
        dest = out / f"{name}.icechunk"
        if not (src / "bench.json").is_file():
            sys.exit(f"{src}: no dataset (run bench/generate.py first)")
        if dest.exists() and not args.force:
            print(f"  {name}: {dest} present (--force rewrites it)")
            continue
        r = convert(src, dest, name)
        print(f"  {name}: {dest}, snapshot {r['snapshot']}, {r['shards']} shards, "
              f"{r['storedBytes'] / 2**20:.1f} MiB of chunks, values checked")
    (out / "writer.json").write_text(json.dumps({"writer": "bench/generate_icechunk.py", "versions": PINNED}, indent=1) + "\n")


if __name__ == "__main__":
    main()
