//! Parquet reference sets (fastparquet's and pyarrow's files, `tests/fixtures/data/containers/
//! kerchunk/refs*.parq`): every record file's rows are what kerchunk's JSON references of the
//! same HDF5 file say (`refs.json`), and damaged record files are typed errors, never a panic.
//! (The reader is the `parquet` decoder module, `decoders/parquet`, linked in natively.)
#![cfg(not(target_arch = "wasm32"))]
use futures_executor::block_on;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::Sel;
use shardfetch::core::read::read_region;
use shardfetch_parquet::parquet::{rows, Row};
use shardfetch::core::transport::memory::ObjectServer;
use std::path::PathBuf;

fn kerchunk() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/data/containers/kerchunk")
}

/// What a JSON reference says a row must hold.
fn expected(v: &serde_json::Value) -> Row {
    match v {
        serde_json::Value::String(s) => {
            let raw = match s.strip_prefix("base64:") {
                Some(b) => base64_decode(b),
                None => s.as_bytes().to_vec(),
            };
            Row { raw: Some(raw), ..Row::default() }
        }
        serde_json::Value::Array(a) => Row {
            path: Some(a[0].as_str().unwrap().to_string()),
            offset: a.get(1).and_then(|v| v.as_i64()).unwrap_or(0),
            size: a.get(2).and_then(|v| v.as_i64()).unwrap_or(0),
            raw: None,
        },
        _ => panic!("{v}"),
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let b: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for ch in b.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in ch.iter().enumerate() {
            n |= u32::from(val(c)) << (18 - 6 * i);
        }
        out.extend_from_slice(&n.to_be_bytes()[1..ch.len()]);
    }
    out
}

#[test]
fn record_rows_are_the_json_references() {
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(kerchunk().join("refs.json")).unwrap()).unwrap();
    let refs = json["refs"].as_object().unwrap();
    for set in ["refs.parq", "refs_pyarrow.parq"] {
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(kerchunk().join(set).join(".zmetadata")).unwrap()).unwrap();
        let rs = meta["record_size"].as_u64().unwrap() as usize;
        for (key, zarray) in meta["metadata"].as_object().unwrap() {
            let Some(field) = key.strip_suffix("/.zarray") else { continue };
            let shape: Vec<u64> = zarray["shape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
            let chunks: Vec<u64> = zarray["chunks"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
            let grid: Vec<u64> = shape.iter().zip(&chunks).map(|(s, c)| s.div_ceil(*c)).collect();
            let n: u64 = grid.iter().product::<u64>().max(1);
            for k in 0..n.div_ceil(rs as u64) {
                let file = kerchunk().join(set).join(field).join(format!("refs.{k}.parq"));
                let got = rows(&file.display().to_string(), &std::fs::read(&file).unwrap(), rs, 1 << 20)
                    .unwrap_or_else(|e| panic!("{set} {field} {k}: {e:?}"));
                for (j, row) in got.iter().enumerate() {
                    let i = k * rs as u64 + j as u64;
                    if i >= n {
                        break;
                    }
                    // Chunk i in C order.
                    let mut idx = vec![0u64; grid.len()];
                    let mut rest = i;
                    for d in (0..grid.len()).rev() {
                        idx[d] = rest % grid[d];
                        rest /= grid[d];
                    }
                    let name = format!("{field}/{}", idx.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("."));
                    let want = refs.get(&name).map(expected).unwrap_or_default();
                    assert_eq!(row, &want, "{set} {name}");
                }
            }
        }
    }
}

#[test]
fn damaged_record_files_are_typed_errors() {
    for set in ["refs.parq", "refs_pyarrow.parq"] {
        let file = kerchunk().join(set).join("gzip_i16/refs.0.parq");
        let b = std::fs::read(&file).unwrap();
        let mut outcomes = (0, 0);
        let mut try_one = |m: &[u8]| match rows("f", m, 2, 1 << 20) {
            Ok(_) => outcomes.0 += 1,
            Err(e) => {
                // The decoder ABI's codes: corrupt, too large, unsupported.
                assert!(matches!(e.code, 1..=3), "{e:?}");
                outcomes.1 += 1;
            }
        };
        for cut in 0..b.len() {
            try_one(&b[..cut]);
        }
        for at in 0..b.len() {
            for bit in [0x01u8, 0x10, 0x80] {
                let mut m = b.clone();
                m[at] ^= bit;
                try_one(&m);
            }
            let mut m = b.clone();
            m[at] = 0xff;
            try_one(&m);
        }
        eprintln!("{set}: {} damaged copies read, {} typed errors", outcomes.0, outcomes.1);
    }
}

/// The kerchunk fixture directory served from memory under `mem://k/`, the fastparquet set
/// renamed `set` (a URL that says nothing of Parquet).
fn dir() -> ObjectServer {
    ObjectServer::with_source(|url| {
        let key = url.strip_prefix("mem://k/")?.replacen("set/", "refs.parq/", 1);
        std::fs::read(kerchunk().join(key)).ok()
    })
}

#[test]
fn store_references_opens_a_parquet_set_by_any_name() {
    let options = || OpenOptions { store: Some("references".into()), path: "gzip_i16".into(), ..Default::default() };
    let c = dir();
    let Ok(Opened::Array(a)) = block_on(open(&c, "mem://k/set", options())) else { panic!("open") };
    let r = block_on(read_region(&a, &c, &[Sel::All, Sel::All])).unwrap();
    let want = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/expected/containers/ct_kerchunk_parq_gzip_i16.bin"),
    )
    .unwrap();
    assert_eq!(r.bytes, want, "h5py's values");
    // The reader is a decoder module: the array names it (the wrapper loads it before reading),
    // and without it a read is UnsupportedCodec naming it, not wrong data.
    assert!(a.decoders().contains(&"parquet"), "{:?}", a.decoders());
    let bare = OpenOptions { decoders: None, ..options() };
    let Ok(Opened::Array(a)) = block_on(open(&c, "mem://k/set", bare)) else { panic!("open") };
    let e = block_on(read_region(&a, &c, &[Sel::All, Sel::All])).unwrap_err();
    assert_eq!(e.code, shardfetch::core::ErrorCode::UnsupportedCodec, "{e:?}");
    assert!(e.message.contains("no parquet decoder is loaded"), "{e:?}");
    // Neither a document nor a set there: NotFound saying both.
    let e = block_on(open(&c, "mem://k/none", options())).err().unwrap();
    assert!(e.message.contains("nor a Parquet reference set's .zmetadata"), "{e:?}");
}
