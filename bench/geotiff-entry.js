// esbuild entry for bench/tiff.html: geotiff.js (3.0.5) as one ES module, bench/.build/geotiff.js
// (git-ignored). Its public API only; its Pool's worker is inlined by geotiff.js itself (a Blob URL).
export { fromUrl, Pool } from "geotiff";
// For a fetch client of the page's own (bench/tiff-page.mjs: `cache: "no-store"`).
export { fromCustomClient, BaseClient, BaseResponse } from "geotiff";
