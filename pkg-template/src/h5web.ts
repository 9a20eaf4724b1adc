/**
 * `shardfetch/h5web`: an HDF5, NetCDF-4 or NetCDF-3 file (or a Zarr group with consolidated
 * metadata) as the data provider of h5web's viewer (`@h5web/app`): {@link ShardfetchApi}
 * implements h5web's `DataProviderApi` (the API that `H5GroveProvider` and `@h5web/h5wasm`'s
 * providers implement), for `<DataProvider api={…}><App /></DataProvider>`. Entities and
 * attributes come from the file's metadata, values of a selection by range; nothing is
 * downloaded whole. The package does not depend on h5web: the types below are h5web's, restated
 * (its enums are strings), and the class is a plain object with its interface.
 * @packageDocumentation
 */
// From the package's entry (kept external in the build): one instance of the module, shared.
import { Group, open, ShardedArray, ShardfetchError } from "./index.js";
import type { DataType, OpenOptions, SelectionItem } from "./index.js";

/** h5web's `Shape` (17: `{ class, dims }`; 16: the dims alone, see {@link ShardfetchApiOptions.h5webVersion}). */
export type H5WebShape = { class: "Array"; dims: number[] } | { class: "Scalar"; dims: [] } | { class: "Null" } | number[];

type Endianness = "little-endian" | "big-endian" | undefined;

/** h5web's `DType` (the classes this adapter gives). */
export type H5WebDType =
  | { class: "Integer"; signed: boolean; size: number; endianness: Endianness }
  | { class: "Float"; size: number; endianness: Endianness }
  | { class: "Boolean"; base: H5WebDType }
  | { class: "Complex"; realType: H5WebDType; imagType: H5WebDType }
  | { class: "String"; charSet: "ASCII" | "UTF-8" | undefined; strPad: "null-terminated" | "null-padded" | "space-padded" | undefined; length?: number }
  | { class: "Compound"; fields: Map<string, H5WebDType> }
  | { class: "Enumeration"; base: H5WebDType; mapping: Record<number, string> }
  | { class: "Opaque"; tag: string }
  | { class: "Unknown" };

/** h5web's `Attribute`. */
export interface H5WebAttribute {
  name: string;
  shape: H5WebShape;
  type: H5WebDType;
}

/** h5web's `Entity` (a group, with `children` when it is the entity asked for; or a dataset). */
export interface H5WebEntity {
  name: string;
  path: string;
  kind: "group" | "dataset" | "datatype" | "unresolved";
  attributes: H5WebAttribute[];
  children?: H5WebEntity[];
  shape?: H5WebShape;
  type?: H5WebDType;
  rawType?: unknown;
  chunks?: number[];
}

/** h5web's `ValuesStoreParams`: a dataset and h5web's selection (`"0,:,:"`: an index or `:` per axis). */
export interface H5WebValuesParams {
  dataset: H5WebEntity;
  selection?: string;
}

const int = (signed: boolean, size: number): H5WebDType => ({ class: "Integer", signed, size, endianness: undefined });
const float = (size: number): H5WebDType => ({ class: "Float", size, endianness: undefined });

const NUMERIC: Partial<Record<DataType, H5WebDType>> = {
  int8: int(true, 8),
  int16: int(true, 16),
  int32: int(true, 32),
  int64: int(true, 64),
  uint8: int(false, 8),
  uint16: int(false, 16),
  uint32: int(false, 32),
  uint64: int(false, 64),
  // NumPy's times: int64 counts (of `timeUnit`), as h5py gives them.
  datetime64: int(true, 64),
  timedelta64: int(true, 64),
  float16: float(16),
  float32: float(32),
  float64: float(64),
};

const PAD = { nullterm: "null-terminated", nullpad: "null-padded", spacepad: "space-padded" } as const;

/** h5web's type of a shardfetch data type. */
function dtypeOf(dtype: DataType, a?: ShardedArray): H5WebDType {
  const n = NUMERIC[dtype];
  if (n) return n;
  switch (dtype) {
    case "bool":
      return { class: "Boolean", base: int(true, 8) };
    case "complex64":
    case "complex128": {
      const part = float(dtype === "complex64" ? 32 : 64);
      return { class: "Complex", realType: part, imagType: part };
    }
    case "fixed_length_string": {
      const st = a?.stringType;
      return { class: "String", charSet: st?.charset === "utf-8" ? "UTF-8" : "ASCII", strPad: st ? PAD[st.padding] : undefined, length: a?.itemSize };
    }
    case "null_terminated_bytes":
      return { class: "String", charSet: "ASCII", strPad: "null-padded", length: a?.itemSize };
    case "fixed_length_utf32":
    case "string":
      return { class: "String", charSet: "UTF-8", strPad: undefined };
    case "structured":
      return { class: "Compound", fields: new Map((a?.fields ?? []).map(([name, t]) => [name, dtypeOf(t)])) };
    case "raw_bytes":
      return { class: "Opaque", tag: "" };
    default:
      return { class: "Unknown" };
  }
}

/** An HDF5 enum (its members in attribute `hdf5_enum`, name → value) as h5web's. */
function enumOf(a: ShardedArray): H5WebDType | undefined {
  const members = a.attributes.hdf5_enum;
  const base = NUMERIC[a.dtype];
  if (!base || base.class !== "Integer" || members === null || typeof members !== "object" || Array.isArray(members)) return undefined;
  const mapping: Record<number, string> = {};
  for (const [name, v] of Object.entries(members)) if (typeof v === "number") mapping[v] = name;
  return { class: "Enumeration", base, mapping };
}

type ShapeOf = (dims: readonly number[]) => H5WebShape;
/** h5web 17's shape; 16's is the dims alone. */
const shapeOf17: ShapeOf = (dims) => (dims.length === 0 ? { class: "Scalar", dims: [] } : { class: "Array", dims: [...dims] });
const shapeOf16: ShapeOf = (dims) => [...dims];

/**
 * Which top-level members of a JSON object's text hold a number written as a float (a `.` or
 * an exponent): JSON.parse forgets it (`-999.0` is `-999`), and h5web shows the type.
 */
function floatMembers(text: string): Set<string> {
  const out = new Set<string>();
  let depth = 0;
  let key: string | null = null;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (depth === 1 && expectKey) key = JSON.parse(text.slice(i, j + 1)) as string;
      i = j;
    } else if (c === "{" || c === "[") {
      depth++;
      if (depth === 1) expectKey = true;
    } else if (c === "}" || c === "]") depth--;
    else if (c === ":" && depth === 1) expectKey = false;
    else if (c === "," && depth === 1) expectKey = true;
    else if (key !== null && !expectKey && /[-0-9]/.test(c)) {
      let j = i;
      while (j < text.length && /[-+0-9.eE]/.test(text[j])) j++;
      if (/[.eE]/.test(text.slice(i, j))) out.add(key);
      i = j - 1;
    }
  }
  return out;
}

/** h5web's attributes of a node: strings as strings, number lists as arrays (NetCDF's are vectors). */
function attributesOf(node: Group | ShardedArray, shapeOf: ShapeOf): H5WebAttribute[] {
  const attrs = node.attributes;
  const floats = floatMembers(node.attributesText);
  const typeOf = (name: string, v: unknown): H5WebDType => {
    if (typeof v === "string") return { class: "String", charSet: "UTF-8", strPad: undefined };
    if (typeof v === "number") return floats.has(name) || !Number.isInteger(v) ? float(64) : int(true, 64);
    if (typeof v === "boolean") return { class: "Boolean", base: int(true, 8) };
    return { class: "Unknown" };
  };
  return Object.entries(attrs).map(([name, v]) => {
    if (Array.isArray(v)) {
      const first = v.find((x) => x !== null);
      const same = v.every((x) => x === null || typeof x === typeof first);
      return { name, shape: shapeOf([v.length]), type: same ? typeOf(name, first) : { class: "Unknown" } };
    }
    return { name, shape: shapeOf([]), type: typeOf(name, v) };
  });
}

const childPath = (parent: string, name: string) => (parent === "/" ? `/${name}` : `${parent}/${name}`);
const nameOf = (path: string) => (path === "/" ? "" : path.slice(path.lastIndexOf("/") + 1));

/** h5web's description of an opened node (a group's children listed only when `withChildren`). */
function entityOf(node: Group | ShardedArray, path: string, shapeOf: ShapeOf): H5WebEntity {
  const base = { name: nameOf(path), path, attributes: attributesOf(node, shapeOf) };
  if (node instanceof Group) return { ...base, kind: "group" };
  return {
    ...base,
    kind: "dataset",
    shape: shapeOf(node.shape),
    type: enumOf(node) ?? dtypeOf(node.dtype, node),
    rawType: { dtype: node.dtype, dimensionNames: node.dimensionNames, stringType: node.stringType, fields: node.fields },
    ...(node.chunkShape ? { chunks: [...node.chunkShape] } : {}),
  };
}

/** An IEEE half's value (where there is no Float16Array, reads give the raw bits). */
function half(bits: number): number {
  const e = (bits >> 10) & 31;
  const m = bits & 1023;
  const s = bits & 0x8000 ? -1 : 1;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** One `structured` element's fields (little-endian, at their offsets), as h5web's compound value. */
function fieldsAt(view: DataView, at: number, fields: ShardedArray["fields"], itemSize: number): unknown[] {
  const offsets = (fields ?? []).map(([, , off]) => off);
  return (fields ?? []).map(([, t, off]) => {
    const o = at + off;
    switch (t) {
      case "fixed_length_string":
      case "null_terminated_bytes": {
        // Its bytes run to the next field (or the element's end), text to the first NUL.
        const end = at + Math.min(itemSize, ...offsets.filter((x) => x > off));
        const bytes = new Uint8Array(view.buffer, view.byteOffset + o, end - o);
        const nul = bytes.indexOf(0);
        return new TextDecoder().decode(nul < 0 ? bytes : bytes.subarray(0, nul));
      }
      case "bool":
      case "uint8":
        return view.getUint8(o);
      case "int8":
        return view.getInt8(o);
      case "int16":
        return view.getInt16(o, true);
      case "uint16":
        return view.getUint16(o, true);
      case "int32":
        return view.getInt32(o, true);
      case "uint32":
        return view.getUint32(o, true);
      case "int64":
        return view.getBigInt64(o, true);
      case "uint64":
        return view.getBigUint64(o, true);
      case "float16":
        return half(view.getUint16(o, true));
      case "float32":
        return view.getFloat32(o, true);
      case "float64":
        return view.getFloat64(o, true);
      default:
        return undefined;
    }
  });
}

/** A read as h5web wants the value: flat in C order, one JS value per element for complex/compound. */
function valueOf(a: ShardedArray, r: { data: ArrayLike<unknown>; shape: number[]; stride: number[] }, scalar: boolean): unknown {
  const d = a.dtype;
  const inner = d === "complex64" || d === "complex128" ? 2 : d === "structured" || d === "raw_bytes" ? a.itemSize : 1;
  // A trailing element axis (complex, raw, structured) is part of `shape`. A region read is
  // C-ordered and exactly its elements (`Assembly::finish`): flat as h5web wants it.
  const shape = inner > 1 ? r.shape.slice(0, -1) : r.shape;
  let flat = r.data;
  const n = shape.reduce((x, y) => x * y, 1);
  if (inner === 2) {
    const c = flat as ArrayLike<number>;
    flat = Array.from({ length: n }, (_, i) => [c[2 * i], c[2 * i + 1]]);
  } else if (d === "structured" || d === "raw_bytes") {
    const b = flat as Uint8Array;
    const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    flat = Array.from({ length: n }, (_, i) => (d === "structured" ? fieldsAt(view, i * inner, a.fields, inner) : b.slice(i * inner, (i + 1) * inner)));
  } else if (d === "float16") {
    // h5web draws float32/64: the same values, widened.
    flat = flat instanceof Uint16Array ? Float32Array.from(flat, half) : Float32Array.from(flat as ArrayLike<number>);
  }
  return scalar ? flat[0] : flat;
}

/** h5web's selection (`"0,:,:"`) as shardfetch's. */
function selectionOf(selection: string | undefined, ndim: number, url: string): SelectionItem[] {
  if (!selection) return new Array<SelectionItem>(ndim).fill(null);
  const items = selection.split(",").map((s) => (s.trim() === ":" ? null : Number(s)));
  if (items.length !== ndim || items.some((s) => s !== null && !Number.isInteger(s))) {
    throw new ShardfetchError("InvalidSelection", `${url}: selection "${selection}" does not fit ${ndim} axes`, { url });
  }
  return items;
}

/** h5web's `AbortError` is any error named so; a read stopped by h5web rejects with its reason. */
function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new ShardfetchError("Aborted", "operation aborted");
}

/** Options of {@link ShardfetchApi}: the package's open options (headers, fetch, store, …). */
export interface ShardfetchApiOptions extends OpenOptions {
  /** The file name h5web shows (default: the URL's last segment). */
  filepath?: string;
  /**
   * The `@h5web/app` major version given the entities (default 17): 16 describes shapes as
   * plain dims (`[721, 1440]`, `[]` for a scalar), 17 as `{ class, dims }`; the rest is alike.
   */
  h5webVersion?: 16 | 17;
}

/**
 * h5web's data provider over a file read by range: pass it as `<DataProvider api={…}>`. Paths
 * are h5web's (`/`, `/group/variable`); each node is opened once (a NetCDF-4 file's variables
 * from its metadata already read: no request each), values are read for h5web's selection only.
 */
export class ShardfetchApi {
  /** What h5web shows as the file's name. */
  readonly filepath: string;
  readonly url: string;
  readonly #options: OpenOptions;
  readonly #nodes = new Map<string, Promise<Group | ShardedArray>>();
  readonly #shapeOf: ShapeOf;

  constructor(url: string, options: ShardfetchApiOptions = {}) {
    const { filepath, h5webVersion = 17, ...rest } = options;
    this.#shapeOf = h5webVersion === 16 ? shapeOf16 : shapeOf17;
    this.url = url;
    this.filepath = filepath ?? decodeURIComponent(new URL(url, "http://x/").pathname.split("/").filter(Boolean).pop() ?? url);
    // Fixed-length byte strings as text, which h5web shows.
    this.#options = { strings: "text", ...rest };
  }

  /** The node at h5web's `path`, opened once. */
  node(path: string): Promise<Group | ShardedArray> {
    let p = this.#nodes.get(path);
    if (!p) {
      if (path === "/") p = open(this.url, this.#options);
      else {
        const cut = path.lastIndexOf("/");
        const parent = cut <= 0 ? "/" : path.slice(0, cut);
        p = this.node(parent).then((g) => {
          if (!(g instanceof Group)) throw new ShardfetchError("NotFound", `${this.url}: ${parent} is a dataset, not a group`, { url: this.url });
          return g.open(path.slice(cut + 1));
        });
      }
      this.#nodes.set(path, p);
      p.catch(() => this.#nodes.delete(path));
    }
    return p;
  }

  /** h5web's entity at `path`: a group with its children (each opened for its shape and type), or a dataset. */
  async getEntity(path: string): Promise<H5WebEntity> {
    const node = await this.node(path);
    const entity = entityOf(node, path, this.#shapeOf);
    if (node instanceof Group) {
      const children = node.children();
      entity.children = await Promise.all(
        children.map(async (c) => {
          const p = childPath(path, c.name);
          try {
            return entityOf(await this.node(p), p, this.#shapeOf);
          } catch {
            // Listed but not opened (an unsupported type, an external link): shown, not browsable.
            return { name: c.name, path: p, kind: "unresolved" as const, attributes: [] };
          }
        }),
      );
    }
    return entity;
  }

  /** The values of `dataset` at h5web's `selection`, read by range; `abortSignal` stops the read. */
  async getValue(params: H5WebValuesParams, abortSignal?: AbortSignal, onProgress?: (fraction: number) => void): Promise<unknown> {
    const { dataset, selection } = params;
    const node = await this.node(dataset.path);
    if (!(node instanceof ShardedArray)) throw new ShardfetchError("NotAnArray", `${node.url} is a group, not a dataset`, { url: node.url });
    const sel = selectionOf(selection, node.ndim, node.url);
    try {
      const r = await node.get(sel, { signal: abortSignal });
      onProgress?.(1);
      return valueOf(node, r, sel.every((s) => s !== null));
    } catch (e) {
      // h5web tells its own cancellation (an AbortError) from failures.
      if (abortSignal?.aborted) throw abortReason(abortSignal);
      throw e;
    }
  }

  /** The attributes' values of `entity` (from the metadata already read: no request). */
  async getAttrValues(entity: { path: string }): Promise<Record<string, unknown>> {
    return { ...(await this.node(entity.path)).attributes };
  }

  /** Every path under `path` (groups listed by their metadata), for h5web's search. */
  async getSearchablePaths(path: string): Promise<string[]> {
    const out: string[] = [];
    const walk = async (p: string): Promise<void> => {
      const node = await this.node(p).catch(() => null);
      if (!(node instanceof Group)) return;
      for (const c of node.children()) {
        const q = childPath(p, c.name);
        out.push(q);
        if (c.kind === "group") await walk(q);
      }
    };
    await walk(path);
    return out;
  }

  /** Exports h5web builds itself (CSV, JSON), as a blob; no server-side formats. */
  getExportURL(_format: string, _dataset: H5WebEntity, _selection?: string, builtInExporter?: () => string): (() => Promise<Blob>) | undefined {
    return builtInExporter ? async () => new Blob([builtInExporter()]) : undefined;
  }

  /** Let go of what the opened groups hold (consolidated metadata); arrays go with garbage collection. */
  async close(): Promise<void> {
    const nodes = [...this.#nodes.values()];
    this.#nodes.clear();
    for (const p of nodes) (await p.catch(() => null))?.close();
  }
}
