// esbuild entry for the bench page: zarrita.js (exact-pinned devDependency) and its codecs in
// one ES module, bench/.build/zarrita.js (git-ignored). Its public API only.
export * from "zarrita";
