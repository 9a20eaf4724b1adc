//! The NetCDF-3 reader on damaged headers: every fixture truncated and corrupted at every header
//! byte (and sparser past it), asked for its root, every variable and chunks of each; every
//! answer is a node, a chunk or a typed error — never a panic, never invalid JSON, and with the
//! whole file in hand and its size known, never a need. Plus the protocol's need rounds.
use serde_json::{json, Value};
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/data/netcdf3")
}

/// A request: its JSON, then windows (offset, bytes).
fn input(req: &Value, windows: &[(u64, &[u8])]) -> Vec<u8> {
    let j = req.to_string();
    let mut out = (j.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(j.as_bytes());
    for (at, b) in windows {
        out.extend_from_slice(&at.to_le_bytes());
        out.extend_from_slice(&(b.len() as u64).to_le_bytes());
        out.extend_from_slice(b);
    }
    out
}

fn ask(req: Value, windows: &[(u64, &[u8])]) -> Value {
    let out = shardfetch_netcdf3::decode(&input(&req, windows), &[]).unwrap_or_else(|e| panic!("{req}: a protocol failure: {e:?}"));
    serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{req}: invalid JSON ({e}): {}", String::from_utf8_lossy(&out)))
}

const CODES: [&str; 4] = ["CorruptShard", "TooLarge", "UnsupportedFormat", "NotFound"];

/// Root, every variable, and chunks at the start and end of each grid; the count of answers.
fn sweep(file: &[u8], what: &str) -> usize {
    let size = json!(file.len());
    let w = [(0u64, file)];
    let mut n = 0;
    let check = |a: &Value| {
        assert!(a.get("need").is_none(), "{what}: asks for bytes past the end: {a}");
        if let Some(e) = a.get("error") {
            assert!(CODES.contains(&e["code"].as_str().unwrap_or("")), "{what}: {a}");
        }
    };
    let root = ask(json!({"op": "node", "path": "", "size": size}), &w);
    check(&root);
    let kids = root["node"]["children"].as_array().cloned().unwrap_or_default();
    for k in kids.iter().take(64) {
        let path = k[0].as_str().unwrap_or("");
        let a = ask(json!({"op": "node", "path": path, "size": size}), &w);
        check(&a);
        n += 1;
        let shape: Vec<u64> = a["node"]["zarr_json"]["shape"].as_array().map(|s| s.iter().filter_map(Value::as_u64).collect()).unwrap_or_default();
        for coords in [vec![0; shape.len()], shape.iter().map(|&d| d.saturating_sub(1)).collect(), vec![u64::MAX; shape.len()]] {
            check(&ask(json!({"op": "chunk", "path": path, "coords": coords, "size": size}), &w));
            n += 1;
        }
    }
    n
}

#[test]
fn damaged_headers_answer_without_panic() {
    let mut names: Vec<String> = std::fs::read_dir(fixtures()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    let (mut variants, mut answers) = (0, 0);
    for name in names {
        // (The headers are in the first 4 KiB: a longer file is swept as its start, whose
        // variables then end past the end of the file.)
        let mut orig = std::fs::read(fixtures().join(&name)).unwrap();
        orig.truncate(4096);
        // The header is at the start: every byte there, sparser after.
        let mut positions: Vec<usize> = (0..orig.len().min(1200)).collect();
        positions.extend((1200..orig.len()).step_by(orig.len() / 20 + 1));
        for &p in &positions {
            answers += sweep(&orig[..p], &format!("{name} truncated at {p}"));
            for k in 0..4 {
                let mut b = orig.clone();
                b[p] = [0xff, 0x00, b[p] ^ 0x80, b[p] ^ 0x01][k];
                answers += sweep(&b, &format!("{name} byte {p} set to {:#x}", b[p]));
                variants += 1;
            }
        }
    }
    assert!(variants > 10_000 && answers > 50_000, "{variants} variants, {answers} answers");
}

#[test]
fn a_long_header_is_read_in_rounds_and_across_windows() {
    let file = std::fs::read(fixtures().join("nc3_classic.nc")).unwrap();
    // 16 bytes held: the rest of the header asked for (at least as many again as held).
    let a = ask(json!({"op": "node", "path": "", "size": null}), &[(0, &file[..16])]);
    let need = a["need"].as_array().expect("a need");
    assert_eq!(need[0][0], 16, "{a}");
    // Split into windows out of order, overlapping: joined as one.
    let w = [(700u64, &file[700..]), (0, &file[..500]), (400, &file[400..800])];
    let a = ask(json!({"op": "node", "path": "temp", "size": file.len()}), &w);
    assert_eq!(a["node"]["zarr_json"]["shape"], json!([5, 6, 8]), "{a}");
    // Past the file's end: an error, not a need.
    let a = ask(json!({"op": "node", "path": "", "size": 100}), &[(0, &file[..100])]);
    assert_eq!(a["error"]["code"], "CorruptShard", "{a}");
    assert!(a["error"]["message"].as_str().unwrap().contains("past the end of the file"), "{a}");
}

#[test]
fn records_are_one_range_each_and_one_record_variable_is_not_padded() {
    // nc3_offset64.nc (netCDF-C): `series` (int16, 3 a record) is the one record variable: its
    // records are 6 bytes apart, not 8.
    let file = std::fs::read(fixtures().join("nc3_offset64.nc")).unwrap();
    let w = [(0u64, &file[..])];
    let a = ask(json!({"op": "chunk", "path": "series", "coords": [0, 0], "size": file.len()}), &w);
    let b = ask(json!({"op": "chunk", "path": "series", "coords": [1, 0], "size": file.len()}), &w);
    let (a0, b0) = (a["chunk"][0].as_u64().unwrap(), b["chunk"][0].as_u64().unwrap());
    assert_eq!((b0 - a0, a["chunk"][1].as_u64()), (6, Some(6)), "{a} {b}");
    // The others near it come with it.
    assert_eq!(a["more"].as_array().map(Vec::len), Some(6), "{a}");
    // nc3_classic.nc: five record variables, byte and short ones padded: 8+192+4+8 = 212.
    let file = std::fs::read(fixtures().join("nc3_classic.nc")).unwrap();
    let w = [(0u64, &file[..])];
    let a = ask(json!({"op": "chunk", "path": "flag", "coords": [0], "size": file.len()}), &w);
    let b = ask(json!({"op": "chunk", "path": "flag", "coords": [1], "size": file.len()}), &w);
    assert_eq!(b["chunk"][0].as_u64().unwrap() - a["chunk"][0].as_u64().unwrap(), 8 + 4 + 8 + 192, "{a} {b}");
    assert_eq!(a["chunk"][1], 1, "{a}");
    let out = ask(json!({"op": "chunk", "path": "flag", "coords": [5], "size": file.len()}), &w);
    assert_eq!(out["error"]["code"], "NotFound", "{out}");
}
