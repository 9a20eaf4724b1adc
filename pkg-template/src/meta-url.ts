/**
 * The first request `open` makes when no format is named, known before the module has loaded:
 * a node's `zarr.json` (the URL without its query, trailing slashes cut, the path, then the
 * query), or, for a file a store kind names by its extension, the bytes at its start that kind
 * reads first (and the decoder module it reads through); `url` "" when not certain from the URL.
 * The core's rule is `open::first_request`; `tests/tables/first-metadata-url.json` pins this
 * copy to it.
 * @internal
 */
export interface FirstRequest {
  url: string;
  /** The `Range` header, or "". */
  range: string;
  /** The decoder modules the store kind reads through (space-separated: a `.nc` may be NetCDF-3 or HDF5), or "". */
  reader: string;
}

/** Extensions of the store kinds whose first read is certain: [pattern, bytes, reader]. */
const FIRST_READS: [RegExp, number, string][] = [
  [/\.(tif|tiff|btf|tf8)$/i, 64 << 10, "tiff"],
  [/\.nc$/i, 64 << 10, "hdf5 netcdf3"],
  [/\.(h5|hdf5|he5|nc4|h5ad)$/i, 64 << 10, "hdf5"],
];

export function firstRequest(url: string, path = ""): FirstRequest {
  const none = { url: "", range: "", reader: "" };
  const cut = url.search(/[?#]/);
  const base = (cut < 0 ? url : url.slice(0, cut)).replace(/\/+$/, "");
  const last = /^[a-z]+:\/\/[^/]*(\/.*)?$/i.exec(base)?.[1]?.split("/").pop() ?? "";
  if (!/^https?:\/\//.test(url) || url.includes("|")) return none;
  // A last path segment with an extension other than .zarr: a file a store kind reads.
  if (last.includes(".") && !/\.zarr$/i.test(last)) {
    const kind = FIRST_READS.find(([re]) => re.test(last));
    const bare = cut < 0 ? url : url.slice(0, cut);
    if (!kind || url.includes("#") || bare.endsWith("/")) return none;
    return { url, range: `bytes=0-${kind[1] - 1}`, reader: kind[2] };
  }
  const p = path.replace(/^\/+|\/+$/g, "");
  return { url: `${p === "" ? base : `${base}/${p}`}/zarr.json${cut < 0 ? "" : url.slice(cut)}`, range: "", reader: "" };
}
