//! Every case of manifest-hdf5.json read as the host will: the node's Zarr v3 document checked,
//! then every chunk located, decoded and compared with what the writer read back.
mod common;
use common::{decode_chunk, dtype_size, manifest, wrap, Host};
use serde_json::Value;

/// One element of the fill value, little-endian.
fn fill_bytes(dt: &Value, fill: &Value, size: usize) -> Vec<u8> {
    let name = dt.as_str().unwrap_or("");
    let float = |x: f64| -> Vec<u8> {
        match name {
            "float16" => {
                assert!(x.is_nan() || x == 0.0 || x.is_infinite(), "float16 fills other than 0/NaN/inf are not checked");
                if x.is_nan() {
                    vec![0x00, 0x7e]
                } else {
                    vec![0, 0]
                }
            }
            "float32" => (x as f32).to_le_bytes().to_vec(),
            _ => x.to_le_bytes().to_vec(),
        }
    };
    match fill {
        Value::Bool(b) => vec![*b as u8],
        Value::Number(n) if name.starts_with("float") => float(n.as_f64().unwrap()),
        Value::Number(n) if name.starts_with("complex") => vec![0; size],
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_le_bytes()[..size].to_vec(),
            None => n.as_u64().unwrap().to_le_bytes()[..size].to_vec(),
        },
        Value::String(s) if s == "NaN" => float(f64::NAN),
        Value::String(s) if s == "Infinity" => float(f64::INFINITY),
        Value::String(s) if s == "-Infinity" => float(f64::NEG_INFINITY),
        Value::String(s) if s.starts_with("0x") => u64::from_str_radix(&s[2..], 16).unwrap().to_le_bytes()[..size].to_vec(),
        Value::String(s) => {
            // base64 (fixed-length strings, structured): the element's bytes, NUL-padded
            let mut b = base64(s);
            b.resize(size, 0);
            b
        }
        Value::Array(_) => vec![0; size],
        other => panic!("fill {other}"),
    }
}

fn swap(data: &mut [u8], unit: usize) {
    if unit > 1 {
        for e in data.chunks_exact_mut(unit) {
            e.reverse();
        }
    }
}

/// Copy a decoded chunk (C order, `cshape`) at grid position `coords` into `out` (`shape`).
fn place(out: &mut [u8], shape: &[u64], chunk: &[u64], coords: &[u64], data: &[u8], cshape: &[u64], es: usize) {
    let rank = shape.len();
    if rank == 0 {
        out.copy_from_slice(&data[..es]);
        return;
    }
    let origin: Vec<u64> = coords.iter().zip(chunk).map(|(&c, &k)| c * k).collect();
    let extent: Vec<u64> = (0..rank).map(|a| cshape[a].min(shape[a].saturating_sub(origin[a]))).collect();
    if extent.iter().any(|&e| e == 0) {
        return;
    }
    let rows: u64 = extent[..rank - 1].iter().product();
    for r in 0..rows {
        let mut idx = vec![0u64; rank];
        let mut rem = r;
        for a in (0..rank - 1).rev() {
            idx[a] = rem % extent[a];
            rem /= extent[a];
        }
        let src = (0..rank).fold(0u64, |acc, a| acc * cshape[a] + idx[a]) as usize * es;
        let dst = (0..rank).fold(0u64, |acc, a| acc * shape[a] + origin[a] + idx[a]) as usize * es;
        let n = extent[rank - 1] as usize * es;
        out[dst..dst + n].copy_from_slice(&data[src..src + n]);
    }
}

/// Read a whole array through the module: (values, chunk calls answered from "more" knowledge).
pub fn read_array(h: &mut Host, path: &str, z: &Value) -> Option<Vec<u8>> {
    let shape: Vec<u64> = z["shape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    let chunk: Vec<u64> =
        z["chunk_grid"]["configuration"]["chunk_shape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    let (es, unit) = dtype_size(&z["data_type"]);
    let codecs = z["codecs"].as_array().unwrap().clone();
    let big = codecs[0]["configuration"]["endian"] == "big";
    let n: u64 = shape.iter().product();
    let fill = fill_bytes(&z["data_type"], &z["fill_value"], es);
    let mut out: Vec<u8> = fill.iter().copied().cycle().take(n as usize * es).collect();
    let grid: Vec<u64> = shape.iter().zip(&chunk).map(|(&s, &c)| s.div_ceil(c)).collect();
    let total: u64 = grid.iter().product();
    let mut known: std::collections::HashMap<Vec<u64>, (u64, u64)> = Default::default();
    let mut complete = true;
    for k in 0..total {
        let mut coords = vec![0u64; grid.len()];
        let mut rem = k;
        for a in (0..grid.len()).rev() {
            coords[a] = rem % grid[a];
            rem /= grid[a];
        }
        // As the host does: a chunk some answer's "more" located is not asked again (every
        // eighth is, to check that both answers agree).
        let answer = match known.get(&coords) {
            Some(&(o, l)) if k % 8 != 0 => serde_json::json!({"chunk": [o, l]}),
            Some(&(o, l)) => {
                let a = h.chunk(path, &coords);
                assert_eq!(a["chunk"], serde_json::json!([o, l]), "{path} {coords:?}: \"more\" said otherwise");
                a
            }
            None => h.chunk(path, &coords),
        };
        assert!(answer.get("error").is_none(), "{path} {coords:?}: {answer}");
        for m in answer.get("more").and_then(Value::as_array).into_iter().flatten() {
            let c: Vec<u64> = m[0].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
            assert!(c.iter().zip(&grid).all(|(a, b)| a < b), "{path}: more names {c:?} outside {grid:?}");
            known.insert(c, (m[1].as_u64().unwrap(), m[2].as_u64().unwrap()));
        }
        let Some(r) = answer["chunk"].as_array() else { continue };
        let (off, len) = (r[0].as_u64().unwrap() as usize, r[1].as_u64().unwrap() as usize);
        let mut stored = h.file[off..off + len].to_vec();
        // Filters the writer skipped for this chunk: re-applied as the host does (op wrap).
        if let Some(ids) = answer.get("wrap") {
            stored = wrap(ids, &stored);
        }
        let mut cshape = chunk.clone();
        let full = cshape.iter().product::<u64>() as usize * es;
        if answer.get("short") == Some(&Value::Bool(true)) {
            let row = full / cshape[0] as usize;
            assert_eq!(len % row, 0);
            assert!(len < full);
            cshape[0] = (len / row) as u64;
        }
        let nbytes = cshape.iter().product::<u64>() as usize * es;
        let Some(mut data) = decode_chunk(&codecs, stored, nbytes) else {
            complete = false;
            continue;
        };
        assert_eq!(data.len(), nbytes, "{path} {coords:?}: decoded size");
        if big {
            swap(&mut data, unit);
        }
        place(&mut out, &shape, &chunk, &coords, &data, &cshape, es);
    }
    complete.then_some(out)
}

#[test]
fn every_case_reads_back() {
    let m = manifest();
    let mut checked = 0;
    let mut only_located = Vec::new();
    for case in m["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let path = case["open"]["path"].as_str().unwrap();
        let mut h = Host::open(&format!("data/{}", case["path"].as_str().unwrap()));
        let node = h.node(path);
        let z = &node["node"]["zarr_json"];
        assert!(z.is_object(), "{name}: {node}");
        assert!(node["node"].get("children").is_none(), "{name}: an array with children");
        assert_eq!(z["zarr_format"], 3);
        assert_eq!(z["node_type"], "array", "{name}");
        assert_eq!(z["shape"], case["shape"], "{name}: shape");
        if !case["chunkShape"].is_null() {
            assert_eq!(z["chunk_grid"]["configuration"]["chunk_shape"], case["chunkShape"], "{name}: chunk shape");
        }
        let dtype = case["dtype"].as_str().unwrap();
        let zt = &z["data_type"];
        match zt.as_str() {
            Some(t) => assert_eq!(t, dtype, "{name}: data type"),
            None if dtype == "fixed_length_string" => {
                assert_eq!(zt["name"], "fixed_length_string", "{name}");
                let conf = &zt["configuration"];
                assert_eq!(conf["length_bytes"], case["itemSize"], "{name}");
                assert_eq!((&conf["charset"], &conf["padding"]), (&case["stringType"]["charset"], &case["stringType"]["padding"]), "{name}");
            }
            None => assert_eq!(zt["name"], dtype, "{name}: data type"),
        }
        let fill = case["fillValue"].as_str().unwrap();
        let zf = &z["fill_value"];
        let same = match (zf, fill.parse::<f64>()) {
            (Value::Number(n), Ok(x)) if dtype == "float32" => n.as_f64().unwrap() as f32 == x as f32,
            (Value::Number(n), Ok(x)) => n.as_f64().unwrap() == x && (n.to_string() == fill || n.as_f64().unwrap().fract() == 0.0 || fill.contains('.')),
            (Value::Bool(b), _) => b.to_string() == fill,
            (Value::String(s), _) if s == fill => true,
            (Value::Array(a), Ok(x)) => a.iter().all(|v| v.as_f64() == Some(x)),
            // Fixed-length strings: base64 of the fill's bytes, the manifest's its text.
            (Value::String(s), _) if dtype == "fixed_length_string" => {
                serde_json::from_str::<String>(fill).ok().as_deref() == core::str::from_utf8(&base64(s)).ok()
            }
            // Bytes types: base64 of the fill's bytes without trailing NULs ("" for zeros).
            (Value::String(s), _) if fill == "0" || fill.trim_matches('"').chars().all(|c| c == 'A' || c == '=') => {
                s.is_empty() || s.chars().all(|c| c == 'A' || c == '=')
            }
            // Complex: [re, im] as the shared suites spell it.
            (Value::Array(a), Err(_)) => serde_json::from_str::<Vec<f64>>(fill).ok()
                == a.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>(),
            _ => false,
        };
        assert!(same, "{name}: fill value {zf} for {fill}");
        if let Some(codecs) = case.get("codecs") {
            let names: Vec<&str> = z["codecs"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
            let want: Vec<&str> = codecs.as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
            assert_eq!(names, want, "{name}: codecs");
        }
        if let Some(dims) = case.get("dimensionNames") {
            assert_eq!(&z["dimension_names"], dims, "{name}: dimension names");
        }
        let mut expected = std::fs::read(common::fixtures().join(case["expected"].as_str().unwrap())).unwrap();
        let strings = dtype == "fixed_length_string";
        if strings {
            // Fixed-length strings: h5py's bytes (base64 per element), padding removed as the
            // type says, against the stored elements with theirs removed.
            let size = case["itemSize"].as_u64().unwrap() as usize;
            let rel = case["expectedBytes"].as_str().unwrap();
            let doc: Value = serde_json::from_slice(&std::fs::read(common::fixtures().join(rel)).unwrap()).unwrap();
            expected = doc["values"].as_array().unwrap().iter().flat_map(|v| {
                let mut b = base64(v.as_str().unwrap());
                b.resize(size, 0);
                b
            }).collect();
        }
        match read_array(&mut h, path, z) {
            Some(mut got) => {
                if strings {
                    let size = case["itemSize"].as_u64().unwrap() as usize;
                    let pad = case["stringType"]["padding"].as_str().unwrap();
                    for e in got.chunks_exact_mut(size) {
                        let end = unpadded(e, pad);
                        e[end..].fill(0);
                    }
                }
                assert_eq!(got.len(), expected.len(), "{name}: size");
                if got != expected {
                    let at = got.iter().zip(&expected).position(|(a, b)| a != b).unwrap();
                    panic!("{name}: values differ from byte {at}");
                }
                checked += 1;
            }
            None => only_located.push(name.to_string()),
        }
    }
    println!("{checked} cases compared value for value; located only (blosc): {only_located:?}");
    assert!(checked >= 150, "{checked}");
}

#[test]
fn error_cases_answer_errors() {
    let m = manifest();
    for e in m["errors"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let path = e["path"].as_str().unwrap();
        let mut h = Host::open(&format!("data/{}", e["file"].as_str().unwrap()));
        let answer = match e["op"].as_str().unwrap() {
            "node" => h.node(path),
            _ => {
                let coords: Vec<u64> = e["coords"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
                h.chunk(path, &coords)
            }
        };
        let code = e["code"].as_str().unwrap();
        if code == "NotFound" {
            assert_eq!(answer, serde_json::json!({"node": null}), "{name}");
            continue;
        }
        assert_eq!(answer["error"]["code"], code, "{name}: {answer}");
        let msg = answer["error"]["message"].as_str().unwrap();
        println!("{name}: {msg}");
    }
}

/// Where a fixed-length string's content ends, as h5py reads it (HDF5's conversion to NumPy's
/// NUL-padded `S`, whose trailing NULs NumPy drops).
fn unpadded(e: &[u8], pad: &str) -> usize {
    let nuls = |b: &[u8]| b.iter().rposition(|&x| x != 0).map_or(0, |k| k + 1);
    match pad {
        "nullterm" => e.iter().position(|&x| x == 0).unwrap_or(e.len()),
        "spacepad" => nuls(&e[..e.iter().rposition(|&x| x != b' ').map_or(0, |k| k + 1)]),
        _ => nuls(e),
    }
}

/// Standard base64 (the manifests' fixed-bytes values).
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
