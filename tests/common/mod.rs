//! Fixture checks shared by the native tests and the headless-Chromium wasm tests.
//! Fixtures and expected values were written by zarr-python / tensorstore
//! (`tests/fixtures/generate.py`); shardfetch only reads them.
#![allow(dead_code)]

use serde_json::Value;
use shardfetch::core::array::{open, Chunk, Opened, ZarrArray};
use shardfetch::core::http::{HttpClient, Method, Request};
use shardfetch::core::selection::{for_each_index, Sel};
use shardfetch::core::source::Config;

pub struct Case {
    pub name: String,
    pub path: String,
    pub dtype: String,
    pub shape: Vec<u64>,
    pub chunk_shape: Vec<u64>,
    pub shard_shape: Option<Vec<u64>>,
    pub fill: String,
    pub expected: String,
    pub features: Vec<String>,
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default()
}

pub fn parse_manifest(text: &[u8]) -> (Vec<Case>, Vec<Value>) {
    let m: Value = serde_json::from_slice(text).expect("manifest.json");
    let cases = m["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap().into(),
            path: c["path"].as_str().unwrap().into(),
            dtype: c["dtype"].as_str().unwrap().into(),
            shape: u64s(&c["shape"]),
            chunk_shape: u64s(&c["chunkShape"]),
            shard_shape: c["shardShape"].as_array().map(|_| u64s(&c["shardShape"])),
            fill: c["fillValue"].as_str().unwrap().into(),
            expected: c["expected"].as_str().unwrap().into(),
            features: c["features"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().into()).collect(),
        })
        .collect();
    (cases, m["groups"].as_array().cloned().unwrap_or_default())
}

pub async fn fetch_all<C: HttpClient>(c: &C, url: &str) -> Vec<u8> {
    let r = c.send(Request { method: Method::Get, url, range: None }).await.expect("fetch");
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
        _ => false,
    }
}

fn elem_size(dtype: &str) -> usize {
    match dtype {
        "bool" | "int8" | "uint8" => 1,
        "int16" | "uint16" | "float16" => 2,
        "int32" | "uint32" | "float32" => 4,
        _ => 8,
    }
}

/// Compare `got` (a box of the array starting at `origin`) with the expected full array.
/// `dims` maps each axis of `got` to an array axis (dropped axes are fixed at `origin`).
fn compare(
    case: &Case,
    expected: &[u8],
    got: &Chunk,
    origin: &[u64],
    dims: &[usize],
    what: &str,
) -> Result<(), String> {
    let e = elem_size(&case.dtype);
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
        if !have.is_some_and(|h| same(&case.dtype, want, h)) {
            err = Some(format!("{}: {what}: element {pos:?}: expected {want:?}, got {have:?}", case.name));
        }
    });
    err.map_or(Ok(()), Err)
}

async fn open_array<C: HttpClient>(c: &C, url: &str) -> Result<ZarrArray, String> {
    match open(c, url, Config::default()).await.map_err(|e| e.to_string())? {
        Opened::Array(a) => Ok(*a),
        Opened::Group { .. } => Err(format!("{url} opened as a group")),
    }
}

/// Metadata, every chunk through `chunk`, and several regions through `region`.
pub async fn check_case<C: HttpClient>(c: &C, base: &str, case: &Case) -> Result<(), String> {
    let expected = fetch_all(c, &format!("{base}/{}", case.expected)).await;
    let a = open_array(c, &format!("{base}/data/{}", case.path)).await?;
    let n = case.name.as_str();
    if a.meta.shape != case.shape || a.dtype().name() != case.dtype {
        return Err(format!("{n}: metadata {:?} {}", a.meta.shape, a.dtype().name()));
    }
    if a.chunk_shape() != case.chunk_shape.as_slice() || a.shard_shape().map(<[u64]>::to_vec) != case.shard_shape {
        return Err(format!("{n}: chunk shape {:?} shard shape {:?}", a.chunk_shape(), a.shard_shape()));
    }
    let fill = format!("{:?}", a.meta.fill_value.value);
    let fill_ok = match a.meta.fill_value.value {
        shardfetch::core::dtype::Scalar::Float(f) if f.is_nan() => {
            case.fill.contains("NaN") || case.fill.starts_with("0x")
        }
        shardfetch::core::dtype::Scalar::Float(f) => {
            case.fill.parse::<f64>().ok() == Some(f) || (f.is_infinite() && case.fill.contains("Infinity"))
        }
        shardfetch::core::dtype::Scalar::Int(i) => case.fill == i.to_string(),
        shardfetch::core::dtype::Scalar::UInt(u) => case.fill == u.to_string(),
        shardfetch::core::dtype::Scalar::Bool(b) => case.fill == b.to_string(),
    };
    if !fill_ok {
        return Err(format!("{n}: fill value {fill}, manifest says {}", case.fill));
    }
    let ndim = case.shape.len();
    let all: Vec<usize> = (0..ndim).collect();
    let mut chunks = 0;
    let mut result = Ok(());
    let grid = a.grid();
    let mut coords_list = Vec::new();
    for_each_index(&grid, |g| coords_list.push(g.to_vec()));
    for g in coords_list {
        let chunk = a.chunk(c, &g).await.map_err(|e| format!("{n}: chunk {g:?}: {e}"))?;
        let origin: Vec<u64> = g.iter().zip(&case.chunk_shape).map(|(g, s)| g * s).collect();
        result = result.and(compare(case, &expected, &chunk, &origin, &all, &format!("chunk {g:?}")));
        chunks += 1;
    }
    result?;
    if chunks == 0 && !case.shape.contains(&0) {
        return Err(format!("{n}: no chunks read"));
    }
    // Regions: everything; a window crossing chunk (and shard) edges; an index on axis 0.
    let mut sels: Vec<Vec<Sel>> = vec![vec![Sel::All; ndim]];
    if ndim > 0 {
        sels.push(
            case.shape
                .iter()
                .zip(&case.chunk_shape)
                .map(|(&s, &c)| Sel::Range((c / 2).min(s), (c * 3 / 2 + 1).min(s)))
                .collect(),
        );
        let mut idx = vec![Sel::All; ndim];
        idx[0] = Sel::Index(case.shape[0] - 1);
        sels.push(idx);
        sels.push(case.shape.iter().map(|&s| Sel::Range(s / 3, s - s / 4)).collect());
    }
    for sel in sels {
        let got = a.region(c, &sel).await.map_err(|e| format!("{n}: region {sel:?}: {e}"))?;
        let origin: Vec<u64> = sel
            .iter()
            .map(|s| match s {
                Sel::All => 0,
                Sel::Index(i) => *i,
                Sel::Range(a, _) => *a,
            })
            .collect();
        let dims: Vec<usize> =
            sel.iter().enumerate().filter(|(_, s)| !matches!(s, Sel::Index(_))).map(|(i, _)| i).collect();
        compare(case, &expected, &got, &origin, &dims, &format!("region {sel:?}"))?;
    }
    Ok(())
}

/// Groups open as groups with their attributes; their children open.
pub async fn check_group<C: HttpClient>(c: &C, base: &str, g: &Value) -> Result<(), String> {
    let path = g["path"].as_str().unwrap();
    let url = format!("{base}/data/{path}");
    match open(c, &url, Config::default()).await.map_err(|e| e.to_string())? {
        Opened::Group { attributes, .. } => {
            if Value::Object(attributes) != g["attributes"] {
                return Err(format!("{path}: attributes differ"));
            }
        }
        Opened::Array(_) => return Err(format!("{path} opened as an array")),
    }
    for (child, kind) in g["children"].as_object().unwrap() {
        let opened = open(c, &format!("{url}/{child}"), Config::default()).await.map_err(|e| e.to_string())?;
        let is_array = matches!(opened, Opened::Array(_));
        if is_array != (kind == "array") {
            return Err(format!("{path}/{child}: expected a {kind}"));
        }
    }
    Ok(())
}
