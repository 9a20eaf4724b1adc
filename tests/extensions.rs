//! zarr-extensions `scale_offset` and `cast_value` through the whole read path: the spec's
//! "float64 to uint8 with NaN preservation" example, its chunk written here byte by byte (no
//! writer among the pinned tools produces these codecs yet); expected values from the spec's
//! formula, never from shardfetch.
#![cfg(not(target_arch = "wasm32"))]
use futures_executor::block_on;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::Sel;
use shardfetch::core::read::{read_region, Array};
use shardfetch::core::transport::memory::ObjectServer;
use shardfetch::core::{ErrorCode, Result};

fn array(dtype: &str, fill: &str, codecs: &str, chunk: Vec<u8>) -> (ObjectServer, Result<Array>) {
    let meta = format!(
        r#"{{"zarr_format":3,"node_type":"array","shape":[6],"data_type":"{dtype}","fill_value":{fill},
            "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":[4]}}}},
            "chunk_key_encoding":{{"name":"default"}},"codecs":{codecs}}}"#
    );
    let c = ObjectServer::new();
    c.put("mem://x/zarr.json", meta);
    c.put("mem://x/c/0", chunk);
    let a = match block_on(open(&c, "mem://x", OpenOptions::default())) {
        Ok(Opened::Array(a)) => Ok(*a),
        Ok(Opened::Group(_)) => panic!("a group"),
        Err(e) => Err(e),
    };
    (c, a)
}

const SPEC: &str = r#"[{"name":"scale_offset","configuration":{"offset":-10,"scale":0.1}},
    {"name":"cast_value","configuration":{"data_type":"uint8","rounding":"nearest-even",
     "scalar_map":{"encode":[["NaN",0]],"decode":[[0,"NaN"]]}}},
    {"name":"bytes"}]"#;

#[test]
fn float64_stored_as_uint8_with_nan_preserved() {
    let stored = [0u8, 1, 255, 100];
    let (c, a) = array("float64", "\"NaN\"", SPEC, stored.to_vec());
    let a = a.unwrap();
    let got = block_on(read_region(&a, &c, &[Sel::All])).unwrap();
    let vals: Vec<f64> = got.bytes.chunks(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
    // Decoding: cast (0 → NaN by the scalar map), then x / scale + offset.
    assert!(vals[0].is_nan());
    for (k, &s) in stored.iter().enumerate().skip(1) {
        assert_eq!(vals[k], f64::from(s) / 0.1 + -10.0, "element {k}");
    }
    // The second chunk is absent: the fill value, NaN.
    assert!(vals[4].is_nan() && vals[5].is_nan());
}

#[test]
fn a_value_the_cast_cannot_represent_is_an_error() {
    // int8 elements stored as int16, no out_of_range: 300 has no int8 value — an error naming
    // the chunk, not a wrapped 44.
    let codecs = r#"[{"name":"cast_value","configuration":{"data_type":"int16"}},{"name":"bytes"}]"#;
    let (c, a) = array("int8", "0", codecs, [1i16, -2, 300, 4].iter().flat_map(|v| v.to_le_bytes()).collect());
    let e = block_on(read_region(&a.unwrap(), &c, &[Sel::All])).unwrap_err();
    assert_eq!(e.code, ErrorCode::CorruptChunk, "{e}");
    assert!(e.message.contains("c/0"), "{e}");
    // With clamp, it reads as 127.
    let codecs = r#"[{"name":"cast_value","configuration":{"data_type":"int16","out_of_range":"clamp"}},{"name":"bytes"}]"#;
    let (c, a) = array("int8", "0", codecs, [1i16, -2, 300, 4].iter().flat_map(|v| v.to_le_bytes()).collect());
    let got = block_on(read_region(&a.unwrap(), &c, &[Sel::All])).unwrap();
    assert_eq!(got.bytes, [1, 0xfe, 127, 4, 0, 0]);
    // An unknown configuration key is invalid metadata, as the spec requires.
    let bad = r#"[{"name":"scale_offset","configuration":{"offset":1,"factor":2}},{"name":"bytes"}]"#;
    let (_, a) = array("float64", "0", bad, vec![0; 32]);
    assert_eq!(a.err().unwrap().code, ErrorCode::InvalidMetadata);
}
