//! `WasmArray` and `WasmRegion`: an opened array's metadata, counters and reads.
use super::convert::{
    as_values, chunk_to_js, coords_of, error_item, fill_to_js, floats, list_of, numbers, scale_name, selection_of, set,
    to_js,
};
use super::fetch::FetchClient;
use crate::core::metadata::Storage;
use crate::core::read::assemble::Assembly;
use crate::core::read::plan::{Plan, Want};
use crate::core::read::{Array, Got, Strings};
use crate::core::{Error, ErrorCode, Result};
use alloc::rc::Rc;
use alloc::string::String;
use core::cell::RefCell;
use js_sys::{Array as JsArray, Function, Object, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use web_sys::AbortSignal;

/// Read chunks smaller than this (decoded bytes) are cheaper to decode where they are read.
const SMALL_CHUNK: u64 = 32 * 1024;

#[wasm_bindgen]
pub struct WasmArray {
    inner: Rc<Array>,
    client: FetchClient,
    strings: Strings,
}

impl WasmArray {
    pub fn new(inner: Array, client: FetchClient, strings: Strings) -> WasmArray {
        inner.join(&super::pool());
        WasmArray { inner: Rc::new(inner), client, strings }
    }

    fn client(&self, signal: Option<AbortSignal>, priority: Option<f64>) -> FetchClient {
        self.client.with_signal(signal).with_priority(priority.unwrap_or(0.0))
    }
}

fn scales_of(a: &Array) -> (JsValue, JsValue) {
    let Storage::Precomputed { volume, scale } = &a.metadata().storage else { return (JsValue::NULL, JsValue::NULL) };
    let list: JsArray = volume
        .scales
        .iter()
        .map(|s| {
            let o = Object::new();
            set(&o, "key", s.key.as_str());
            set(&o, "size", numbers(&s.size));
            set(&o, "chunkSize", numbers(&s.chunk_size));
            set(&o, "resolution", floats(&s.resolution));
            set(&o, "voxelOffset", s.voxel_offset.iter().map(|&x| JsValue::from(x as f64)).collect::<JsArray>());
            set(&o, "encoding", s.encoding.name());
            set(&o, "sharded", s.sharding.is_some());
            JsValue::from(o)
        })
        .collect();
    (list.into(), JsValue::from(*scale as f64))
}

#[wasm_bindgen]
impl WasmArray {
    #[wasm_bindgen(unchecked_return_type = "WasmArrayMeta")]
    pub fn meta(&self) -> JsValue {
        let a = &self.inner;
        let m = a.metadata();
        let o = Object::new();
        set(&o, "url", a.url());
        set(&o, "format", m.format.name());
        set(&o, "shape", numbers(&m.shape));
        set(&o, "dtype", a.dtype().name());
        let unit = a.dtype().time_unit().map(|t| {
            let u = Object::new();
            set(&u, "unit", t.unit());
            set(&u, "scaleFactor", t.scale());
            JsValue::from(u)
        });
        set(&o, "timeUnit", unit.unwrap_or(JsValue::NULL));
        let text = match a.dtype() {
            crate::core::metadata::DataType::FixedString(t) => {
                let s = Object::new();
                set(&s, "charset", t.charset());
                set(&s, "padding", t.padding());
                JsValue::from(s)
            }
            _ => JsValue::NULL,
        };
        set(&o, "stringType", text);
        let grid = a.grid();
        let regular = grid.chunk_shape();
        set(&o, "chunkShape", regular.as_ref().map_or(JsValue::NULL, |s| numbers(s).into()));
        let irregular = || grid.axes.iter().map(|ax| JsValue::from(numbers(&ax.sizes()))).collect::<JsArray>();
        set(&o, "chunkShapes", if regular.is_some() { JsValue::NULL } else { irregular().into() });
        set(&o, "shardShape", a.shard_shape().as_ref().map_or(JsValue::NULL, |s| numbers(s).into()));
        set(&o, "fillValue", fill_to_js(a.dtype(), &m.fill_value, self.strings));
        set(&o, "itemSize", a.dtype().size() as f64);
        // Text, bytes and JSON come back as JS values, not transferable buffers: decoded here.
        set(&o, "costlyDecode", a.costly_decode() && !as_values(a.dtype()));
        let bytes = regular.map(|s| s.iter().fold(a.dtype().size() as u64, |n, &d| n.saturating_mul(d)));
        set(&o, "smallChunks", bytes.is_some_and(|b| b < SMALL_CHUNK));
        // JSON text: the wrapper parses it when first asked.
        set(&o, "attributes", m.attributes.as_str());
        let names = m.dimension_names.as_ref().map_or(JsValue::NULL, |n| {
            n.iter().map(|x| x.as_deref().map_or(JsValue::NULL, JsValue::from)).collect::<JsArray>().into()
        });
        set(&o, "dimensionNames", names);
        let fields = m.fields.as_ref().map_or(JsValue::NULL, |f| {
            let row = |(n, t, at): &crate::core::metadata::Field| {
                JsValue::from(JsArray::of3(&n.as_str().into(), &t.name().into(), &(*at as f64).into()))
            };
            f.iter().map(row).collect::<JsArray>().into()
        });
        set(&o, "fields", fields);
        let (scales, index) = scales_of(a);
        set(&o, "scales", scales);
        set(&o, "scaleIndex", index);
        set(&o, "container", super::convert::container_to_js(a.container()));
        o.into()
    }

    /// The external decoders reading this array needs (every scale of a precomputed volume):
    /// the wrapper loads them before handing the array out.
    #[wasm_bindgen(unchecked_return_type = "string[]")]
    pub fn decoders(&self) -> JsValue {
        self.inner.decoders().into_iter().map(JsValue::from).collect::<JsArray>().into()
    }

    /// The stamp of the version of the object holding chunk `coords` (see
    /// `core::transport::versions`): a decoded chunk kept under another stamp is of another
    /// version.
    #[wasm_bindgen(js_name = chunkStamp)]
    pub fn chunk_stamp(&self, #[wasm_bindgen(unchecked_param_type = "number[]")] coords: JsValue) -> f64 {
        let coords: alloc::vec::Vec<u64> = JsArray::from(&coords).iter().filter_map(|v| v.as_f64()).map(|v| v as u64).collect();
        self.inner.chunk_stamp(&coords) as f64
    }

    /// Counters of this array's network use and decoding.
    #[wasm_bindgen(unchecked_return_type = "WasmStats")]
    pub fn stats(&self) -> JsValue {
        let s = self.inner.stats();
        let o = Object::new();
        set(&o, "requests", s.store.requests as f64);
        set(&o, "bytes", s.store.bytes as f64);
        set(&o, "indexHits", s.store.memo_hits as f64);
        set(&o, "indexFetches", s.store.memo_fills as f64);
        set(&o, "chunks", s.store.spans as f64);
        set(&o, "mergedRequests", s.store.merged_requests as f64);
        set(&o, "keptHits", s.store.held_hits as f64);
        set(&o, "retries", s.store.retries as f64);
        set(&o, "changes", s.store.changes as f64);
        set(&o, "revalidations", s.store.revalidations as f64);
        set(&o, "rangeIgnored", self.inner.range_ignored());
        set(&o, "decodeMs", s.decode_ms);
        set(&o, "cachedBytes", s.store.cached_bytes as f64);
        set(&o, "evictions", s.store.evictions as f64);
        o.into()
    }

    /// Chunks read together (neighbours share requests): `onChunk(i, item)` is called for each
    /// as it lands — decoded here when `decodeHere`, else its stored bytes for a worker (an
    /// absent chunk comes as its fill either way). Resolves when all are done.
    #[wasm_bindgen(js_name = readChunks, unchecked_return_type = "Promise<void>")]
    pub fn read_chunks(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number[][]")] list: JsValue,
        #[wasm_bindgen(js_name = decodeHere)] decode_here: bool,
        signal: Option<AbortSignal>,
        priority: Option<f64>,
        #[wasm_bindgen(js_name = onChunk, unchecked_param_type = "(i: number, item: WasmChunkItem) => void")]
        on_chunk: Function,
    ) -> Promise {
        let (a, c, strings) = (self.inner.clone(), self.client(signal, priority), self.strings);
        future_to_promise(async move {
            let list = list_of(&list).map_err(|e| to_js(e.at(a.url())))?;
            let plan = a.plan(Want::Chunks(&list)).map_err(to_js)?;
            let dtype = a.dtype();
            a.read(&c, &plan, decode_here, |i, got| {
                let coords = &list[i];
                let item = got.and_then(|g| match g {
                    Got::Decoded(d) => Ok(chunk_to_js(a.chunk_of(coords, d), dtype, strings)),
                    Got::Absent => a.fill_chunk(coords).map(|f| chunk_to_js(f, dtype, strings)),
                    Got::Encoded(bytes) => {
                        let o = Object::new();
                        set(&o, "encoded", Uint8Array::from(&bytes[..]));
                        Ok(o.into())
                    }
                });
                report(&on_chunk, i, item.unwrap_or_else(|e| error_item(e, a.url())));
                Ok(())
            })
            .await
            .map_err(to_js)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// The document a store kind gives at `key` under this array on demand (a TIFF tag's value:
    /// `tags/<tag>`), as text, or `undefined`.
    #[wasm_bindgen(js_name = readDocument, unchecked_return_type = "Promise<string | undefined>")]
    pub fn read_document(&self, key: String, signal: Option<AbortSignal>) -> Promise {
        let (a, c) = (self.inner.clone(), self.client(signal, None));
        future_to_promise(async move {
            let doc = a.read_document(&c, &key).await.map_err(to_js)?;
            Ok(doc.map_or(JsValue::UNDEFINED, |d| JsValue::from(String::from_utf8_lossy(&d).into_owned())))
        })
    }

    /// A region read: its output, the fill value until chunks are pasted in (size checked).
    pub fn region(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(null | number | [number, number])[]")] selection: JsValue,
    ) -> std::result::Result<WasmRegion, JsValue> {
        let a = &self.inner;
        let sel = selection_of(&selection, a.metadata().shape.len()).map_err(|e| to_js(e.at(a.url())))?;
        let plan = a.plan(Want::Region(&sel)).map_err(to_js)?;
        let out = Assembly::new(&plan, &a.metadata().fill_value, a.dtype()).map_err(|e| to_js(e.at(a.url())))?;
        Ok(WasmRegion {
            array: a.clone(),
            client: self.client.clone(),
            plan: Rc::new(plan),
            out: Rc::new(RefCell::new(Some(out))),
            strings: self.strings,
        })
    }

    /// Another scale of this precomputed volume (index or key), without a request.
    #[wasm_bindgen(js_name = withScale)]
    pub fn with_scale(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number | string")] scale: JsValue,
    ) -> std::result::Result<WasmArray, JsValue> {
        let inner = self.inner.with_scale(scale_name(&scale)).map_err(to_js)?;
        Ok(WasmArray { inner: Rc::new(inner), client: self.client.clone(), strings: self.strings })
    }

    /// Decoding chunk `coords` in a worker failed with error `code`: the URL of the chunk's
    /// object, for the error to name (as a decode here names it); what is cached of that object
    /// is dropped when the error shows its bytes inconsistent, so a healed server is read afresh.
    #[wasm_bindgen(js_name = failedElsewhere)]
    pub fn failed_elsewhere(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number[]")] coords: JsValue,
        code: &str,
    ) -> std::result::Result<String, JsValue> {
        let coords = coords_for(&self.inner, &coords)?;
        Ok(self.inner.failed_elsewhere(&coords, ErrorCode::parse(code)))
    }

    /// What `reopenArray` rebuilds the array from (after the module was replaced).
    pub fn state(&self) -> String {
        self.inner.state()
    }

    /// The metadata documents the array was built from, for a decoding worker's `WasmDecoder`
    /// (without the attributes, which decoding does not read).
    pub fn documents(&self) -> String {
        self.inner.documents().for_decoding().to_json()
    }
}

/// Hand one result of a batch to the caller's callback.
fn report(on_item: &Function, i: usize, v: JsValue) {
    // A throwing callback is the caller's problem; the batch goes on.
    let _ = on_item.call2(&JsValue::NULL, &JsValue::from(i as f64), &v);
}

/// A region being read: its chunks are decoded here (`read(true)`) or, handed out undecoded,
/// cut by workers and pasted back (`paste`); `finish` hands the result over.
#[wasm_bindgen]
pub struct WasmRegion {
    array: Rc<Array>,
    client: FetchClient,
    plan: Rc<Plan>,
    out: Rc<RefCell<Option<Assembly>>>,
    strings: Strings,
}

fn finished() -> Error {
    Error::new(ErrorCode::InvalidSelection, "this region read is finished")
}

#[wasm_bindgen]
impl WasmRegion {
    /// Read every chunk the region touches. Decoded here when `decodeHere`; otherwise
    /// `onPiece(i, item)` hands each chunk's stored bytes and box out (absent ones need
    /// nothing: the output holds the fill value). Rejects on the first error.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn read(
        &self,
        #[wasm_bindgen(js_name = decodeHere)] decode_here: bool,
        signal: Option<AbortSignal>,
        priority: Option<f64>,
        #[wasm_bindgen(js_name = onPiece, unchecked_param_type = "(i: number, item: WasmRegionItem) => void")]
        on_piece: Function,
    ) -> Promise {
        let (a, plan, out) = (self.array.clone(), self.plan.clone(), self.out.clone());
        let c = self.client.with_signal(signal).with_priority(priority.unwrap_or(0.0));
        future_to_promise(async move {
            a.read(&c, &plan, decode_here, |i, got| match got? {
                Got::Decoded(d) => {
                    let coords = &plan.pieces[i].coords;
                    let mut held = out.borrow_mut();
                    let held = held.as_mut().ok_or_else(finished)?;
                    held.put(i, &d).map_err(|e| e.at(&alloc::format!("{} chunk {}", a.url(), crate::core::error::List(coords))))?;
                    if !decode_here {
                        // (A worker's decode of an earlier hand-out must not paste over it.)
                        let o = Object::new();
                        set(&o, "pasted", true);
                        report(&on_piece, i, o.into());
                    }
                    Ok(())
                }
                Got::Encoded(bytes) => {
                    let p = &plan.pieces[i];
                    let o = Object::new();
                    set(&o, "encoded", Uint8Array::from(&bytes[..]));
                    set(&o, "coords", numbers(&p.coords));
                    set(&o, "lo", numbers(&p.lo));
                    set(&o, "hi", numbers(&p.hi));
                    report(&on_piece, i, o.into());
                    Ok(())
                }
                Got::Absent => Ok(()),
            })
            .await
            .map_err(to_js)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Paste piece `i`'s box, cut (C-ordered) by a worker's `WasmDecoder.cut`.
    pub fn paste(&self, i: usize, bytes: &[u8]) -> std::result::Result<(), JsValue> {
        let mut out = self.out.borrow_mut();
        let r: Result<()> = out.as_mut().ok_or_else(finished).and_then(|o| o.paste(i, bytes));
        r.map_err(|e| to_js(e.at(self.array.url())))
    }

    /// The region: `{ bytes, shape, stride }`, C-ordered.
    #[wasm_bindgen(unchecked_return_type = "WasmChunk")]
    pub fn finish(&self) -> std::result::Result<JsValue, JsValue> {
        let out = self.out.borrow_mut().take().ok_or_else(|| to_js(finished()))?;
        let out = out.finish().map_err(|e| to_js(e.at(self.array.url())))?;
        Ok(chunk_to_js(out, self.array.dtype(), self.strings))
    }

    /// Chunks the region touches.
    #[wasm_bindgen(getter)]
    pub fn chunks(&self) -> usize {
        self.plan.pieces.len()
    }
}

/// Coordinates of a chunk, checked (for the worker decoder).
pub fn coords_for(a: &Array, v: &JsValue) -> std::result::Result<alloc::vec::Vec<u64>, JsValue> {
    coords_of(v, Some(a.grid().ndim())).map_err(to_js)
}
