// The few OpenLayers declarations openlayers.ts compiles against: `ol` is a peer dependency, not
// installed for the package's build. A page's own `ol` brings its real types (the emitted
// openlayers.d.ts imports them by the same names).
declare module "ol/source/DataTile.js" {
  export type Data = Uint8Array | Uint8ClampedArray | Float32Array | DataView | ImageBitmap | HTMLImageElement | HTMLCanvasElement | HTMLVideoElement;
  export interface LoaderOptions {
    signal: AbortSignal;
  }
  export default class DataTileSource {
    constructor(options: Record<string, unknown>);
    protected projection: import("ol/proj.js").Projection | null;
    protected tileGrid: import("ol/tilegrid/TileGrid.js").default | null;
    protected viewResolver: null | ((options: Record<string, unknown>) => void);
    protected viewRejector: null | ((error: Error) => void);
    bandCount: number;
    hasAlpha: boolean;
    nodataBandIndex: number | undefined;
    getProjection(): import("ol/proj.js").Projection | null;
    getView(): Promise<Record<string, unknown>>;
    setState(state: "undefined" | "loading" | "ready" | "error"): void;
    protected setKey(key: string): void;
    protected setTileSizes(sizes: Array<[number, number]>): void;
    protected getTileSize(z: number): [number, number];
    protected setLoader(loader: (z: number, x: number, y: number, options: LoaderOptions) => Promise<Data>): void;
  }
}
declare module "ol/tilegrid/TileGrid.js" {
  export default class TileGrid {
    constructor(options: {
      extent: number[];
      origin: number[];
      resolutions: number[];
      tileSizes: Array<[number, number]>;
      minZoom?: number;
    });
  }
}
declare module "ol/proj.js" {
  export class Projection {
    constructor(options: { code: string; units?: string; extent?: number[] });
    getCode(): string;
  }
  export type ProjectionLike = Projection | string | undefined;
  export function get(projection: ProjectionLike): Projection | null;
}
declare module "ol/proj/Units.js" {
  export function fromCode(code: number): string | undefined;
}
declare module "ol/proj/proj4.js" {
  export function fromProjectionCode(code: string | number): Promise<import("ol/proj.js").Projection>;
}
