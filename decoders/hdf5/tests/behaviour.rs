//! What the host sees: rounds and bytes to open a NetCDF-4 variable, group listings, the
//! contiguous layout's pseudo-chunks, files of unknown size, the filter op.
mod common;
use common::{filter, Host};
use serde_json::{json, Value};

fn names(node: &Value) -> Vec<(String, bool)> {
    node["node"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c[0].as_str().unwrap().to_string(), c[1].as_bool().unwrap()))
        .collect()
}

#[test]
fn netcdf_variable_opens_in_few_rounds() {
    for (read_ahead, max_rounds) in [(64 << 10, 6), (4 << 10, 7), (512, 9)] {
        for var in ["var01", "var42", "forecast/precip", "time"] {
            let mut h = Host::open("data/hdf5/netcdf4.nc");
            h.read_ahead = read_ahead;
            let n = h.node(var);
            assert!(n["node"]["zarr_json"]["dimension_names"].is_array(), "{var}: {n}");
            println!("{var} (read-ahead {read_ahead}): {} rounds, {} bytes of {}", h.rounds, h.fetched, h.file.len());
            assert!(h.rounds <= max_rounds, "{var}: {} rounds with read-ahead {read_ahead}", h.rounds);
            // A chunk then costs at most one more round (the chunk index).
            let before = h.rounds;
            let c = h.chunk(var, &vec![0; n["node"]["zarr_json"]["shape"].as_array().unwrap().len()]);
            assert!(c.get("chunk").is_some(), "{c}");
            assert!(h.rounds - before <= 1, "{var}: chunk index took {} rounds", h.rounds - before);
        }
    }
}

#[test]
fn groups_list_their_children() {
    let mut h = Host::open("data/hdf5/netcdf4.nc");
    let root = names(&h.node(""));
    assert!(root.contains(&("forecast".into(), false)));
    assert!(root.contains(&("var00".into(), true)) && root.contains(&("time".into(), true)));
    // A dimension without a variable is no child.
    assert!(!root.iter().any(|c| c.0 == "nv"), "{root:?}");
    assert_eq!(root.len(), 1 + 5 + 44);
    for file in ["earliest", "v110", "latest"] {
        let mut h = Host::open(&format!("data/hdf5/{file}.h5"));
        let many = names(&h.node("many"));
        // 60 soft links to a dataset, a dataset, a group: symbol-table nodes (earliest) or dense
        // storage (fractal heap and name index).
        assert_eq!(many.len(), 62, "{file}");
        assert!(many.iter().filter(|c| c.0.starts_with("link")).all(|c| c.1));
        assert!(many.contains(&("subgroup".into(), false)));
        let grp = names(&h.node("grp"));
        assert_eq!(grp, vec![("soft_rel".into(), true), ("sub".into(), false)], "{file}");
        let root = h.node("");
        let rootn = names(&root);
        // The dangling soft link is no child.
        assert!(!rootn.iter().any(|c| c.0 == "dangling"));
        let attrs = &root["node"]["zarr_json"]["attributes"];
        assert_eq!(attrs["vlen_strs"], json!(["one", "two", "three"]), "{file}");
        assert_eq!(attrs["u64_big"], json!(9223372036854775813u64));
        assert_eq!(attrs["f64_inf"], json!(["Infinity", "-Infinity", 1e-300]));
        assert_eq!(attrs["compound"], json!({"a": 1, "b": 2.5}));
        assert_eq!(attrs["fixed_str"], json!("fixed"));
        assert_eq!(attrs["empty"], Value::Null);
        let many_attrs = h.node("many_attrs");
        let a = &many_attrs["node"]["zarr_json"]["attributes"];
        assert_eq!(a.as_object().unwrap().len(), 21, "{file}: {a}");
        assert_eq!(a["attr19"], json!(28.5));
        assert_eq!(a["long_text"].as_str().unwrap().len(), 300);
        assert_eq!(h.node("grp/sub")["node"]["zarr_json"]["attributes"]["title"], "deep group");
    }
    let mut h = Host::open("data/hdf5/links.h5");
    let l = names(&h.node(""));
    assert_eq!(l, vec![("here".into(), true), ("to_here".into(), true)]);
}

#[test]
fn contiguous_pseudo_chunks() {
    let mut h = Host::open("data/hdf5/v110.h5");
    // 30 x 20 int16: rows of 40 bytes; 7 rows (280 bytes) a chunk → 5 chunks, the last of 2 rows.
    let req = json!({"op": "node", "path": "contig_i16", "contiguous_chunk_bytes": 300});
    let z = h.ask(req)["node"]["zarr_json"].clone();
    // The last chunk is shorter: a rectilinear grid, four of 7 rows then 2.
    assert_eq!(z["chunk_grid"]["name"], "rectilinear");
    assert_eq!(z["chunk_grid"]["configuration"]["chunk_shapes"], json!([[[7, 4], 2], 20]));
    let expected = std::fs::read(common::fixtures().join("expected/hdf5/v110_contig_i16.bin")).unwrap();
    let mut got = Vec::new();
    for i in 0..5u64 {
        let a = h.ask(json!({"op": "chunk", "path": "contig_i16", "coords": [i, 0], "contiguous_chunk_bytes": 300}));
        let r = a["chunk"].as_array().unwrap();
        let (o, l) = (r[0].as_u64().unwrap() as usize, r[1].as_u64().unwrap() as usize);
        assert_eq!(l, if i < 4 { 280 } else { 80 });
        assert_eq!(a.get("short").is_some(), i == 4, "{a}");
        got.extend_from_slice(&h.file[o..o + l]);
    }
    assert_eq!(got, expected);
    // Never written: every chunk is the fill value.
    assert_eq!(h.chunk("contig_empty", &[0, 0]), json!({"chunk": null}));
}

#[test]
fn unknown_size_and_big_file_offsets() {
    let mut h = Host::open("data/hdf5/latest.h5");
    h.tell_size = false;
    let n = h.node("ext2");
    assert_eq!(n["node"]["zarr_json"]["shape"], json!([22, 19]));
    assert!(h.chunk("ext2", &[5, 4])["chunk"].is_array());
    // Past the end with a known size: an error, not a need.
    let mut h = Host::open("data/hdf5/bad_truncated.h5");
    assert_eq!(h.node("many_attrs")["error"]["code"], "CorruptShard");
}

#[test]
fn filter_op() {
    // LZF: a literal run, a back reference, another literal.
    let lzf = [2u8, b'a', b'b', b'c', 0x20, 2, 0, b'x'];
    assert_eq!(filter(32000, &[], &lzf, 100).unwrap(), b"abcabcx");
    let corrupt = |r: Result<Vec<u8>, abi::Failure>, why: &str| {
        let e = r.unwrap_err();
        assert_eq!(e.code, abi::CORRUPT, "{why}: {e:?}");
        e.message
    };
    assert_eq!(corrupt(filter(32000, &[], &lzf, 5), "past the limit"), "lzf: decodes to more than the chunk");
    assert_eq!(corrupt(filter(32000, &[], &[0x20, 9], 100), "before the start"), "lzf: a reference before the start");
    // HDF5-LZ4: one block stored raw (compressed size = block size), one compressed.
    let mut lz4 = 10u64.to_be_bytes().to_vec();
    lz4.extend_from_slice(&6u32.to_be_bytes());
    lz4.extend_from_slice(&6u32.to_be_bytes());
    lz4.extend_from_slice(b"abcdef");
    // 4 bytes: literal "gh" then a match of 4 at offset 2 would be 6; use literals only.
    lz4.extend_from_slice(&5u32.to_be_bytes());
    lz4.extend_from_slice(&[0x40, b'g', b'h', b'i', b'j']);
    assert_eq!(filter(32004, &[], &lz4, 10).unwrap(), b"abcdefghij");
    assert_eq!(corrupt(filter(32004, &[], &lz4[..20], 10), "the first block cut short"), "lz4: a block past the input");
    assert_eq!(
        corrupt(filter(32004, &[], &lz4, 9), "a byte over the limit"),
        "lz4: the header's size is more than the chunk"
    );
    assert_eq!(filter(5, &[], &[], 4).unwrap_err().code, abi::UNSUPPORTED);
}
