#!/usr/bin/env python3
"""The NetCDF-4 file of the HDF5 benchmark (bench/hdf5.mjs, issue 35 item 7), written by
netCDF4-python as climate model output is: an unlimited time axis, 0.25° global grids, float32
variables compressed with zlib + shuffle, CF coordinate variables.

    /tmp/venv-hdf5/bin/python bench/generate_netcdf.py [--out bench/data-hdf5] [--steps 48] [--force]

Writes <out>/climate.nc (about 270 MB) and <out>/climate.json: the layout, the file's size, and
per time step of each variable the checksum of its values, computed here with numpy (never by a
reader), and where h5py finds its chunks (offset, stored bytes) — the least a reader must move.

  t2m(time, lat, lon)  2 m temperature, K; one chunk per time step (1, 721, 1440)
  u10(time, lat, lon)  10 m wind, m/s; tiled (1, 361, 720): four chunks per time step

Content: smooth fields (a latitude profile, travelling planetary waves, a diurnal cycle, a fixed
"orography" pattern) plus Gaussian noise, so that zlib + shuffle compress them about 1.8×, as
real float32 model output (not zeros, not white noise). Deterministic: fixed seeds.

Checksum of a time step (C order, n elements; bench/checksum.mjs): with w_i the float32 bit
pattern as uint32, h = sum_i w_i * ((i mod 65521) + 1) mod 2^32, s = sum_i w_i mod 2^32.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "fixtures"))
from fixture_common import check_versions, pins  # noqa: E402  (stdlib only: loads before the pinned packages)

check_versions(pins(HERE / "requirements-hdf5.txt"), "generate_netcdf.py", "bench/requirements-hdf5.txt")

import h5py  # noqa: E402
import netCDF4  # noqa: E402
import numpy as np  # noqa: E402

MOD = 65521
MASK = np.uint64(0xFFFFFFFF)
NLAT, NLON = 721, 1440
STEP_HOURS = 6
VARIABLES = {
    # name: (chunk shape, attributes)
    "t2m": ((1, NLAT, NLON), {"standard_name": "air_temperature", "long_name": "2 metre temperature", "units": "K"}),
    "u10": ((1, 361, 720), {"standard_name": "eastward_wind", "long_name": "10 metre U wind component", "units": "m s-1"}),
}


def checksum(a: np.ndarray) -> list[int]:
    w = np.ascontiguousarray(a, dtype="<f4").view(np.uint32).ravel().astype(np.uint64)
    weights = (np.arange(w.size, dtype=np.uint64) % MOD) + np.uint64(1)
    return [int((w * weights).sum(dtype=np.uint64) & MASK), int(w.sum(dtype=np.uint64) & MASK)]


def compact_json(x, depth: int = 0) -> str:
    """JSON with dicts one key a line and lists on one line each (per time step when nested)."""
    pad = " " * (depth + 1)
    if isinstance(x, dict):
        return "{\n" + ",\n".join(f"{pad}{json.dumps(k)}: {compact_json(v, depth + 1)}" for k, v in x.items()) + "\n" + " " * depth + "}" + ("\n" if depth == 0 else "")
    if isinstance(x, list) and x and isinstance(x[0], list):
        return "[\n" + ",\n".join(pad + json.dumps(v, separators=(",", ":")) for v in x) + "\n" + " " * depth + "]"
    return json.dumps(x)


def upsample(coarse: np.ndarray) -> np.ndarray:
    """Bilinear interpolation of a coarse 2-D field to NLAT × NLON."""
    out = coarse
    for axis, n in ((0, NLAT), (1, NLON)):
        m = out.shape[axis]
        pos = np.linspace(0, m - 1, n)
        lo = np.clip(np.floor(pos).astype(np.int64), 0, m - 2)
        t = pos - lo
        w = np.zeros((n, m))
        w[np.arange(n), lo] = 1 - t
        w[np.arange(n), lo + 1] += t
        out = np.moveaxis(np.tensordot(w, np.moveaxis(out, axis, 0), axes=(1, 0)), 0, axis)
    return out


class Field:
    """One variable's values, time step by time step (deterministic for a seed)."""

    def __init__(self, seed: int, mean, amplitude: float, noise: float):
        rng = np.random.default_rng(seed)
        lat = np.deg2rad(np.linspace(90, -90, NLAT))[:, None]
        self.lon = np.deg2rad(np.arange(NLON) * 0.25)[None, :]
        self.lat = lat
        self.base = mean(lat) + amplitude * 0.3 * (upsample(rng.random((25, 49))) - 0.5)
        # Travelling waves: zonal wavenumber, phase speed (rad per step), phase, amplitude.
        self.waves = [(int(rng.integers(1, 9)), rng.uniform(-0.3, 0.3), rng.uniform(0, 2 * np.pi), amplitude * rng.uniform(0.1, 0.4)) for _ in range(8)]
        self.amplitude = amplitude
        self.noise = noise
        self.rng = np.random.default_rng(seed + 1000)

    def step(self, t: int) -> np.ndarray:
        f = self.base.copy()
        envelope = np.sin(2 * self.lat) ** 2
        for m, c, phi, a in self.waves:
            f += a * envelope * np.cos(m * self.lon - c * t + phi)
        f += 0.2 * self.amplitude * np.cos(self.lat) * np.cos(self.lon + 2 * np.pi * t * STEP_HOURS / 24)
        f += self.rng.standard_normal((NLAT, NLON)) * self.noise
        return f.astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(HERE / "data-hdf5"))
    ap.add_argument("--steps", type=int, default=48)
    ap.add_argument("--force", action="store_true")
    o = ap.parse_args()
    out = Path(o.out)
    nc_path, info_path = out / "climate.nc", out / "climate.json"
    if info_path.exists() and nc_path.exists() and not o.force:
        print(f"{info_path} exists (--force to rewrite)")
        return
    out.mkdir(parents=True, exist_ok=True)
    nc_path.unlink(missing_ok=True)
    info_path.unlink(missing_ok=True)

    fields = {
        "t2m": Field(35, lambda lat: 250 + 50 * np.cos(lat) ** 2, 12.0, 0.5),
        "u10": Field(36, lambda lat: 8 * np.sin(3 * lat) * np.cos(lat), 6.0, 1.0),
    }
    sums: dict[str, list] = {k: [] for k in VARIABLES}
    with netCDF4.Dataset(nc_path, "w", format="NETCDF4") as ds:
        ds.Conventions = "CF-1.8"
        ds.title = "shardfetch HDF5 benchmark: synthetic 0.25° reanalysis-like fields"
        ds.source = "bench/generate_netcdf.py"
        ds.createDimension("time", None)
        ds.createDimension("lat", NLAT)
        ds.createDimension("lon", NLON)
        time = ds.createVariable("time", "f8", ("time",))
        time.setncatts({"standard_name": "time", "long_name": "time", "units": "hours since 2020-01-01 00:00:00", "calendar": "proleptic_gregorian", "axis": "T"})
        lat = ds.createVariable("lat", "f4", ("lat",))
        lat.setncatts({"standard_name": "latitude", "long_name": "latitude", "units": "degrees_north", "axis": "Y"})
        lat[:] = np.linspace(90, -90, NLAT, dtype=np.float32)
        lon = ds.createVariable("lon", "f4", ("lon",))
        lon.setncatts({"standard_name": "longitude", "long_name": "longitude", "units": "degrees_east", "axis": "X"})
        lon[:] = np.arange(NLON, dtype=np.float32) * 0.25
        vars_ = {}
        for name, (chunks, attrs) in VARIABLES.items():
            v = ds.createVariable(name, "f4", ("time", "lat", "lon"), zlib=True, complevel=4, shuffle=True, chunksizes=chunks)
            v.setncatts(attrs)
            vars_[name] = v
        for t in range(o.steps):
            time[t] = t * STEP_HOURS
            for name, v in vars_.items():
                a = fields[name].step(t)
                v[t, :, :] = a
                sums[name].append(checksum(a))
            if t % 8 == 7:
                print(f"  {t + 1}/{o.steps} time steps", flush=True)

    # Where each time step's chunks are (h5py), and a read-back check of two steps (netCDF4).
    chunks: dict[str, list] = {}
    with h5py.File(nc_path, "r") as f:
        for name in VARIABLES:
            d = f[name]
            per_step = [[] for _ in range(o.steps)]
            for i in range(d.id.get_num_chunks()):
                c = d.id.get_chunk_info(i)
                per_step[c.chunk_offset[0]].append([int(c.byte_offset), int(c.size)])
            chunks[name] = [sorted(x) for x in per_step]
        names = {h5py.h5d.COMPACT: "compact", h5py.h5d.CONTIGUOUS: "contiguous", h5py.h5d.CHUNKED: "chunked"}
        layout = {name: names.get(f[name].id.get_create_plist().get_layout(), "other") for name in VARIABLES}
    with netCDF4.Dataset(nc_path) as ds:
        for name in VARIABLES:
            for t in (0, o.steps - 1):
                if checksum(ds[name][t].data) != sums[name][t]:
                    sys.exit(f"read-back of {name}[{t}] differs")

    size = nc_path.stat().st_size
    info = {
        "file": nc_path.name,
        "bytes": size,
        "writer": f"netCDF4-python {netCDF4.__version__} (netCDF {netCDF4.__netcdf4libversion__}, HDF5 {netCDF4.__hdf5libversion__})",
        "dims": {"time": o.steps, "lat": NLAT, "lon": NLON},
        "timeUnits": "hours since 2020-01-01 00:00:00",
        "variables": {
            name: {"dtype": "float32", "shape": [o.steps, NLAT, NLON], "chunks": list(VARIABLES[name][0]), "filters": ["shuffle", "deflate(4)"], "layout": layout[name], "checksums": sums[name], "chunkRanges": chunks[name]}
            for name in VARIABLES
        },
    }
    info_path.write_text(compact_json(info))
    stored = {name: sum(n for step in chunks[name] for _, n in step) for name in VARIABLES}
    print(f"{nc_path}: {size / 1e6:.1f} MB ({', '.join(f'{k} {v / 1e6:.1f} MB stored' for k, v in stored.items())})")
    if size < 200e6:
        print("warning: the file is under 200 MB (issue 35 asks for at least 200 MB)")


if __name__ == "__main__":
    main()
