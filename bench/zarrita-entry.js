// esbuild entry for the bench page: zarrita.js (exact-pinned devDependency) and its codecs in
// one ES module, bench/.build/zarrita.js (git-ignored). Its public API only.
export * from "zarrita";
// Its zip store (zarrita's own @zarrita/storage, unzipit underneath), for `--layout zip`.
export { default as ZipFileStore } from "@zarrita/storage/zip";
