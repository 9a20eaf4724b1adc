// What a user searching the npm registry meets: the published package.json's description and
// keywords name every format the package reads (the README's "Containers" and "Supported"
// sections list them). Reads pkg-template/package.json; needs no build.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const meta = JSON.parse(fs.readFileSync(path.resolve(here, "../../pkg-template/package.json"), "utf8"));

// Each format as the description spells it, and the keyword a registry search would use.
const FORMATS = [
  ["Zarr v2", "zarr-v2"], ["Zarr v2 and v3 (sharded)", "sharding"], ["OME-Zarr", "ome-zarr"],
  ["GeoZarr", "geozarr"], ["Icechunk", "icechunk"], ["kerchunk", "kerchunk"], [".ozx", "zip"],
  ["COG", "cog"], ["GeoTIFF", "geotiff"], ["OME-TIFF", "ome-tiff"], ["BigTIFF", "bigtiff"],
  ["HDF5", "hdf5"], ["NetCDF-4", "netcdf4"], ["NetCDF-3", "netcdf3"], ["MDIO", "mdio"],
  ["Neuroglancer precomputed", "neuroglancer"],
];

test("the package's description and keywords name every format it reads", () => {
  const missing = FORMATS.filter(([name]) => !meta.description.includes(name)).map(([n]) => n);
  assert.deepEqual(missing, [], "formats missing from the description");
  const kw = new Set(meta.keywords);
  const absent = FORMATS.map(([, k]) => k).filter((k) => !kw.has(k));
  assert.deepEqual(absent, [], "keywords missing");
  assert.ok(kw.has("netcdf") && kw.has("tiff"), "the generic names too");
});
