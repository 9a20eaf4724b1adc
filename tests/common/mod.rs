//! Fixture checks shared by the native tests and the headless-Chromium wasm tests.
//! Fixtures and expected values were written by zarr-python / tensorstore
//! (`tests/fixtures/generate.py`); shardfetch only reads them.
#![allow(dead_code)]

use serde_json::Value;
use shardfetch::core::metadata::{DataType, Format, Scalar};
use shardfetch::core::nd::for_each_index;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::Sel;
use shardfetch::core::read::{read_chunk, read_region, Array, Chunk, Element};
use shardfetch::core::transport::memory::ObjectServer;
use shardfetch::core::transport::{HttpClient, Method, Request};

pub struct Case {
    pub name: String,
    pub path: String,
    /// Extra open options (`format`, `path`, `scale`).
    pub open: Value,
    pub dtype: String,
    pub shape: Vec<u64>,
    /// The regular read-chunk shape, or `None` for an irregular grid (then `chunk_shapes`).
    pub chunk_shape: Option<Vec<u64>>,
    pub chunk_shapes: Option<Vec<Vec<u64>>>,
    pub shard_shape: Option<Vec<u64>>,
    pub fill: String,
    pub expected: String,
    pub features: Vec<String>,
    pub item_size: Option<usize>,
    /// Largest difference allowed per byte (lossy encodings); 0: exact.
    pub tolerance: u8,
    /// datetime64/timedelta64: NumPy's unit and scale factor, as the writer's dtype says.
    pub time_unit: Option<(String, u64)>,
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default()
}

/// The manifests `manifests.json` lists.
pub fn manifest_names(index: &[u8]) -> Vec<String> {
    let m: Value = serde_json::from_slice(index).expect("manifests.json");
    m["manifests"].as_array().expect("manifests").iter().map(|n| n.as_str().unwrap().into()).collect()
}

pub fn parse_manifest(text: &[u8]) -> (Vec<Case>, Vec<Value>) {
    let m: Value = serde_json::from_slice(text).expect("manifest");
    let cases = m["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap().into(),
            path: c["path"].as_str().unwrap().into(),
            open: c.get("open").cloned().unwrap_or(Value::Null),
            dtype: c["dtype"].as_str().unwrap().into(),
            shape: u64s(&c["shape"]),
            chunk_shape: c["chunkShape"].as_array().map(|_| u64s(&c["chunkShape"])),
            chunk_shapes: c.get("chunkShapes").and_then(Value::as_array).map(|a| a.iter().map(u64s).collect()),
            shard_shape: c["shardShape"].as_array().map(|_| u64s(&c["shardShape"])),
            fill: c["fillValue"].as_str().unwrap().into(),
            expected: c["expected"].as_str().unwrap().into(),
            features: c["features"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().into()).collect(),
            item_size: c.get("itemSize").and_then(Value::as_u64).map(|n| n as usize),
            tolerance: c.get("tolerance").and_then(Value::as_u64).unwrap_or(0) as u8,
            time_unit: c.get("timeUnit").map(|t| (t["unit"].as_str().unwrap().into(), t["scaleFactor"].as_u64().unwrap())),
        })
        .collect();
    (cases, m["groups"].as_array().cloned().unwrap_or_default())
}

/// Every case and group of every listed manifest, read with `read(name)`.
pub async fn all_cases<F, Fut>(read: F) -> (Vec<Case>, Vec<Value>)
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Vec<u8>>,
{
    let (mut cases, mut groups) = (Vec::new(), Vec::new());
    for name in manifest_names(&read("manifests.json".into()).await) {
        let (c, g) = parse_manifest(&read(name).await);
        cases.extend(c.into_iter().filter(|c| c.needs_feature().is_none_or(built_with)));
        groups.extend(g);
    }
    (cases, groups)
}

/// Whether this build reads what needs `f` (an external decoder: linked with the feature
/// `native-decoders`, the default).
pub fn built_with(f: &str) -> bool {
    match f {
        "pcodec" | "lzma" => cfg!(feature = "native-decoders"),
        _ => true,
    }
}

impl Case {
    /// The external decoder (outside the wasm module) that reading this case needs, if the
    /// harness must check the build has it.
    pub fn needs_feature(&self) -> Option<&'static str> {
        ["pcodec", "lzma"].into_iter().find(|n| self.features.iter().any(|f| f.contains(n)))
    }

    /// Chunk boundaries per axis from the manifest (the writer's grid, not ours).
    pub fn starts(&self) -> Vec<Vec<u64>> {
        match (&self.chunk_shape, &self.chunk_shapes) {
            (Some(cs), _) => {
                self.shape.iter().zip(cs).map(|(&s, &c)| (0..s.div_ceil(c).max(1)).map(|i| i * c).collect()).collect()
            }
            (None, Some(sizes)) => sizes
                .iter()
                .map(|a| {
                    let mut at = 0;
                    a.iter()
                        .map(|&n| {
                            at += n;
                            at - n
                        })
                        .collect()
                })
                .collect(),
            (None, None) => panic!("{}: neither chunkShape nor chunkShapes", self.name),
        }
    }

    pub fn options(&self) -> OpenOptions {
        let o = &self.open;
        OpenOptions {
            format: o.get("format").and_then(Value::as_str).map(|f| Format::parse(f).expect("format")),
            path: o.get("path").and_then(Value::as_str).unwrap_or("").into(),
            scale: o.get("scale").map(|s| s.as_str().map(String::from).unwrap_or_else(|| s.to_string())),
            store: o.get("store").and_then(Value::as_str).map(String::from),
            store_settings: store_settings(o),
            ..OpenOptions::default()
        }
    }
}

/// The options store kinds take (an Icechunk repository's `branch`, `tag`, `snapshot`) from a
/// case's `open`, by the registry's names.
pub fn store_settings(o: &Value) -> Vec<(String, String)> {
    let names = shardfetch::core::store::registry::OPTIONS.iter().flat_map(|(_, names)| names.iter());
    names.filter_map(|n| Some((n.to_string(), o.get(*n)?.as_str()?.to_string()))).collect()
}

pub async fn fetch_all<C: HttpClient>(c: &C, url: &str) -> Vec<u8> {
    let r = c
        .send(Request::new(Method::Get, url, None))
        .await
        .expect("fetch");
    assert_eq!(r.status, 200, "{url}");
    r.body
}

fn c_strides(shape: &[u64]) -> Vec<u64> {
    let mut s = vec![1u64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Element equality on raw little-endian bytes, NaN equal to NaN.
fn same(dtype: &str, a: &[u8], b: &[u8]) -> bool {
    if a == b {
        return true;
    }
    match dtype {
        "float16" => {
            let nan = |x: &[u8]| u16::from_le_bytes([x[0], x[1]]) & 0x7fff > 0x7c00;
            nan(a) && nan(b)
        }
        "float32" => {
            f32::from_le_bytes(a.try_into().unwrap()).is_nan() && f32::from_le_bytes(b.try_into().unwrap()).is_nan()
        }
        "float64" => {
            f64::from_le_bytes(a.try_into().unwrap()).is_nan() && f64::from_le_bytes(b.try_into().unwrap()).is_nan()
        }
        "complex64" => same("float32", &a[..4], &b[..4]) && same("float32", &a[4..], &b[4..]),
        "complex128" => same("float64", &a[..8], &b[..8]) && same("float64", &a[8..], &b[8..]),
        _ => false,
    }
}

/// JPEG is lossy and decoders differ by a few levels (tensorstore uses libjpeg-turbo): a
/// tolerance for those cases only, from the manifest's `tolerance`.
fn lossy_close(case: &Case, want: &[u8], have: &[u8]) -> bool {
    case.tolerance > 0 && want.iter().zip(have).all(|(a, b)| a.abs_diff(*b) <= case.tolerance)
}

fn elem_size(case: &Case) -> usize {
    match case.dtype.as_str() {
        "bool" | "int8" | "uint8" => 1,
        "int16" | "uint16" | "float16" => 2,
        "int32" | "uint32" | "float32" => 4,
        "complex128" => 16,
        "int64" | "uint64" | "float64" | "complex64" | "datetime64" | "timedelta64" => 8,
        other => case.item_size.unwrap_or_else(|| panic!("{}: dtype {other} needs itemSize", case.name)),
    }
}

/// Compare `got` (a box of the array starting at `origin`) with the expected full array.
/// `dims` maps each axis of `got` to an array axis (dropped axes are fixed at `origin`).
fn compare(
    case: &Case,
    dtype: DataType,
    expected: &[u8],
    got: &Chunk,
    origin: &[u64],
    dims: &[usize],
    what: &str,
) -> Result<(), String> {
    if case.expected.ends_with(".json") {
        return compare_values(case, dtype, expected, got, origin, dims, what);
    }
    let e = elem_size(case);
    let full = c_strides(&case.shape);
    let mut err = None;
    for_each_index(&got.shape, |idx| {
        if err.is_some() {
            return;
        }
        let mut pos = origin.to_vec();
        for (k, &i) in idx.iter().enumerate() {
            pos[dims[k]] += i;
        }
        let x = (pos.iter().zip(&full).map(|(p, s)| p * s).sum::<u64>() as usize) * e;
        let y = (idx.iter().zip(&got.stride).map(|(p, s)| p * s).sum::<u64>() as usize) * e;
        let (want, have) = (&expected[x..x + e], got.bytes.get(y..y + e));
        if !have.is_some_and(|h| same(&case.dtype, want, h) || lossy_close(case, want, h)) {
            err = Some(format!("{}: {what}: element {pos:?}: expected {want:?}, got {have:?}", case.name));
        }
    });
    err.map_or(Ok(()), Err)
}

/// The value of element `y` of a text, bytes or JSON chunk as the manifests' expected JSON
/// holds it (text as a string, bytes as base64, JSON as itself).
fn element_value(case: &Case, dtype: DataType, got: &Chunk, y: usize) -> Option<Value> {
    Some(match got.element(dtype, y)? {
        Element::Text(t) => Value::String(t),
        Element::Bytes(b) => Value::String(base64_encode(b)),
        Element::Json(j) => serde_json::from_slice(j).unwrap_or_else(|e| panic!("{}: element {y}: {e}", case.name)),
    })
}

/// Compare a text, bytes or JSON box with the expected values (`{"values": [...]}`, C order).
fn compare_values(
    case: &Case,
    dtype: DataType,
    expected: &[u8],
    got: &Chunk,
    origin: &[u64],
    dims: &[usize],
    what: &str,
) -> Result<(), String> {
    let values: Value = serde_json::from_slice(expected).map_err(|e| format!("{}: expected JSON: {e}", case.name))?;
    let values = values["values"].as_array().ok_or("expected has no values")?;
    let full = c_strides(&case.shape);
    let mut err = None;
    for_each_index(&got.shape, |idx| {
        if err.is_some() {
            return;
        }
        let mut pos = origin.to_vec();
        for (k, &i) in idx.iter().enumerate() {
            pos[dims[k]] += i;
        }
        let x = pos.iter().zip(&full).map(|(p, s)| p * s).sum::<u64>() as usize;
        let y = idx.iter().zip(&got.stride).map(|(p, s)| p * s).sum::<u64>() as usize;
        let (want, have) = (values.get(x), element_value(case, dtype, got, y));
        if want != have.as_ref() {
            err = Some(format!("{}: {what}: element {pos:?}: expected {want:?}, got {have:?}", case.name));
        }
    });
    err.map_or(Ok(()), Err)
}

pub fn base64_encode(b: &[u8]) -> String {
    let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = c.iter().enumerate().fold(0u32, |a, (i, &v)| a | (v as u32) << (16 - 8 * i));
        for k in 0..4 {
            if k <= c.len() {
                out.push(table[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

async fn open_array<C: HttpClient>(c: &C, url: &str, options: OpenOptions) -> Result<Array, String> {
    match open(c, url, options).await.map_err(|e| e.to_string())? {
        Opened::Array(a) => Ok(*a),
        Opened::Group(_) => Err(format!("{url} opened as a group")),
    }
}

/// Standard base64, for the manifests' raw/structured fill values.
fn base64(s: &str) -> Vec<u8> {
    let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let vals: Vec<u32> =
        s.bytes().filter(|&c| c != b'=').map(|c| table.iter().position(|&t| t == c).unwrap() as u32).collect();
    let mut out = Vec::new();
    for q in vals.chunks(4) {
        let n = q.iter().enumerate().fold(0u32, |a, (i, v)| a | v << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..q.len()]);
    }
    out
}

fn fill_matches(value: Scalar, bytes: &[u8], fill: &str) -> bool {
    let float = |f: f64, text: &str| {
        (f.is_nan() && (text.contains("NaN") || text.starts_with("0x")))
            || text.parse::<f64>().ok() == Some(f)
            || (f.is_infinite() && text.contains("Infinity") && text.starts_with('-') == (f < 0.0))
    };
    match value {
        Scalar::Float(f) => float(f, fill),
        Scalar::Int(i) => fill == i.to_string() || (i == i64::MIN && fill == "\"NaT\""),
        Scalar::UInt(u) => fill == u.to_string(),
        Scalar::Bool(b) => fill == b.to_string(),
        Scalar::Bytes => base64(fill) == bytes,
        Scalar::Complex(re, im) => match serde_json::from_str::<Value>(fill) {
            Ok(Value::Array(p)) if p.len() == 2 => {
                let text = |v: &Value| v.as_str().map(String::from).unwrap_or_else(|| v.to_string());
                float(re, &text(&p[0])) && float(im, &text(&p[1]))
            }
            _ => false,
        },
        Scalar::Text | Scalar::Json => false,
    }
}

/// A text, bytes or JSON array's fill value against the writer's JSON token (null and 0 mean
/// empty, as Zarr v2 object arrays spell it): compared as one element of a chunk of fill.
fn text_fill_matches(a: &Array, fill: &str) -> bool {
    let token: Value = serde_json::from_str(fill).unwrap_or(Value::Null);
    let f = &a.metadata().fill_value;
    let one = Chunk { bytes: f.bytes.clone(), shape: vec![1], stride: vec![1], heap: f.heap.clone() };
    let empty = token.is_null() || token.as_u64() == Some(0);
    match one.element(a.dtype(), 0) {
        Some(Element::Text(t)) => token.as_str() == Some(t.as_str()) || (empty && t.is_empty()),
        Some(Element::Bytes(b)) => token.as_str().map(base64) == Some(b.to_vec()) || (empty && b.is_empty()),
        Some(Element::Json(j)) => serde_json::from_slice::<Value>(j).ok() == Some(token),
        None => false,
    }
}

/// Metadata, every chunk through `chunk`, and several regions through `region`.
/// Encodings this build does not decode (without the linked decoders), whose cases must fail
/// with `UnsupportedCodec` naming the encoding.
pub const NOT_IN_THIS_BUILD: &[&str] = if cfg!(feature = "native-decoders") { &[] } else { &["encoding_jxl"] };

pub async fn check_case<C: HttpClient>(c: &C, base: &str, case: &Case) -> Result<(), String> {
    if let Some(f) = case.features.iter().find(|f| NOT_IN_THIS_BUILD.contains(&f.as_str())) {
        let name = f.trim_start_matches("encoding_");
        return match open(c, &format!("{base}/data/{}", case.path), case.options()).await {
            Err(e) if e.code == shardfetch::core::ErrorCode::UnsupportedCodec && e.message.contains(name) => Ok(()),
            Err(e) => Err(format!("{}: expected UnsupportedCodec naming {name}, got {e}", case.name)),
            Ok(_) => Err(format!("{}: opened, though this build does not decode {name}", case.name)),
        };
    }
    let expected = fetch_all(c, &format!("{base}/{}", case.expected)).await;
    let a = open_array(c, &format!("{base}/data/{}", case.path), case.options()).await?;
    let n = case.name.as_str();
    if a.metadata().shape != case.shape || a.dtype().name() != case.dtype {
        return Err(format!("{n}: metadata {:?} {}", a.metadata().shape, a.dtype().name()));
    }
    let unit = a.dtype().time_unit().map(|t| (String::from(t.unit()), u64::from(t.scale())));
    if unit != case.time_unit {
        return Err(format!("{n}: time unit {unit:?}, the writer's {:?}", case.time_unit));
    }
    let starts = case.starts();
    let sizes: Vec<Vec<u64>> = a.grid().axes.iter().map(|ax| ax.sizes()).collect();
    if a.grid().chunk_shape() != case.chunk_shape
        || a.shard_shape() != case.shard_shape
        || (case.chunk_shapes.is_some() && Some(&sizes) != case.chunk_shapes.as_ref())
    {
        return Err(format!(
            "{n}: chunk shape {:?} ({sizes:?}) shard shape {:?}",
            a.grid().chunk_shape(),
            a.shard_shape()
        ));
    }
    let fill = &a.metadata().fill_value;
    let text = matches!(fill.value, Scalar::Text | Scalar::Json) || case.expected.ends_with(".json");
    if !(if text { text_fill_matches(&a, &case.fill) } else { fill_matches(fill.value, &fill.bytes, &case.fill) }) {
        return Err(format!("{n}: fill value {:?}, manifest says {}", a.metadata().fill_value.value, case.fill));
    }
    let ndim = case.shape.len();
    let mut chunks = 0;
    let mut result = Ok(());
    let count: Vec<u64> =
        if case.shape.contains(&0) { vec![0; ndim] } else { starts.iter().map(|s| s.len() as u64).collect() };
    let mut coords_list = Vec::new();
    for_each_index(&count, |g| coords_list.push(g.to_vec()));
    for g in coords_list {
        let chunk = read_chunk(&a, c, &g).await.map_err(|e| format!("{n}: chunk {g:?}: {e}"))?;
        result = result.and(writers_chunk(case, &a, &expected, &g, &chunk));
        chunks += 1;
    }
    result?;
    if chunks == 0 && !case.shape.contains(&0) {
        return Err(format!("{n}: no chunks read"));
    }
    // Regions: everything; a window crossing chunk (and shard) edges; an index on axis 0.
    let first: Vec<u64> = starts.iter().zip(&case.shape).map(|(s, &n)| s.get(1).copied().unwrap_or(n).max(1)).collect();
    let mut sels: Vec<Vec<Sel>> = vec![vec![Sel::All; ndim]];
    if ndim > 0 {
        sels.push(
            case.shape.iter().zip(&first).map(|(&s, &c)| Sel::Range((c / 2).min(s), (c * 3 / 2 + 1).min(s))).collect(),
        );
        // (An axis of none, as a record dimension without records, has no index to take.)
        if let Some(last) = case.shape[0].checked_sub(1) {
            let mut idx = vec![Sel::All; ndim];
            idx[0] = Sel::Index(last);
            sels.push(idx);
        }
        sels.push(case.shape.iter().map(|&s| Sel::Range(s / 3, s - s / 4)).collect());
    }
    for sel in sels {
        let got = read_region(&a, c, &sel).await.map_err(|e| format!("{n}: region {sel:?}: {e}"))?;
        writers_region(case, &a, &expected, &sel, &got)?;
    }
    Ok(())
}

/// The case named `name` in the manifests `manifests.json` lists, and its writer's values (the
/// file its `expected` names), read from `tests/fixtures` on disk (native tests only). Tests
/// compare what they read with these, never with another read of the library's.
pub fn writers_case(name: &str) -> (Case, Vec<u8>) {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let read = |rel: &str| std::fs::read(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let case = manifest_names(&read("manifests.json"))
        .iter()
        .flat_map(|m| parse_manifest(&read(m)).0)
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no case {name} in the manifests"));
    let expected = read(&case.expected);
    (case, expected)
}

/// Chunk `coords` of `a` as read (`got`) against the writer's values of `case`: its shape (the
/// writer's grid, clipped at the array's edge) and every element.
pub fn writers_chunk(case: &Case, a: &Array, expected: &[u8], coords: &[u64], got: &Chunk) -> Result<(), String> {
    let starts = case.starts();
    let origin: Vec<u64> = coords.iter().zip(&starts).map(|(&g, s)| s[g as usize]).collect();
    let shape: Vec<u64> = coords
        .iter()
        .zip(&starts)
        .zip(&case.shape)
        .map(|((&g, s), &n)| s.get(g as usize + 1).copied().unwrap_or(n).min(n) - s[g as usize])
        .collect();
    if got.shape != shape {
        return Err(format!("{}: chunk {coords:?}: shape {:?}, the writer's {shape:?}", case.name, got.shape));
    }
    let all: Vec<usize> = (0..case.shape.len()).collect();
    compare(case, a.dtype(), expected, got, &origin, &all, &format!("chunk {coords:?}"))
}

/// A region `sel` of `a` as read (`got`) against the writer's values of `case`: its shape and
/// every element.
pub fn writers_region(case: &Case, a: &Array, expected: &[u8], sel: &[Sel], got: &Chunk) -> Result<(), String> {
    let origin: Vec<u64> = sel
        .iter()
        .map(|s| match s {
            Sel::All => 0,
            Sel::Index(i) => *i,
            Sel::Range(a, _) => *a,
        })
        .collect();
    let shape: Vec<u64> = sel
        .iter()
        .zip(&case.shape)
        .filter_map(|(s, &n)| match s {
            Sel::All => Some(n),
            Sel::Index(_) => None,
            Sel::Range(a, b) => Some(b - a),
        })
        .collect();
    if got.shape != shape {
        return Err(format!("{}: region {sel:?}: shape {:?}, expected {shape:?}", case.name, got.shape));
    }
    let dims: Vec<usize> =
        sel.iter().enumerate().filter(|(_, s)| !matches!(s, Sel::Index(_))).map(|(i, _)| i).collect();
    compare(case, a.dtype(), expected, got, &origin, &dims, &format!("region {sel:?}"))
}

/// Groups open as groups with their attributes; their children open.
pub async fn check_group<C: HttpClient>(c: &C, base: &str, g: &Value) -> Result<(), String> {
    let path = g["path"].as_str().unwrap();
    let url = format!("{base}/data/{path}");
    let own = g.get("open").and_then(|o| o.get("path")).and_then(Value::as_str).unwrap_or("");
    let open_field = g.get("open").cloned().unwrap_or(Value::Null);
    let options = |child: &str| OpenOptions {
        format: g.get("format").and_then(Value::as_str).map(|f| Format::parse(f).expect("format")),
        path: [own, child].iter().filter(|p| !p.is_empty()).cloned().collect::<Vec<_>>().join("/"),
        store: open_field.get("store").and_then(Value::as_str).map(String::from),
        store_settings: store_settings(&open_field),
        ..OpenOptions::default()
    };
    match open(c, &url, options("")).await.map_err(|e| e.to_string())? {
        Opened::Group(group) => {
            let attributes: Value = serde_json::from_str(group.attributes.as_str()).map_err(|e| e.to_string())?;
            if attributes != g["attributes"] {
                return Err(format!("{path}: attributes differ"));
            }
        }
        Opened::Array(_) => return Err(format!("{path} opened as an array")),
    }
    for (child, kind) in g["children"].as_object().unwrap() {
        if kind == "implicit_group" {
            // No document (draft v3): listed by its writer, but not openable, as in zarr-python.
            match open(c, &url, options(child)).await {
                Err(e) if e.code == shardfetch::core::ErrorCode::NotFound => continue,
                other => {
                    return Err(format!(
                        "{path}/{child}: an implicit group should be NotFound, got {:?}",
                        other.is_ok()
                    ))
                }
            }
        }
        let opened = open(c, &url, options(child)).await.map_err(|e| e.to_string())?;
        let is_array = matches!(opened, Opened::Array(_));
        if is_array != (kind == "array") {
            return Err(format!("{path}/{child}: expected a {kind}"));
        }
    }
    Ok(())
}

/// A change to a fixture file's bytes, given its path after the base URL.
pub type Patch = Box<dyn Fn(&str, Vec<u8>) -> Vec<u8>>;

/// `tests/fixtures` served from `base` by the in-memory object server, each file through
/// `patch` when there is one.
pub fn fixture_files(base: &'static str, patch: Option<Patch>) -> ObjectServer {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    ObjectServer::with_source(move |url| {
        let rel = url.strip_prefix(base)?;
        let body = std::fs::read(root.join(rel.trim_start_matches('/'))).ok()?;
        Some(match &patch {
            Some(p) => p(rel, body),
            None => body,
        })
    })
}
