#!/usr/bin/env python3
"""Pinned generator of the demo viewer's embedded sample: www/sample/cells.ome.zarr.

A procedural 3D "tissue" volume (uint16, z y x): cells with bright membranes, textured nuclei,
cytoplasm with vesicles, gaps of empty extracellular space, and block labels ("B3", "z12")
so that a person panning around knows where they are and which slice they see.

Written by zarr-python 3.1.6 as an OME-Zarr 0.5 multiscale image (group `zarr.json` attributes
`ome.multiscales`, arrays "0".."3", each level the 2x2x2 mean of the previous one as READ BACK
from disk), sharded (`sharding_indexed`, inner chunks 1x128x128, zstd, crc32c index).

Also writes probes.json: values at probe points of every level, read back by zarr-python from
the files on disk. The viewer tests compare screen pixels with these values; shardfetch never
produces them.

Deterministic (fixed seed): data and probes.json come out identical on every run.

Regenerate:  python3 -m venv /tmp/venv-sample
             /tmp/venv-sample/bin/pip install -r www/sample/requirements.txt
             /tmp/venv-sample/bin/python www/sample/generate.py
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

PINNED = {"zarr": "3.1.6", "numcodecs": "0.16.6", "numpy": "2.4.6"}


sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "fixtures"))
from fixture_common import check_versions  # noqa: E402

VERSIONS = check_versions(PINNED, "www/sample/generate.py", "www/sample/requirements.txt")

import numpy as np  # noqa: E402
import zarr  # noqa: E402
from zarr.codecs import ZstdCodec  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "cells.ome.zarr"
PROBES = HERE / "probes.json"

SEED = 20261122
SHAPE0 = (32, 1024, 1024)  # z, y, x at level 0
VOXEL0 = (1.0, 0.25, 0.25)  # micrometres per voxel at level 0
LEVELS = 4
INNER = (1, 128, 128)
SHARD = (8, 512, 512)

# 5x7 bitmap glyphs (drawn for this file), '#' = ink.
GLYPHS = {
    "A": [".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"],
    "B": ["####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."],
    "C": [".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."],
    "D": ["####.", "#...#", "#...#", "#...#", "#...#", "#...#", "####."],
    "z": [".....", ".....", "#####", "...#.", "..#..", ".#...", "#####"],
    "0": [".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."],
    "1": ["..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."],
    "2": [".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"],
    "3": ["####.", "....#", "....#", ".###.", "....#", "....#", "####."],
    "4": ["...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."],
    "5": ["#####", "#....", "####.", "....#", "....#", "#...#", ".###."],
    "6": [".###.", "#....", "#....", "####.", "#...#", "#...#", ".###."],
    "7": ["#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."],
    "8": [".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."],
    "9": [".###.", "#...#", "#...#", ".####", "....#", "....#", ".###."],
}


def text_mask(text: str, scale: int) -> np.ndarray:
    """Boolean mask of `text` in the 5x7 font, one blank column between glyphs."""
    cols = []
    for i, ch in enumerate(text):
        g = np.array([[c == "#" for c in row] for row in GLYPHS[ch]], dtype=bool)
        if i:
            cols.append(np.zeros((7, 1), dtype=bool))
        cols.append(g)
    m = np.concatenate(cols, axis=1)
    return np.kron(m, np.ones((scale, scale), dtype=bool))


class Lattice:
    """Smooth 3D value noise: random values on a coarse lattice, trilinear interpolation."""

    def __init__(self, rng: np.random.Generator, spacing_um: float, extent_um: tuple) -> None:
        self.spacing = spacing_um
        n = [int(np.ceil(e / spacing_um)) + 2 for e in extent_um]
        self.values = rng.standard_normal(n).astype(np.float32)

    def slice(self, zp: float, yp: np.ndarray, xp: np.ndarray) -> np.ndarray:
        """Noise on the plane z = zp at the coordinates (yp[:, None], xp[None, :]) in µm."""
        fz = zp / self.spacing
        z0 = int(np.floor(fz))
        tz = np.float32(fz - z0)
        plane = (1 - tz) * self.values[z0] + tz * self.values[z0 + 1]
        fy = yp / self.spacing
        fx = xp / self.spacing
        y0 = np.floor(fy).astype(np.int64)
        x0 = np.floor(fx).astype(np.int64)
        ty = (fy - y0).astype(np.float32)[:, None]
        tx = (fx - x0).astype(np.float32)[None, :]
        a = plane[y0][:, x0]
        b = plane[y0][:, x0 + 1]
        c = plane[y0 + 1][:, x0]
        d = plane[y0 + 1][:, x0 + 1]
        # smoothstep weights hide the lattice
        ty = ty * ty * (3 - 2 * ty)
        tx = tx * tx * (3 - 2 * tx)
        return (1 - ty) * ((1 - tx) * a + tx * b) + ty * ((1 - tx) * c + tx * d)


def make_level0() -> np.ndarray:
    """Level 0. Mostly flat regions with hard edges (compresses to a few MB), texture from many
    small structures rather than from per-voxel noise."""
    rng = np.random.default_rng(SEED)
    nz, ny, nx = SHAPE0
    vz, vy, vx = VOXEL0
    extent = (nz * vz, ny * vy, nx * vx)  # 32 x 256 x 256 µm

    # Cells: 3D Voronoi of one jittered seed per grid cell (pitch in µm), with a ring of extra
    # cells around the volume so the border cells are cut, not stretched.
    pitch = np.array([22.0, 27.0, 27.0])
    grid = [int(np.ceil(e / p)) + 2 for e, p in zip(extent, pitch)]
    gz, gy, gx = np.meshgrid(*[np.arange(g) - 1 for g in grid], indexing="ij")
    centres = np.stack([gz, gy, gx], axis=-1).astype(np.float64) + 0.5
    seeds = ((centres + rng.uniform(-0.38, 0.38, size=centres.shape)) * pitch).reshape(-1, 3)
    ncell = len(seeds)
    alive = rng.uniform(size=ncell) > 0.12  # the others are gaps of extracellular space
    cyto = np.round(rng.uniform(380, 820, size=ncell) / 20) * 20
    membrane = np.round(rng.uniform(2100, 3300, size=ncell) / 50) * 50
    nuc_r = rng.uniform(5.0, 8.0, size=ncell)  # nucleus radius, µm
    nuc_c = seeds + rng.uniform(-2.5, 2.5, size=(ncell, 3))  # nucleus centre
    nuc_b = np.round(rng.uniform(1500, 2200, size=ncell) / 20) * 20
    chromatin = Lattice(rng, 1.1, extent)
    # Vesicles: small spheres of one brightness each, in the cytoplasm.
    nves = 30000
    ves = rng.uniform(0, 1, size=(nves, 3)) * np.array(extent)
    ves_r = rng.uniform(0.3, 0.75, size=nves)
    ves_b = np.round(rng.uniform(350, 900, size=nves) / 50) * 50
    print(f"{ncell} cells ({int(alive.sum())} alive), {nves} vesicles")

    yp = (np.arange(ny) + 0.5) * vy
    xp = (np.arange(nx) + 0.5) * vx
    offsets = [(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]
    cy = (yp // pitch[1]).astype(np.int64) + 1
    cx = (xp // pitch[2]).astype(np.int64) + 1
    vol = np.zeros(SHAPE0, dtype=np.uint16)

    for z in range(nz):
        zp = (z + 0.5) * vz
        cz = int(zp // pitch[0]) + 1
        # squared distances to the 27 neighbouring seeds; nearest two per voxel
        d2 = np.empty((27, ny, nx), dtype=np.float64)
        ids = np.empty((27, ny, nx), dtype=np.int64)
        for k, (oz, oy, ox) in enumerate(offsets):
            iz = min(max(cz + oz, 0), grid[0] - 1)
            iy = np.clip(cy + oy, 0, grid[1] - 1)
            ix = np.clip(cx + ox, 0, grid[2] - 1)
            ids[k] = (iz * grid[1] + iy[:, None]) * grid[2] + ix[None, :]
            s = seeds[ids[k]]
            d2[k] = (s[..., 0] - zp) ** 2 + (s[..., 1] - yp[:, None]) ** 2 + (s[..., 2] - xp[None, :]) ** 2
        order = np.argsort(d2, axis=0)[:2]
        c1 = np.take_along_axis(ids, order[:1], axis=0)[0]
        c2 = np.take_along_axis(ids, order[1:2], axis=0)[0]
        q1 = np.take_along_axis(d2, order[:1], axis=0)[0]
        q2 = np.take_along_axis(d2, order[1:2], axis=0)[0]
        # distance to the bisecting plane of the two nearest seeds = distance to the membrane
        wall = (q2 - q1) / (2 * np.linalg.norm(seeds[c2] - seeds[c1], axis=-1))
        live = alive[c1]

        img = np.where(live, cyto[c1], 140.0)
        # vesicles (cross-sections of spheres near this plane)
        near = np.flatnonzero(np.abs(ves[:, 0] - zp) < ves_r)
        for i in near:
            r = np.sqrt(ves_r[i] ** 2 - (ves[i, 0] - zp) ** 2)
            y0, x0 = int(ves[i, 1] / vy), int(ves[i, 2] / vx)
            ys = slice(max(y0 - 4, 0), min(y0 + 5, ny))
            xs = slice(max(x0 - 4, 0), min(x0 + 5, nx))
            disc = (yp[ys, None] - ves[i, 1]) ** 2 + (xp[None, xs] - ves[i, 2]) ** 2 < r * r
            img[ys, xs] = np.where(disc & live[ys, xs], img[ys, xs] + ves_b[i], img[ys, xs])
        # nucleus: a sphere with a bright envelope and three-level chromatin
        nc = nuc_c[c1]
        dn = np.sqrt((nc[..., 0] - zp) ** 2 + (nc[..., 1] - yp[:, None]) ** 2 + (nc[..., 2] - xp[None, :]) ** 2)
        rn = nuc_r[c1]
        tex = chromatin.slice(zp, yp, xp)
        nuc = nuc_b[c1] + np.where(tex > 0.55, 320, np.where(tex < -0.55, -260, 0))
        img = np.where(live & (dn < rn - 0.45), nuc, img)
        img = np.where(live & (dn >= rn - 0.45) & (dn < rn), nuc_b[c1] + 600, img)
        # membranes on top: a 2-3 voxel line with a half-bright rim
        mb = (membrane[c1] + membrane[c2]) / 2
        mb = np.where(live | alive[c2], mb, 0.3 * mb)
        img = np.where(wall < 0.6, (img + mb) / 2, img)
        img = np.where(wall < 0.3, mb, img)
        # block labels (A1..D4 every 256 px) and the slice number
        for by in range(ny // 256):
            for bx in range(nx // 256):
                m = text_mask("ABCD"[by] + str(bx + 1), 3)
                y0, x0 = by * 256 + 10, bx * 256 + 10
                img[y0 : y0 + m.shape[0], x0 : x0 + m.shape[1]][m] = 3900
                m = text_mask(f"z{z:02d}", 2)
                y0 += 26
                img[y0 : y0 + m.shape[0], x0 : x0 + m.shape[1]][m] = 3600
        vol[z] = np.clip(np.rint(img), 0, 4095).astype(np.uint16)
        print(f"  z {z + 1}/{nz}", end="\r", flush=True)
    print()
    return vol


def downsample(a: np.ndarray) -> np.ndarray:
    """2x2x2 mean (round half up), edges cropped to even sizes."""
    z, y, x = (s // 2 * 2 for s in a.shape)
    b = a[:z, :y, :x].astype(np.uint32)
    s = b[0::2, 0::2, 0::2] + b[1::2, 0::2, 0::2] + b[0::2, 1::2, 0::2] + b[0::2, 0::2, 1::2]
    s += b[1::2, 1::2, 0::2] + b[1::2, 0::2, 1::2] + b[0::2, 1::2, 1::2] + b[1::2, 1::2, 1::2]
    return ((s + 4) // 8).astype(np.uint16)


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    level = make_level0()
    datasets = []
    root = zarr.open_group(str(OUT), mode="w", zarr_format=3)
    shapes = []
    for lv in range(LEVELS):
        scale = [v * 2**lv for v in VOXEL0]
        arr = root.create_array(
            name=str(lv),
            shape=level.shape,
            dtype="uint16",
            chunks=INNER,
            shards=tuple(min(s, n) for s, n in zip(SHARD, level.shape)),
            compressors=ZstdCodec(level=12),
            fill_value=0,
            dimension_names=["z", "y", "x"],
        )
        arr[...] = level
        shapes.append(list(level.shape))
        datasets.append({"path": str(lv), "coordinateTransformations": [{"type": "scale", "scale": scale}]})
        # the next level is computed from what zarr-python reads back from disk
        back = zarr.open_array(str(OUT / str(lv)), mode="r")[...]
        assert np.array_equal(back, level)
        level = downsample(back)
    root.attrs["ome"] = {
        "version": "0.5",
        "multiscales": [
            {
                "name": "cells",
                "axes": [
                    {"name": "z", "type": "space", "unit": "micrometer"},
                    {"name": "y", "type": "space", "unit": "micrometer"},
                    {"name": "x", "type": "space", "unit": "micrometer"},
                ],
                "datasets": datasets,
                "type": "mean",
                "metadata": {"method": "2x2x2 mean of the previous level as read back by zarr-python"},
            }
        ],
    }

    # Probe values, read back through a fresh zarr-python handle on the files.
    rng = np.random.default_rng(SEED + 1)
    g = zarr.open_group(str(OUT), mode="r")
    levels = []
    for lv in range(LEVELS):
        a = g[str(lv)]
        nz, ny, nx = a.shape
        zs = sorted({0, 5 >> lv, nz // 2, nz - 1})
        ys = np.unique(np.linspace(3, ny - 4, 24).round().astype(int))
        xs = np.unique(np.linspace(5, nx - 2, 24).round().astype(int))
        probes = []
        for z in zs:
            plane = a[z]
            for y in ys:
                for x in xs:
                    probes.append([int(z), int(y), int(x), int(plane[y, x])])
            for y, x in zip(rng.integers(0, ny, 64), rng.integers(0, nx, 64)):
                probes.append([int(z), int(y), int(x), int(plane[y, x])])
        levels.append({"path": str(lv), "shape": list(a.shape), "probes": probes})
    with open(PROBES, "w") as f:
        json.dump(
            {
                "generator": {"script": "www/sample/generate.py", **VERSIONS},
                "dataset": OUT.name,
                "format": "probes are [z, y, x, value] in each level's own voxel indices",
                "levels": levels,
            },
            f,
            separators=(",", ":"),
        )
        f.write("\n")
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"wrote {OUT} ({size / 1e6:.2f} MB on disk), levels {shapes}, and {PROBES.name}")


if __name__ == "__main__":
    main()
