//! Malformed input never panics: every fixture truncated and corrupted at many places, asked for
//! its root, a few datasets and a chunk; with the whole (damaged) file in hand and its size
//! known, every answer is a node, a chunk or an error — never a need.
mod common;
use common::{fixtures, Host};
use serde_json::{json, Value};

fn ask(file: &[u8], req: &Value, size: Option<usize>) -> Value {
    let mut h = Host::new(file.to_vec());
    h.windows = vec![(0, file.to_vec())];
    let mut req = req.clone();
    req["size"] = size.map_or(Value::Null, |s| json!(s));
    match shardfetch_hdf5::decode(&h.input(&req), &[]) {
        Ok(out) => serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{req}: invalid JSON ({e}): {}", String::from_utf8_lossy(&out))),
        Err(e) => panic!("{req}: a protocol failure for a file problem: {e:?}"),
    }
}

fn requests() -> Vec<Value> {
    vec![
        json!({"op": "node", "path": ""}),
        json!({"op": "node", "path": "deflate_shuffle"}),
        json!({"op": "node", "path": "many"}),
        json!({"op": "node", "path": "var01"}),
        json!({"op": "chunk", "path": "deflate_shuffle", "coords": [1, 1]}),
        json!({"op": "chunk", "path": "ext2", "coords": [4, 2]}),
        json!({"op": "chunk", "path": "many_chunks", "coords": [7, 3]}),
        json!({"op": "chunk", "path": "ext_long", "coords": [300]}),
        json!({"op": "chunk", "path": "var00", "coords": [2, 0, 0]}),
        json!({"op": "node", "path": "t_compound"}),
    ]
}

fn check(name: &str, file: &[u8], what: &str) {
    for req in requests() {
        let a = ask(file, &req, Some(file.len()));
        assert!(a.get("need").is_none(), "{name} {what} {req}: asks for bytes past the end: {a}");
        ask(file, &req, None);
    }
}

#[test]
fn damaged_files_answer_without_panic() {
    let dir = fixtures().join("data/hdf5");
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let mut variants = 0;
    for name in names {
        let orig = std::fs::read(dir.join(&name)).unwrap();
        // Metadata sits mostly near the start: dense there, sparser after.
        let mut positions: Vec<usize> = (0..orig.len().min(4096)).step_by(23).collect();
        positions.extend((4096..orig.len()).step_by(orig.len() / 40 + 1));
        for &p in &positions {
            check(&name, &orig[..p], &format!("truncated at {p}"));
            for (k, v) in [0xffu8, 0x00, 0x55].iter().enumerate() {
                let mut b = orig.clone();
                b[p] = if k == 2 { b[p] ^ v } else { *v };
                check(&name, &b, &format!("byte {p} set to {:#x}", b[p]));
                variants += 1;
            }
        }
    }
    println!("{variants} damaged variants answered");
}

#[test]
fn malformed_requests_fail_cleanly() {
    for (input, why) in [
        (&b""[..], "request: no length"),
        (b"\x05\0\0\0{\"op\"", "request: not JSON"),
        (b"\x02\0\0\0{}", "request: no op"),
        // (Each request's length as written: 10 and 13 bytes, so that each fails for its own fault
        // and not for a request cut short.)
        (b"\x0a\0\0\0{\"op\":\"x\"}", "request: unknown op"),
        (b"\x0d\0\0\0{\"op\":\"node\"}\x01", "request: a window's header is truncated"),
    ] {
        let e = shardfetch_hdf5::decode(input, &[]).unwrap_err();
        assert_eq!(e.code, abi::CORRUPT, "{input:?}: {e:?}");
        assert!(e.message.starts_with(why), "{input:?}: {e:?}, not {why}");
    }
    // No window at all: the first 4 KiB are asked for.
    let req = br#"{"op":"node","path":"","size":null}"#;
    let mut input = (req.len() as u32).to_le_bytes().to_vec();
    input.extend_from_slice(req);
    let out = shardfetch_hdf5::decode(&input, &[]).unwrap();
    assert_eq!(out, br#"{"need":[[0,4096]]}"#);
    // Coordinates outside the grid, a dataset that is not there, a chunk of a group.
    let mut h = Host::open("data/hdf5/v110.h5");
    assert_eq!(h.chunk("contig_i16", &[5, 0])["error"]["code"], "NotFound");
    assert_eq!(h.chunk("contig_i16", &[0])["error"]["code"], "NotFound");
    assert_eq!(h.chunk("nothing", &[0])["error"]["code"], "NotFound");
    assert_eq!(h.chunk("grp", &[0])["error"]["code"], "NotFound");
    assert_eq!(h.node("nothing/here"), json!({"node": null}));
    assert_eq!(h.node("contig_i16/below"), json!({"node": null}));
}
