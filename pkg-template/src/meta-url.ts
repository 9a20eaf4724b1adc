/**
 * The URL of the first metadata document `open` requests when no format is named: the node's
 * `zarr.json` — the URL without its query, trailing slashes cut, the path, then the query.
 * The core's rule is `open::first_metadata_url`; `tests/tables/first-metadata-url.json` pins
 * this copy to it (the wrapper needs it before the module has loaded).
 * @internal
 */
export function firstMetadataUrl(url: string, path = ""): string {
  const cut = url.search(/[?#]/);
  const base = (cut < 0 ? url : url.slice(0, cut)).replace(/\/+$/, "");
  const p = path.replace(/^\/+|\/+$/g, "");
  return `${p === "" ? base : `${base}/${p}`}/zarr.json${cut < 0 ? "" : url.slice(cut)}`;
}
