//! JS values in and out: errors, numbers, JSON, options, coordinates, selections, chunks.
use super::fetch::{now, FetchClient};
use crate::core::codec::Decoders;
use crate::core::json::Value;
use crate::core::metadata::multiscale::Multiscale;
use crate::core::metadata::{DataType, FillValue, Format, Scalar};
use crate::core::open::OpenOptions;
use crate::core::read::plan::Sel;
use crate::core::read::{Chunk, Element, Strings};
use crate::core::store::{registry, ResolveUrl};
use crate::core::transport::{Conditional, Recheck};
use crate::core::{Error, ErrorCode, Result};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

pub fn to_js(e: Error) -> JsValue {
    let err = js_sys::Error::new(&e.message);
    err.set_name("ShardfetchError");
    Reflect::set(&err, &"code".into(), &e.code.as_str().into()).ok();
    if let Some(s) = e.status {
        Reflect::set(&err, &"status".into(), &s.into()).ok();
    }
    err.into()
}

pub fn set(o: &Object, k: &str, v: impl Into<JsValue>) {
    Reflect::set(o, &k.into(), &v.into()).ok();
}

pub fn numbers(v: &[u64]) -> Array {
    v.iter().map(|&x| JsValue::from(x as f64)).collect()
}

pub fn floats(v: &[f64]) -> Array {
    v.iter().map(|&x| JsValue::from(x)).collect()
}

/// Through its text: numbers reach JS as written (nothing here formats a float).
pub fn json_to_js(v: &Value) -> JsValue {
    js_sys::JSON::parse(&v.to_string()).unwrap_or(JsValue::NULL)
}

/// A multiscale description as the wrapper's `WasmMultiscale`; scales and translations as JS
/// numbers (formatting them as text would bring a float printer into the module).
pub fn multiscale_to_js(m: &Multiscale) -> JsValue {
    let text = |s: &Option<String>| s.as_deref().map_or(JsValue::NULL, JsValue::from);
    let axes: Array = m
        .axes
        .iter()
        .map(|a| {
            let o = Object::new();
            set(&o, "name", a.name.as_str());
            set(&o, "type", text(&a.kind));
            set(&o, "unit", text(&a.unit));
            JsValue::from(o)
        })
        .collect();
    let levels: Array = m
        .levels
        .iter()
        .map(|l| {
            let o = Object::new();
            set(&o, "path", l.path.as_str());
            set(&o, "scale", floats(&l.scale));
            set(&o, "translation", floats(&l.translation));
            JsValue::from(o)
        })
        .collect();
    let o = Object::new();
    set(&o, "version", m.version.as_str());
    set(&o, "name", text(&m.name));
    set(&o, "axes", axes);
    set(&o, "levels", levels);
    set(&o, "omero", m.omero.as_ref().map_or(JsValue::NULL, json_to_js));
    set(&o, "imageLabel", m.image_label.as_ref().map_or(JsValue::NULL, json_to_js));
    o.into()
}

fn get(o: &JsValue, k: &str) -> Option<JsValue> {
    Reflect::get(o, &k.into()).ok().filter(|v| !v.is_undefined() && !v.is_null())
}

/// A non-negative integer that a JS number represents exactly.
pub fn index_of(v: &JsValue, what: &str) -> Result<u64> {
    match v.as_f64() {
        Some(x) if x >= 0.0 && x.fract() == 0.0 && x <= 9007199254740991.0 => Ok(x as u64),
        _ => Err(Error::new(ErrorCode::InvalidSelection, format!("{what} must be a non-negative integer, got {v:?}"))),
    }
}

/// What `openNode`'s options say: the client, the core's options, the opening signal, and
/// the origin's request limit when set.
pub struct Options {
    pub client: FetchClient,
    pub open: OpenOptions,
    pub signal: Option<AbortSignal>,
    pub max_in_flight: Option<usize>,
    pub strings: Strings,
}

pub fn parse_options(options: &JsValue) -> Result<Options> {
    let client = match get(options, "fetch") {
        Some(f) => FetchClient::with_fetch(
            f.dyn_into().map_err(|_| Error::new(ErrorCode::InvalidSelection, "options.fetch must be a function"))?,
        ),
        None => FetchClient::global().map_err(|_| Error::new(ErrorCode::Network, "no fetch: pass options.fetch"))?,
    };
    let mut headers = Vec::new();
    if let Some(h) = get(options, "headers") {
        for e in Object::entries(&Object::from(h)).iter() {
            let e = Array::from(&e);
            if let (Some(k), Some(v)) = (e.get(0).as_string(), e.get(1).as_string()) {
                headers.push((k, v));
            }
        }
    }
    let mut o = OpenOptions { clock: Some(now), ..OpenOptions::default() };
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
                format!("unknown format \"{name}\" (zarr3, zarr2, zarr3-draft, precomputed)"),
            )
        })?);
    }
    if let Some(k) = get(options, "store") {
        let name = k.as_string().unwrap_or_default();
        if registry::by_name(&name).is_none() {
            let names = registry::NAMES.join(", ");
            return Err(Error::new(ErrorCode::UnsupportedFormat, format!("unknown store \"{name}\" ({names})")));
        }
        o.store = Some(name);
    }
    // The options store kinds take (an Icechunk repository's `branch`), by the registry's names.
    for name in registry::OPTIONS.iter().flat_map(|(_, names)| names.iter()) {
        if let Some(v) = get(options, name).and_then(|v| v.as_string()).filter(|v| !v.is_empty()) {
            o.store_settings.push((String::from(*name), v));
        }
    }
    match get(options, "recheck") {
        None => {}
        Some(v) => {
            o.config.recheck = match (v.as_string().as_deref(), v.as_f64()) {
                (Some("open"), _) => Recheck::Open,
                (Some("never"), _) => Recheck::Never,
                (_, Some(ms)) if ms.is_finite() && ms >= 0.0 => Recheck::After(ms),
                _ => {
                    let why = format!("options.recheck must be \"open\", \"never\" or milliseconds, got {v:?}");
                    return Err(Error::new(ErrorCode::InvalidSelection, why));
                }
            }
        }
    }
    match get(options, "conditional") {
        None => {}
        Some(v) => {
            o.config.conditional = match (v.as_bool(), v.as_string().as_deref()) {
                (Some(false), _) | (_, Some("none")) => Conditional::None,
                (_, Some("if-match")) => Conditional::IfMatch,
                (_, Some("if-range")) => Conditional::IfRange,
                _ => {
                    let why = format!("options.conditional must be \"if-match\", \"if-range\" or false, got {v:?}");
                    return Err(Error::new(ErrorCode::InvalidSelection, why));
                }
            }
        }
    }
    o.path = get(options, "path").and_then(|p| p.as_string()).unwrap_or_default();
    o.scale = get(options, "scale").map(|s| scale_name(&s));
    match get(options, "retry") {
        None => {}
        Some(r) if r.as_bool() == Some(false) => o.config.retry.attempts = 1,
        Some(r) => {
            let num = |k: &str| get(&r, k).and_then(|v| v.as_f64()).filter(|v| v.is_finite() && *v >= 0.0);
            let d = &mut o.config.retry;
            if let Some(v) = num("attempts") {
                d.attempts = v.clamp(1.0, 100.0) as u32;
            }
            if let Some(v) = num("baseMs") {
                d.base_ms = v;
            }
            if let Some(v) = num("maxMs") {
                d.max_ms = v;
            }
            if let Some(v) = num("stallMs") {
                d.stall_ms = v.max(1.0);
            }
            if let Some(v) = num("budgetMs") {
                d.budget_ms = v;
            }
        }
    }
    if let Some(n) = get(options, "maxDecodedBytes").and_then(|n| n.as_f64()) {
        o.max_decoded = n.clamp(1.0, crate::core::error::MAX_ALLOC as f64) as usize;
    }
    if let Some(n) = get(options, "maxMetadataBytes").and_then(|n| n.as_f64()) {
        o.max_metadata = n.clamp(1.0, crate::core::error::MAX_ALLOC as f64) as usize;
    }
    let max_in_flight = get(options, "maxInFlight").and_then(|n| n.as_f64()).map(|n| n.clamp(1.0, 1e6) as usize);
    o.decoders = get(options, "decoders").and_then(|f| f.dyn_into::<js_sys::Function>().ok()).map(JsDecoders::rc);
    o.resolve_url = get(options, "resolveUrl").and_then(|f| f.dyn_into().ok()).map(JsResolveUrl::rc);
    let signal = get(options, "signal").and_then(|s| s.dyn_into::<AbortSignal>().ok());
    let strings = strings_of(get(options, "strings"))?;
    Ok(Options { client: client.with_headers(headers), open: o, signal, max_in_flight, strings })
}

/// The `strings` option: fixed-length strings as the file declares them, as text or as bytes.
fn strings_of(v: Option<JsValue>) -> Result<Strings> {
    let Some(v) = v else { return Ok(Strings::Declared) };
    match v.as_string().as_deref() {
        Some("text") => Ok(Strings::Text),
        Some("bytes") => Ok(Strings::Bytes),
        _ => Err(Error::new(ErrorCode::InvalidSelection, "options.strings must be \"text\" or \"bytes\"")),
    }
}

/// The external decoders (see `core::codec::external`) as the wrapper runs them:
/// `decoders(name, input, args)` returns the decoded bytes, or throws `{ code, message }`.
#[derive(Debug)]
pub struct JsDecoders(js_sys::Function);

impl JsDecoders {
    pub fn rc(f: js_sys::Function) -> alloc::rc::Rc<dyn Decoders> {
        alloc::rc::Rc::new(JsDecoders(f))
    }
}

impl Decoders for JsDecoders {
    fn decode(&self, name: &str, input: &[u8], args: &[f64]) -> Result<Vec<u8>> {
        let args = js_sys::Float64Array::from(args);
        match self.0.call3(&JsValue::NULL, &name.into(), &Uint8Array::from(input), &args) {
            Ok(v) => match v.dyn_into::<Uint8Array>() {
                Ok(bytes) => Ok(bytes.to_vec()),
                Err(_) => Err(Error::new(ErrorCode::CorruptChunk, format!("{name}: the decoder returned no bytes"))),
            },
            Err(e) => Err(thrown(&e, ErrorCode::CorruptChunk)),
        }
    }
}

/// What holds a node (`{ kind, url, comment }`), or null.
pub fn container_to_js(c: Option<&crate::core::store::Container>) -> JsValue {
    let Some(c) = c else { return JsValue::NULL };
    let o = Object::new();
    set(&o, "kind", c.kind);
    set(&o, "url", c.url.as_str());
    set(&o, "comment", c.comment.as_str());
    // The version read (an Icechunk snapshot's id), under the name the API has given it.
    if !c.version.is_empty() {
        set(&o, "snapshot", c.version.as_str());
    }
    o.into()
}

/// What a JS callback threw, as an error: its `code` when it names one, else `code`.
fn thrown(e: &JsValue, code: ErrorCode) -> Error {
    let text = |k: &str| Reflect::get(e, &k.into()).ok().and_then(|v| v.as_string());
    let code = text("code").and_then(|c| ErrorCode::parse(&c)).unwrap_or(code);
    Error::new(code, text("message").unwrap_or_else(|| format!("{e:?}")))
}

/// The `resolveUrl` option: `resolveUrl(url)` returns the URL to fetch for a reference file's
/// target (`undefined` or `null`: `url` itself).
#[derive(Debug)]
pub struct JsResolveUrl(js_sys::Function);

impl JsResolveUrl {
    pub fn rc(f: js_sys::Function) -> alloc::rc::Rc<dyn ResolveUrl> {
        alloc::rc::Rc::new(JsResolveUrl(f))
    }
}

impl ResolveUrl for JsResolveUrl {
    fn resolve(&self, url: &str) -> Result<String> {
        let resolved = match self.0.call1(&JsValue::NULL, &url.into()) {
            Err(e) => Err(thrown(&e, ErrorCode::InvalidSelection)),
            Ok(got) => match got.as_string() {
                Some(u) => Ok(u),
                None if got.is_undefined() || got.is_null() => Ok(url.to_string()),
                None if got.is_instance_of::<js_sys::Promise>() => Err(Error::new(
                    ErrorCode::InvalidSelection,
                    "returned a Promise: it is called while a chunk's location is worked out and must return a string",
                )),
                None => Err(Error::new(ErrorCode::InvalidSelection, "returned no string")),
            },
        };
        resolved.map_err(|e| e.at(&format!("resolveUrl({url})")))
    }
}

/// A scale given as an index or a key.
pub fn scale_name(s: &JsValue) -> String {
    match s.as_f64() {
        // An index (not formatted as a float: that would bring a float printer into the module).
        Some(i) if i.fract() == 0.0 && i.abs() < 9.0e15 => format!("{}", i as i64),
        Some(_) => js_sys::Number::from(s.clone()).to_string_with_radix(10).map(String::from).unwrap_or_default(),
        None => s.as_string().unwrap_or_default(),
    }
}

/// Coordinates: a list of non-negative integers (of `ndim` when given).
pub fn coords_of(v: &JsValue, ndim: Option<usize>) -> Result<Vec<u64>> {
    match v.dyn_ref::<Array>() {
        Some(a) if ndim.is_none_or(|n| a.length() as usize == n) => {
            a.iter().map(|x| index_of(&x, "chunk coordinate")).collect()
        }
        Some(_) => Err(Error::new(ErrorCode::InvalidSelection, format!("expected {} coordinates", ndim.unwrap_or(0)))),
        None => Err(Error::new(ErrorCode::InvalidSelection, "chunk coordinates must be an array")),
    }
}

/// A list of chunk coordinates.
pub fn list_of(v: &JsValue) -> Result<Vec<Vec<u64>>> {
    let arr = v
        .dyn_ref::<Array>()
        .ok_or_else(|| Error::new(ErrorCode::InvalidSelection, "expected a list of chunk coordinates"))?;
    arr.iter().map(|coords| coords_of(&coords, None)).collect()
}

/// One item per axis: `null` (whole axis), an index, or `[start, stop]`.
pub fn selection_of(v: &JsValue, ndim: usize) -> Result<Vec<Sel>> {
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

/// Values per element that get a trailing axis: complex (re, im), raw/structured (bytes).
fn element_axis(dtype: DataType) -> Option<u64> {
    match dtype {
        DataType::Complex64 | DataType::Complex128 => Some(2),
        DataType::RawBytes(n) | DataType::Structured(n) => Some(u64::from(n)),
        _ => None,
    }
}

/// Whether elements reach JS as values (strings, bytes, JSON) rather than a typed array.
pub fn as_values(dtype: DataType) -> bool {
    dtype.is_variable() || matches!(dtype, DataType::FixedUtf32(_) | DataType::FixedBytes(_) | DataType::FixedString(..))
}

/// A text, bytes or JSON element as a JS value.
fn element_to_js(e: Element) -> JsValue {
    match e {
        Element::Text(t) => JsValue::from(t),
        Element::Bytes(b) => Uint8Array::from(b).into(),
        Element::Json(j) => {
            core::str::from_utf8(j).ok().and_then(|t| js_sys::JSON::parse(t).ok()).unwrap_or(JsValue::NULL)
        }
    }
}

/// `{ bytes, shape, stride }`, with a trailing axis for elements made of several values; text,
/// bytes and JSON arrays as `{ values, shape, stride }`.
pub fn chunk_to_js(c: Chunk, dtype: DataType, strings: Strings) -> JsValue {
    if as_values(dtype) {
        let n = c.bytes.len() / dtype.size().max(1);
        let one = |i| c.element_as(dtype, i, strings).map_or(JsValue::NULL, element_to_js);
        let values: Array = (0..n).map(one).collect();
        let o = Object::new();
        set(&o, "values", values);
        set(&o, "shape", numbers(&c.shape));
        set(&o, "stride", numbers(&c.stride));
        return o.into();
    }
    let (mut shape, mut stride) = (c.shape, c.stride);
    if let Some(unit) = element_axis(dtype) {
        stride.iter_mut().for_each(|s| *s *= unit);
        shape.push(unit);
        stride.push(1);
    }
    let o = Object::new();
    set(&o, "bytes", Uint8Array::from(&c.bytes[..]));
    set(&o, "shape", numbers(&shape));
    set(&o, "stride", numbers(&stride));
    o.into()
}

pub fn fill_to_js(dtype: DataType, fill: &FillValue, strings: Strings) -> JsValue {
    let (v, bytes) = (fill.value, &fill.bytes[..]);
    if as_values(dtype) {
        let one =
            Chunk { bytes: fill.bytes.clone(), shape: alloc::vec![], stride: alloc::vec![], heap: fill.heap.clone() };
        return one.element_as(dtype, 0, strings).map_or(JsValue::NULL, element_to_js);
    }
    match (dtype, v) {
        (_, Scalar::Bytes) => Uint8Array::from(bytes).into(),
        (_, Scalar::Bool(b)) => b.into(),
        (DataType::Int64 | DataType::DateTime64(_) | DataType::TimeDelta64(_), Scalar::Int(i)) => {
            js_sys::BigInt::from(i).into()
        }
        (DataType::UInt64, Scalar::UInt(u)) => js_sys::BigInt::from(u).into(),
        (_, Scalar::Int(i)) => (i as f64).into(),
        (_, Scalar::UInt(u)) => (u as f64).into(),
        (_, Scalar::Float(f)) => f.into(),
        (_, Scalar::Complex(re, im)) => Array::of2(&re.into(), &im.into()).into(),
        (_, Scalar::Text | Scalar::Json) => JsValue::NULL,
    }
}

/// `{ error }` for a batch callback.
pub fn error_item(e: Error, url: &str) -> JsValue {
    let o = Object::new();
    set(&o, "error", to_js(e.at(url)));
    o.into()
}
