/**
 * The URL of the first metadata document `open` requests when no format is named: the node's
 * `zarr.json` — the URL without its query, trailing slashes cut, the path, then the query; ""
 * when that is not certain from the URL alone.
 * The core's rule is `open::first_metadata_url`; `tests/tables/first-metadata-url.json` pins
 * this copy to it (the wrapper needs it before the module has loaded).
 * @internal
 */
export function firstMetadataUrl(url: string, path = ""): string {
  const cut = url.search(/[?#]/);
  const base = (cut < 0 ? url : url.slice(0, cut)).replace(/\/+$/, "");
  // Not certain from the URL alone: a pipeline, another scheme (gs://, zarr3://…), a last path
  // segment with an extension other than .zarr (a file a store kind reads: .zip, .json, .tif, …).
  const last = /^[a-z]+:\/\/[^/]*(\/.*)?$/i.exec(base)?.[1]?.split("/").pop() ?? "";
  if (!/^https?:\/\//.test(url) || url.includes("|") || (last.includes(".") && !/\.zarr$/i.test(last))) return "";
  const p = path.replace(/^\/+|\/+$/g, "");
  return `${p === "" ? base : `${base}/${p}`}/zarr.json${cut < 0 ? "" : url.slice(cut)}`;
}
