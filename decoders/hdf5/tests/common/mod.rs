//! A host as the core will be: it serves the module's needs from a file (each range rounded up
//! to 64 KiB, windows kept across calls), counts rounds and bytes, and decodes chunks.
#![allow(dead_code)]
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

pub fn manifest() -> Value {
    let text = std::fs::read_to_string(fixtures().join("manifest-hdf5.json")).expect("manifest-hdf5.json");
    serde_json::from_str(&text).unwrap()
}

pub struct Host {
    pub file: Vec<u8>,
    /// Merged windows the host holds.
    pub windows: Vec<(u64, Vec<u8>)>,
    pub rounds: usize,
    pub fetched: u64,
    /// Whether to tell the module the file's size.
    pub tell_size: bool,
    /// Each range asked is fetched with at least this many bytes.
    pub read_ahead: u64,
}

pub const READ_AHEAD: u64 = 64 << 10;

impl Host {
    pub fn new(file: Vec<u8>) -> Host {
        Host { file, windows: Vec::new(), rounds: 0, fetched: 0, tell_size: true, read_ahead: READ_AHEAD }
    }

    pub fn open(rel: &str) -> Host {
        Host::new(std::fs::read(fixtures().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}")))
    }

    pub fn input(&self, req: &Value) -> Vec<u8> {
        let text = serde_json::to_vec(req).unwrap();
        let mut input = (text.len() as u32).to_le_bytes().to_vec();
        input.extend_from_slice(&text);
        for (off, b) in &self.windows {
            input.extend_from_slice(&off.to_le_bytes());
            input.extend_from_slice(&(b.len() as u64).to_le_bytes());
            input.extend_from_slice(b);
        }
        input
    }

    fn add(&mut self, off: u64, len: u64) {
        let size = self.file.len() as u64;
        let start = off.min(size);
        let end = off.saturating_add(len.max(self.read_ahead)).min(size);
        if start >= end {
            return;
        }
        let mut ws: Vec<(u64, u64)> = self.windows.iter().map(|(o, b)| (*o, *o + b.len() as u64)).collect();
        // Fetch only what no window holds.
        let mut missing = vec![(start, end)];
        for &(a, b) in &ws {
            missing = missing
                .into_iter()
                .flat_map(|(s, e)| {
                    let mut v = Vec::new();
                    if s < a.min(e) {
                        v.push((s, a.min(e)));
                    }
                    if b.max(s) < e {
                        v.push((b.max(s), e));
                    }
                    v
                })
                .collect();
        }
        for (s, e) in &missing {
            self.fetched += e - s;
        }
        ws.push((start, end));
        ws.sort();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (s, e) in ws {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        self.windows = merged.into_iter().map(|(s, e)| (s, self.file[s as usize..e as usize].to_vec())).collect();
    }

    /// Ask until the module answers; panics past 32 rounds.
    pub fn ask(&mut self, mut req: Value) -> Value {
        if self.tell_size {
            req["size"] = json!(self.file.len());
        } else {
            req["size"] = Value::Null;
        }
        for _ in 0..40 {
            let out = shardfetch_hdf5::decode(&self.input(&req), &[]).unwrap_or_else(|e| panic!("{req}: {e:?}"));
            assert_eq!(out.first(), Some(&b'{'), "{req}: not JSON");
            let v: Value = serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{req}: {e}: {}", String::from_utf8_lossy(&out)));
            match v.get("need") {
                Some(need) => {
                    self.rounds += 1;
                    assert!(self.rounds <= 32, "{req}: more than 32 rounds");
                    if std::env::var("HDF5_TRACE").is_ok() {
                        eprintln!("round {}: {need}", self.rounds);
                    }
                    let before = self.windows.clone();
                    for r in need.as_array().unwrap() {
                        let (o, l) = (r[0].as_u64().unwrap(), r[1].as_u64().unwrap());
                        assert!(l > 0, "{req}: a need of 0 bytes");
                        self.add(o, l);
                    }
                    if self.windows == before {
                        // Nothing new to give (past the end of the file): the module must say so.
                        panic!("{req}: asks for bytes it already has or that do not exist: {need}");
                    }
                }
                None => return v,
            }
        }
        panic!("{req}: no answer")
    }

    pub fn node(&mut self, path: &str) -> Value {
        self.ask(json!({"op": "node", "path": path}))
    }

    pub fn chunk(&mut self, path: &str, coords: &[u64]) -> Value {
        self.ask(json!({"op": "chunk", "path": path, "coords": coords}))
    }
}

pub fn wrap(ids: &Value, data: &[u8]) -> Vec<u8> {
    let text = serde_json::to_vec(&json!({"op": "wrap", "filters": ids})).unwrap();
    let mut input = (text.len() as u32).to_le_bytes().to_vec();
    input.extend_from_slice(&text);
    input.extend_from_slice(&0u64.to_le_bytes());
    input.extend_from_slice(&(data.len() as u64).to_le_bytes());
    input.extend_from_slice(data);
    shardfetch_hdf5::decode(&input, &[]).unwrap()
}

pub fn filter(id: u64, params: &[u64], data: &[u8], size: u64) -> Result<Vec<u8>, abi::Failure> {
    let req = json!({"op": "filter", "filter": id, "params": params, "size": size});
    let text = serde_json::to_vec(&req).unwrap();
    let mut input = (text.len() as u32).to_le_bytes().to_vec();
    input.extend_from_slice(&text);
    input.extend_from_slice(&0u64.to_le_bytes());
    input.extend_from_slice(&(data.len() as u64).to_le_bytes());
    input.extend_from_slice(data);
    shardfetch_hdf5::decode(&input, &[])
}

/// Bytes per element of a Zarr v3 data type, and the unit a big-endian encoding reverses.
pub fn dtype_size(dt: &Value) -> (usize, usize) {
    if let Some(name) = dt.as_str() {
        let n = match name {
            "bool" | "int8" | "uint8" => 1,
            "int16" | "uint16" | "float16" => 2,
            "int32" | "uint32" | "float32" => 4,
            "int64" | "uint64" | "float64" => 8,
            "complex64" => return (8, 4),
            "complex128" => return (16, 8),
            other => panic!("data type {other}"),
        };
        return (n, n);
    }
    let conf = &dt["configuration"];
    match dt["name"].as_str().unwrap() {
        "fixed_length_string" | "raw_bytes" => (conf["length_bytes"].as_u64().unwrap() as usize, 1),
        "structured" => {
            let n = conf["fields"].as_array().unwrap().iter().map(|f| dtype_size(&f[1]).0).sum();
            (n, 1)
        }
        other => panic!("data type {other}"),
    }
}

/// Decode one stored chunk through the bytes→bytes codecs (reverse order) to its raw bytes in
/// the stored byte order. `None` when a codec is only checked, not decoded (blosc).
pub fn decode_chunk(codecs: &[Value], mut data: Vec<u8>, nbytes: usize) -> Option<Vec<u8>> {
    for c in codecs[1..].iter().rev() {
        let conf = &c["configuration"];
        data = match c["name"].as_str().unwrap() {
            "numcodecs.zlib" => miniz_oxide::inflate::decompress_to_vec_zlib(&data).expect("zlib"),
            "numcodecs.shuffle" => {
                let es = conf["elementsize"].as_u64().unwrap() as usize;
                let n = data.len() / es;
                let mut out = vec![0u8; data.len()];
                for i in 0..n {
                    for b in 0..es {
                        out[i * es + b] = data[b * n + i];
                    }
                }
                out[n * es..].copy_from_slice(&data[n * es..]);
                out
            }
            "numcodecs.fletcher32" => {
                let (body, sum) = data.split_at(data.len() - 4);
                assert_eq!(fletcher32(body), u32::from_le_bytes(sum.try_into().unwrap()), "fletcher32");
                body.to_vec()
            }
            "hdf5_filter" => {
                let id = conf["filter"].as_u64().unwrap();
                let params: Vec<u64> = conf["params"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
                filter(id, &params, &data, nbytes as u64).unwrap_or_else(|e| panic!("filter {id}: {e:?}"))
            }
            "zstd" => {
                use ruzstd::io_nostd::Read;
                let mut d = ruzstd::decoding::StreamingDecoder::new(&data[..]).expect("zstd");
                let mut out = Vec::new();
                d.read_to_end(&mut out).expect("zstd");
                out
            }
            "numcodecs.bz2" => shardfetch_bz2::decode(&data, &[nbytes as f64]).expect("bz2"),
            "blosc" => {
                assert!(data.len() >= 16 && data[0] == 2, "a blosc frame");
                let n = u32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
                assert_eq!(n, nbytes, "blosc frame's size");
                return None;
            }
            other => panic!("codec {other}"),
        };
    }
    Some(data)
}

/// HDF5's Fletcher-32, as the core's checksum32 computes it (copied from src/core/codec).
pub fn fletcher32(data: &[u8]) -> u32 {
    let (mut s1, mut s2) = (0u32, 0u32);
    let fold = |x: u32| (x & 0xffff) + (x >> 16);
    let words = data.len() / 2 * 2;
    for block in data[..words].chunks(720) {
        for w in block.chunks_exact(2) {
            s1 = s1.wrapping_add((u32::from(w[0]) << 8) | u32::from(w[1]));
            s2 = s2.wrapping_add(s1);
        }
        s1 = fold(s1);
        s2 = fold(s2);
    }
    if let Some(&last) = data.get(words) {
        s1 = s1.wrapping_add(u32::from(last) << 8);
        s2 = s2.wrapping_add(s1);
        s1 = fold(s1);
        s2 = fold(s2);
    }
    (fold(s2) << 16) | fold(s1)
}
