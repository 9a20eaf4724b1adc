//! The thin JS binding: `fetch` behind [`HttpClient`], promises, and JS values in and out.
//! Everything here converts; the logic lives in `core`.
extern crate std;

use crate::core::array::{Array as CoreArray, Chunk, Format, Stored};
use crate::core::dtype::{DataType, Scalar};
use crate::core::http::{HttpClient, Method, Request, Response};
use crate::core::limit::Limiter;
use crate::core::open::{self, Group, OpenOptions, Opened};
use crate::core::selection::Sel;
use crate::core::source::Source;
use crate::core::spec::Documents;
use crate::core::{Error, ErrorCode, Result};
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use web_sys::AbortSignal;

/// `fetch` as an [`HttpClient`]: the platform's global `fetch` (window, worker, Node) or a
/// caller-supplied one, with extra headers and an optional abort signal.
#[derive(Clone)]
pub struct FetchClient {
    fetch: Function,
    this: JsValue,
    headers: Rc<Vec<(String, String)>>,
    signal: Option<AbortSignal>,
    /// Requests of this caller start before lower ones when the origin's limit is reached.
    priority: i64,
}

/// `performance.now()` where the platform has it (windows, workers, Node), else `Date.now()`.
fn now() -> f64 {
    std::thread_local! {
        static PERFORMANCE: Option<(Function, JsValue)> = {
            let p = Reflect::get(&js_sys::global(), &"performance".into()).ok().filter(|p| p.is_object());
            p.and_then(|p| Reflect::get(&p, &"now".into()).ok()?.dyn_into::<Function>().ok().map(|f| (f, p)))
        };
    }
    PERFORMANCE.with(|p| match p {
        Some((f, this)) => f.call0(this).ok().and_then(|v| v.as_f64()).unwrap_or(0.0),
        None => js_sys::Date::now(),
    })
}

/// Default requests in flight per origin (option `maxInFlight`).
const MAX_IN_FLIGHT: usize = 16;

std::thread_local! {
    /// One limit per origin, shared by every array of this instance.
    static LIMITS: RefCell<BTreeMap<String, Rc<Limiter>>> = const { RefCell::new(BTreeMap::new()) };
}

/// `https://host:port` of a URL (the whole URL when it has no path).
fn origin(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    match url[after..].find('/') {
        Some(i) => &url[..after + i],
        None => url,
    }
}

fn limiter(url: &str) -> Rc<Limiter> {
    LIMITS.with(|m| {
        m.borrow_mut().entry(origin(url).into()).or_insert_with(|| Rc::new(Limiter::new(MAX_IN_FLIGHT))).clone()
    })
}

impl FetchClient {
    pub fn with_priority(&self, priority: f64) -> FetchClient {
        FetchClient { priority: priority.clamp(-1e15, 1e15) as i64, ..self.clone() }
    }

    /// The global `fetch`.
    pub fn global() -> Result<FetchClient> {
        let g: JsValue = js_sys::global().into();
        let f = Reflect::get(&g, &"fetch".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
        let f = f.ok_or_else(|| Error::new(ErrorCode::Network, "this platform has no global fetch"))?;
        Ok(FetchClient { fetch: f, this: g, headers: Rc::new(Vec::new()), signal: None, priority: 0 })
    }

    pub fn with_signal(&self, signal: Option<AbortSignal>) -> FetchClient {
        FetchClient { signal, ..self.clone() }
    }
}

fn js_error_to_core(e: JsValue, url: &str) -> Error {
    let name = Reflect::get(&e, &"name".into()).ok().and_then(|n| n.as_string()).unwrap_or_default();
    let msg = Reflect::get(&e, &"message".into()).ok().and_then(|n| n.as_string()).unwrap_or_else(|| format!("{e:?}"));
    if name == "AbortError" {
        return Error::new(ErrorCode::Aborted, format!("{url}: aborted"));
    }
    Error::new(
        ErrorCode::Network,
        format!("{url}: fetch failed ({msg}); a CORS refusal or an unreachable host looks like this"),
    )
}

impl HttpClient for FetchClient {
    async fn send(&self, req: Request<'_>) -> Result<Response> {
        let limit = limiter(req.url);
        let _slot = limit.acquire(self.priority).await;
        if self.is_aborted() {
            return Err(Error::new(ErrorCode::Aborted, format!("{}: aborted", req.url)));
        }
        let init = Object::new();
        let headers = Object::new();
        for (k, v) in self.headers.iter() {
            Reflect::set(&headers, &k.into(), &v.into()).ok();
        }
        if let Some(r) = &req.range {
            Reflect::set(&headers, &"Range".into(), &r.into()).ok();
            // Chrome serialises concurrent range reads of one URL through its cache otherwise.
            Reflect::set(&init, &"cache".into(), &"no-store".into()).ok();
        }
        let method = match req.method {
            Method::Get => "GET",
            Method::Head => "HEAD",
        };
        Reflect::set(&init, &"method".into(), &method.into()).ok();
        Reflect::set(&init, &"headers".into(), &headers).ok();
        if let Some(s) = &self.signal {
            Reflect::set(&init, &"signal".into(), s).ok();
        }
        let p = self.fetch.call2(&self.this, &req.url.into(), &init).map_err(|e| js_error_to_core(e, req.url))?;
        let p: Promise = p.dyn_into().map_err(|_| Error::new(ErrorCode::Network, "fetch did not return a promise"))?;
        let resp = JsFuture::from(p).await.map_err(|e| js_error_to_core(e, req.url))?;
        let resp: web_sys::Response = resp
            .dyn_into()
            .map_err(|_| Error::new(ErrorCode::Network, format!("{}: fetch did not resolve to a Response", req.url)))?;
        let h = resp.headers();
        let content_range = h.get("content-range").ok().flatten();
        let content_length = h.get("content-length").ok().flatten().and_then(|v| v.trim().parse().ok());
        let status = resp.status();
        let body = if req.method == Method::Get {
            let buf = resp.array_buffer().map_err(|e| js_error_to_core(e, req.url))?;
            let buf = JsFuture::from(buf).await.map_err(|e| js_error_to_core(e, req.url))?;
            Uint8Array::new(&buf).to_vec()
        } else {
            Vec::new()
        };
        Ok(Response { status, content_range, content_length, body })
    }

    fn is_aborted(&self) -> bool {
        self.signal.as_ref().is_some_and(AbortSignal::aborted)
    }
}

fn to_js(e: Error) -> JsValue {
    let err = js_sys::Error::new(&e.message);
    err.set_name("ShardfetchError");
    Reflect::set(&err, &"code".into(), &e.code.as_str().into()).ok();
    if let Some(s) = e.status {
        Reflect::set(&err, &"status".into(), &s.into()).ok();
    }
    err.into()
}

fn set(o: &Object, k: &str, v: impl Into<JsValue>) {
    Reflect::set(o, &k.into(), &v.into()).ok();
}

fn numbers(v: &[u64]) -> Array {
    v.iter().map(|&x| JsValue::from(x as f64)).collect()
}

fn json_to_js(m: &Map<String, Value>) -> JsValue {
    let text = serde_json::to_string(m).unwrap_or_else(|_| "{}".into());
    js_sys::JSON::parse(&text).unwrap_or_else(|_| Object::new().into())
}

fn get(o: &JsValue, k: &str) -> Option<JsValue> {
    Reflect::get(o, &k.into()).ok().filter(|v| !v.is_undefined() && !v.is_null())
}

/// A non-negative integer that a JS number represents exactly.
fn index_of(v: &JsValue, what: &str) -> Result<u64> {
    match v.as_f64() {
        Some(x) if x >= 0.0 && x.fract() == 0.0 && x <= 9007199254740991.0 => Ok(x as u64),
        _ => Err(Error::new(ErrorCode::InvalidSelection, format!("{what} must be a non-negative integer, got {v:?}"))),
    }
}

fn parse_options(options: &JsValue) -> Result<(FetchClient, OpenOptions, Option<AbortSignal>)> {
    let mut client = FetchClient::global().ok();
    if let Some(f) = get(options, "fetch") {
        let f: Function =
            f.dyn_into().map_err(|_| Error::new(ErrorCode::InvalidSelection, "options.fetch must be a function"))?;
        client = Some(FetchClient {
            fetch: f,
            this: JsValue::UNDEFINED,
            headers: Rc::new(Vec::new()),
            signal: None,
            priority: 0,
        });
    }
    let mut client = client.ok_or_else(|| Error::new(ErrorCode::Network, "no fetch: pass options.fetch"))?;
    if let Some(h) = get(options, "headers") {
        let mut headers = Vec::new();
        for e in Object::entries(&Object::from(h)).iter() {
            let e = Array::from(&e);
            if let (Some(k), Some(v)) = (e.get(0).as_string(), e.get(1).as_string()) {
                headers.push((k, v));
            }
        }
        client.headers = Rc::new(headers);
    }
    let mut o = OpenOptions::default();
    o.config.clock = Some(now);
    if let Some(b) = get(options, "cacheBytes").and_then(|b| b.as_f64()) {
        o.config.cache_bytes = b.clamp(0.0, 4.0e9) as usize;
    }
    o.config.treat403_as_missing = get(options, "treat403AsMissing").and_then(|b| b.as_bool()).unwrap_or(false);
    if let Some(b) = get(options, "mergeGap").and_then(|b| b.as_f64()) {
        o.config.merge_gap = b.clamp(0.0, 1e15) as u64;
    }
    if let Some(b) = get(options, "mergeMax").and_then(|b| b.as_f64()) {
        o.config.merge_max = b.clamp(1.0, 1e15) as u64;
    }
    if let Some(f) = get(options, "format") {
        let name = f.as_string().unwrap_or_default();
        o.format = Some(Format::parse(&name).ok_or_else(|| {
            Error::new(
                ErrorCode::UnsupportedFormat,
                format!("unknown format {name:?} (zarr3, zarr2, zarr3-draft, precomputed)"),
            )
        })?);
    }
    o.path = get(options, "path").and_then(|p| p.as_string()).unwrap_or_default();
    if let Some(n) = get(options, "maxInFlight").and_then(|n| n.as_f64()) {
        // `url` is not known here: the limit is set where the client sends (see open_node).
        o.config.max_in_flight = Some(n.clamp(1.0, 1e6) as usize);
    }
    o.scale = get(options, "scale").map(|s| match s.as_f64() {
        Some(i) => format!("{i}"),
        None => s.as_string().unwrap_or_default(),
    });
    let signal = get(options, "signal").and_then(|s| s.dyn_into::<AbortSignal>().ok());
    Ok((client, o, signal))
}

/// Open the array or group at `url`: resolves to a `WasmArray` or a `WasmGroup`.
#[wasm_bindgen(js_name = openNode)]
pub fn open_node(url: String, options: JsValue) -> Promise {
    future_to_promise(async move {
        let (client, options, signal) = parse_options(&options).map_err(to_js)?;
        if let Some(n) = options.config.max_in_flight {
            limiter(&url).set_max(n);
        }
        let opening = client.with_signal(signal);
        match open::open(&opening, &url, options).await.map_err(to_js)? {
            Opened::Array(a) => Ok(WasmArray { inner: Rc::from(a), client }.into()),
            Opened::Group(g) => Ok(WasmGroup { inner: g }.into()),
        }
    })
}

#[wasm_bindgen]
pub struct WasmGroup {
    inner: Group,
}

#[wasm_bindgen]
impl WasmGroup {
    pub fn meta(&self) -> JsValue {
        let g = &self.inner;
        let o = Object::new();
        set(&o, "url", g.url());
        set(&o, "root", g.root.as_str());
        set(&o, "path", g.path.as_str());
        set(&o, "format", g.format.name());
        set(&o, "attributes", json_to_js(&g.attributes));
        o.into()
    }
}

#[wasm_bindgen]
pub struct WasmArray {
    inner: Rc<CoreArray>,
    client: FetchClient,
}

fn fill_to_js(dtype: DataType, v: Scalar, bytes: &[u8]) -> JsValue {
    match (dtype, v) {
        (_, Scalar::Bytes) => Uint8Array::from(bytes).into(),
        (_, Scalar::Bool(b)) => b.into(),
        (DataType::Int64, Scalar::Int(i)) => js_sys::BigInt::from(i).into(),
        (DataType::UInt64, Scalar::UInt(u)) => js_sys::BigInt::from(u).into(),
        (_, Scalar::Int(i)) => (i as f64).into(),
        (_, Scalar::UInt(u)) => (u as f64).into(),
        (_, Scalar::Float(f)) => f.into(),
        (_, Scalar::Complex(re, im)) => Array::of2(&re.into(), &im.into()).into(),
    }
}

fn chunk_to_js(c: Chunk) -> JsValue {
    let o = Object::new();
    set(&o, "bytes", Uint8Array::from(&c.bytes[..]));
    set(&o, "shape", numbers(&c.shape));
    set(&o, "stride", numbers(&c.stride));
    o.into()
}

#[wasm_bindgen]
impl WasmArray {
    pub fn meta(&self) -> JsValue {
        let a = &self.inner;
        let i = &a.info;
        let o = Object::new();
        set(&o, "url", a.url());
        set(&o, "format", i.format.name());
        set(&o, "shape", numbers(&i.shape));
        set(&o, "dtype", a.dtype().name());
        let regular = a.grid.chunk_shape();
        set(&o, "chunkShape", regular.as_ref().map_or(JsValue::NULL, |s| numbers(s).into()));
        let irregular = || a.grid.axes.iter().map(|ax| JsValue::from(numbers(&ax.sizes()))).collect::<Array>();
        set(&o, "chunkShapes", if regular.is_some() { JsValue::NULL } else { irregular().into() });
        set(&o, "shardShape", i.shard_shape.as_ref().map_or(JsValue::NULL, |s| numbers(s).into()));
        set(&o, "fillValue", fill_to_js(a.dtype(), i.fill_value.value, &i.fill_value.bytes));
        set(&o, "itemSize", a.dtype().size() as f64);
        set(&o, "costlyDecode", a.costly_decode());
        set(&o, "attributes", json_to_js(&i.attributes));
        set(&o, "extra", json_to_js(&i.extra));
        let names = i.dimension_names.as_ref().map_or(JsValue::NULL, |n| {
            n.iter().map(|x| x.as_deref().map_or(JsValue::NULL, JsValue::from)).collect::<Array>().into()
        });
        set(&o, "dimensionNames", names);
        o.into()
    }

    /// Counters of this array's network use.
    pub fn stats(&self) -> JsValue {
        let s = self.inner.source().stats();
        let o = Object::new();
        set(&o, "requests", s.requests as f64);
        set(&o, "bytes", s.bytes as f64);
        set(&o, "indexHits", s.index_hits as f64);
        set(&o, "indexFetches", s.index_fetches as f64);
        set(&o, "chunks", s.chunks as f64);
        set(&o, "mergedRequests", s.merged_requests as f64);
        set(&o, "decodeMs", s.decode_ms);
        set(&o, "keptHits", s.kept_hits as f64);
        o.into()
    }

    #[wasm_bindgen(js_name = getChunk)]
    pub fn get_chunk(&self, coords: JsValue, signal: Option<AbortSignal>, priority: Option<f64>) -> Promise {
        let (a, c) = (self.inner.clone(), self.client.with_signal(signal).with_priority(priority.unwrap_or(0.0)));
        future_to_promise(async move {
            let coords: Vec<u64> = match coords.dyn_ref::<Array>() {
                Some(arr) => arr.iter().map(|v| index_of(&v, "chunk coordinate")).collect::<Result<_>>(),
                None => Err(Error::new(ErrorCode::InvalidSelection, "chunk coordinates must be an array")),
            }
            .map_err(|e| to_js(e.at(a.url())))?;
            a.chunk(&c, &coords).await.map(chunk_to_js).map_err(to_js)
        })
    }

    /// Several chunks at once (neighbours share requests): `onChunk(i, chunk | { error })` is
    /// called for each as it lands; resolves when all are done.
    #[wasm_bindgen(js_name = getChunks)]
    pub fn get_chunks(
        &self,
        list: JsValue,
        signal: Option<AbortSignal>,
        on_chunk: Function,
        priority: Option<f64>,
    ) -> Promise {
        let (a, c) = (self.inner.clone(), self.client.with_signal(signal).with_priority(priority.unwrap_or(0.0)));
        future_to_promise(async move {
            let list = parse_list(&list).map_err(|e| to_js(e.at(a.url())))?;
            a.chunks(&c, &list, |i, r| report(&on_chunk, i, r.map(chunk_to_js), a.url())).await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Like `getChunks`, but hands each chunk over undecoded, for a decoding worker:
    /// `onChunk(i, { encoded } | chunk | { error })` (a chunk when it is absent: its fill).
    #[wasm_bindgen(js_name = fetchChunks)]
    pub fn fetch_chunks(
        &self,
        list: JsValue,
        signal: Option<AbortSignal>,
        on_chunk: Function,
        priority: Option<f64>,
    ) -> Promise {
        let (a, c) = (self.inner.clone(), self.client.with_signal(signal).with_priority(priority.unwrap_or(0.0)));
        future_to_promise(async move {
            let list = parse_list(&list).map_err(|e| to_js(e.at(a.url())))?;
            a.fetch_chunks(&c, &list, |i, r| {
                let v = r.map(|f| match f {
                    Stored::Fill(chunk) => chunk_to_js(chunk),
                    Stored::Encoded(bytes) => {
                        let o = Object::new();
                        set(&o, "encoded", Uint8Array::from(&bytes[..]));
                        o.into()
                    }
                });
                report(&on_chunk, i, v, a.url())
            })
            .await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// What a selection needs: `{ start, extent, shape, chunks: [{ coords, lo, hi }] }` (the
    /// output `shape` drops integer-selected axes; `extent` keeps them).
    pub fn plan(&self, selection: JsValue) -> std::result::Result<JsValue, JsValue> {
        let a = &self.inner;
        let sel = parse_selection(&selection, a.info.shape.len()).map_err(|e| to_js(e.at(a.url())))?;
        let p = a.plan(&sel).map_err(to_js)?;
        let o = Object::new();
        set(&o, "start", numbers(&p.region.start));
        set(&o, "extent", numbers(&p.region.extent()));
        set(&o, "shape", numbers(&p.region.out_shape()));
        let chunks: Array = p
            .chunks
            .iter()
            .map(|c| {
                let x = Object::new();
                set(&x, "coords", numbers(&c.coords));
                set(&x, "lo", numbers(&c.lo));
                set(&x, "hi", numbers(&c.hi));
                JsValue::from(x)
            })
            .collect();
        set(&o, "chunks", chunks);
        Ok(o.into())
    }

    /// One element of the fill value, as bytes.
    pub fn fill(&self) -> Uint8Array {
        Uint8Array::from(&self.inner.info.fill_value.bytes[..])
    }

    /// Another scale of this precomputed volume (index or key), without a request.
    #[wasm_bindgen(js_name = withScale)]
    pub fn with_scale(&self, scale: JsValue) -> std::result::Result<WasmArray, JsValue> {
        let scale = match scale.as_f64() {
            Some(i) => format!("{i}"),
            None => scale.as_string().unwrap_or_default(),
        };
        let inner = self.inner.with_scale(scale).map_err(to_js)?;
        Ok(WasmArray { inner: Rc::new(inner), client: self.client.clone() })
    }

    /// What the array was built from, for a decoding worker's `WasmDecoder`.
    pub fn spec(&self) -> String {
        self.inner.documents().to_json()
    }

    pub fn get(&self, selection: JsValue, signal: Option<AbortSignal>, priority: Option<f64>) -> Promise {
        let (a, c) = (self.inner.clone(), self.client.with_signal(signal).with_priority(priority.unwrap_or(0.0)));
        future_to_promise(async move {
            let sel = parse_selection(&selection, a.info.shape.len()).map_err(|e| to_js(e.at(a.url())))?;
            a.region(&c, &sel).await.map(chunk_to_js).map_err(to_js)
        })
    }
}

/// A list of chunk coordinates.
fn parse_list(v: &JsValue) -> Result<Vec<Vec<u64>>> {
    let arr = v
        .dyn_ref::<Array>()
        .ok_or_else(|| Error::new(ErrorCode::InvalidSelection, "expected a list of chunk coordinates"))?;
    arr.iter()
        .map(|coords| match coords.dyn_ref::<Array>() {
            Some(cs) => cs.iter().map(|v| index_of(&v, "chunk coordinate")).collect(),
            None => Err(Error::new(ErrorCode::InvalidSelection, "chunk coordinates must be an array")),
        })
        .collect()
}

/// Hand one result of a batch to the caller's callback.
fn report(on_chunk: &Function, i: usize, r: Result<JsValue>, url: &str) {
    let v = r.unwrap_or_else(|e| {
        let o = Object::new();
        set(&o, "error", to_js(e.at(url)));
        o.into()
    });
    // A throwing callback is the caller's problem; the batch goes on.
    let _ = on_chunk.call2(&JsValue::NULL, &JsValue::from(i as f64), &v);
}

/// Decoding without the network, for a Web Worker: built from an array's `spec()`.
#[wasm_bindgen]
pub struct WasmDecoder {
    inner: CoreArray,
}

#[wasm_bindgen]
impl WasmDecoder {
    #[wasm_bindgen(constructor)]
    pub fn new(spec: &str) -> std::result::Result<WasmDecoder, JsValue> {
        let docs = Documents::from_json(spec).map_err(to_js)?;
        let source = Rc::new(Source::new(Default::default()));
        Ok(WasmDecoder { inner: CoreArray::new(String::new(), String::new(), docs, source).map_err(to_js)? })
    }

    /// Decode the stored bytes of chunk `coords`: `{ bytes, shape, stride }`.
    pub fn decode(&self, coords: JsValue, bytes: Vec<u8>) -> std::result::Result<JsValue, JsValue> {
        let coords = self.coords(&coords)?;
        let d = self.inner.decode(&coords, bytes).map_err(to_js)?;
        Ok(chunk_to_js(Chunk { bytes: d.bytes, shape: self.inner.grid.clipped(&coords), stride: d.strides }))
    }

    /// Decode chunk `coords` and return its box `[lo, hi)` (array coordinates), C-ordered.
    pub fn cut(
        &self,
        coords: JsValue,
        bytes: Vec<u8>,
        lo: JsValue,
        hi: JsValue,
    ) -> std::result::Result<Uint8Array, JsValue> {
        let coords = self.coords(&coords)?;
        let (lo, hi) = (self.coords(&lo)?, self.coords(&hi)?);
        let d = self.inner.decode(&coords, bytes).map_err(to_js)?;
        let b = self.inner.cut(&coords, &d, &lo, &hi).map_err(to_js)?;
        Ok(Uint8Array::from(&b[..]))
    }

    fn coords(&self, v: &JsValue) -> std::result::Result<Vec<u64>, JsValue> {
        let n = self.inner.grid.ndim();
        let r: Result<Vec<u64>> = match v.dyn_ref::<Array>() {
            Some(a) if a.length() as usize == n => a.iter().map(|x| index_of(&x, "coordinate")).collect(),
            _ => Err(Error::new(ErrorCode::InvalidSelection, format!("expected {n} coordinates"))),
        };
        r.map_err(to_js)
    }
}

fn parse_selection(v: &JsValue, ndim: usize) -> Result<Vec<Sel>> {
    if v.is_undefined() || v.is_null() {
        return Ok(alloc::vec![Sel::All; ndim]);
    }
    let arr =
        v.dyn_ref::<Array>().ok_or_else(|| Error::new(ErrorCode::InvalidSelection, "selection must be an array"))?;
    arr.iter()
        .map(|s| {
            if s.is_null() || s.is_undefined() {
                Ok(Sel::All)
            } else if let Some(pair) = s.dyn_ref::<Array>() {
                if pair.length() != 2 {
                    return Err(Error::new(ErrorCode::InvalidSelection, "a range is [start, stop]"));
                }
                Ok(Sel::Range(index_of(&pair.get(0), "range start")?, index_of(&pair.get(1), "range stop")?))
            } else {
                Ok(Sel::Index(index_of(&s, "selection index")?))
            }
        })
        .collect()
}
