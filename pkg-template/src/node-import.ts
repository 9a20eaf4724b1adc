/**
 * A Node built-in, imported only when running in Node. The specifier is not a literal so that
 * no bundler tries to resolve it for the browser (esbuild would fail without
 * `--external:node:*`); the comments keep webpack and Vite from warning about it.
 * @internal
 */
export function nodeImport(specifier: string): Promise<unknown> {
  return import(/* webpackIgnore: true */ /* @vite-ignore */ specifier);
}
