//! Sizes from metadata, the caller or the network are refused with `TooLarge` (naming the size
//! and the limit) before anything is allocated or requested — the inputs that, before, made the
//! wasm module trap (issue 14): a whole-axis selection of a huge array, a chunk declared at
//! gigabytes, its fill value, a gzip bomb, a huge metadata document.
#![cfg(not(target_arch = "wasm32"))]
use futures_executor::block_on;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::Sel;
use shardfetch::core::read::{read_chunk, read_region, Array};
use shardfetch::core::transport::memory::ObjectServer;
use shardfetch::core::ErrorCode;

/// Objects in memory under `mem://x/`, every request logged.
fn mem(files: &[(&str, Vec<u8>)]) -> ObjectServer {
    let c = ObjectServer::new();
    for (k, v) in files {
        c.put(&format!("mem://x/{k}"), v.clone());
    }
    c
}

fn zarray(shape: &str, chunks: &str, compressor: &str) -> Vec<u8> {
    format!(
        r#"{{"zarr_format":2,"shape":{shape},"chunks":{chunks},"dtype":"|u1","compressor":{compressor},"fill_value":7,"filters":null,"order":"C"}}"#
    )
    .into_bytes()
}

fn open_array(c: &ObjectServer, options: OpenOptions) -> shardfetch::core::Result<Array> {
    match block_on(open(c, "mem://x", options))? {
        Opened::Array(a) => Ok(*a),
        Opened::Group(_) => panic!("a group"),
    }
}

fn too_large<T>(r: shardfetch::core::Result<T>, option: &str) {
    let Err(e) = r else { panic!("expected TooLarge naming {option}") };
    assert_eq!(e.code, ErrorCode::TooLarge, "{e}");
    assert!(e.message.contains(option), "the message names the limit: {e}");
}

#[test]
fn a_whole_axis_of_a_huge_array_is_refused_before_planning() {
    let c = mem(&[(".zarray", zarray("[4611686018427387904]", "[1000]", "null"))]);
    let a = open_array(&c, OpenOptions::default()).unwrap();
    too_large(block_on(read_region(&a, &c, &[Sel::All])), "maxDecodedBytes");
    // One chunk of it is fine (and is the fill value: nothing stored).
    assert_eq!(block_on(read_chunk(&a, &c, &[5])).unwrap().bytes, vec![7; 1000]);
}

#[test]
fn a_precomputed_volume_of_2_pow_53_voxels_per_axis() {
    let info = r#"{"data_type":"uint8","num_channels":1,"type":"image","scales":[{"key":"s","size":[9007199254740992,9007199254740992,9007199254740992],
        "chunk_sizes":[[64,64,64]],"resolution":[1,1,1],"encoding":"raw","voxel_offset":[0,0,0]}]}"#;
    let c = mem(&[("info", info.as_bytes().to_vec())]);
    let a = open_array(
        &c,
        OpenOptions { format: Some(shardfetch::core::metadata::Format::Precomputed), ..Default::default() },
    )
    .unwrap();
    let e = block_on(read_region(&a, &c, &[Sel::All, Sel::All, Sel::All, Sel::All])).unwrap_err();
    assert_eq!(e.code, ErrorCode::TooLarge, "{e}");
    too_large(
        block_on(read_region(&a, &c, &[Sel::Range(0, 1 << 20), Sel::Range(0, 1 << 10), Sel::Index(0), Sel::All])),
        "maxDecodedBytes",
    );
}

#[test]
fn a_chunk_declared_above_the_limit_is_refused_before_its_request() {
    // 2 MiB chunks against a 1 MiB limit: the fill of an absent one, and a stored one.
    let c = mem(&[(".zarray", zarray("[4194304]", "[2097152]", r#"{"id":"zlib","level":1}"#)), ("0", vec![1, 2, 3])]);
    let a = open_array(&c, OpenOptions { max_decoded: 1 << 20, ..Default::default() }).unwrap();
    c.reset();
    too_large(block_on(read_chunk(&a, &c, &[1])), "maxDecodedBytes");
    too_large(block_on(read_chunk(&a, &c, &[0])), "maxDecodedBytes");
    assert!(c.log().is_empty(), "no request for a chunk that cannot be held: {:?}", c.log());
    // Chunks of 2^31 bytes do not even open (no buffer of that size is ever allocated).
    let c = mem(&[(".zarray", zarray("[4294967296]", "[2147483648]", "null"))]);
    assert_eq!(open_array(&c, OpenOptions::default()).err().unwrap().code, ErrorCode::TooLarge);
}

#[test]
fn a_gzip_bomb_stops_at_the_chunks_size() {
    // 1 KiB chunks; the stored chunk inflates to 16 MiB of zeros.
    let bomb = miniz_oxide::deflate::compress_to_vec_zlib(&vec![0u8; 16 << 20], 9);
    assert!(bomb.len() < 64 << 10);
    let c = mem(&[(".zarray", zarray("[4096]", "[1024]", r#"{"id":"zlib","level":1}"#)), ("0", bomb)]);
    let a = open_array(&c, OpenOptions::default()).unwrap();
    assert_eq!(block_on(read_chunk(&a, &c, &[0])).unwrap_err().code, ErrorCode::CorruptChunk);
    assert_eq!(block_on(read_chunk(&a, &c, &[1])).unwrap().bytes, vec![7; 1024], "the array still reads");
}

#[test]
fn a_huge_metadata_document_is_refused() {
    let mut doc = zarray("[10]", "[5]", "null");
    doc.pop();
    doc.extend_from_slice(br#","attributes_padding":""#);
    doc.extend(std::iter::repeat_n(b'x', 20 << 20));
    doc.extend_from_slice(b"\"}");
    let c = mem(&[(".zarray", doc)]);
    too_large(open_array(&c, OpenOptions::default()), "maxMetadataBytes");
    assert!(
        open_array(&c, OpenOptions { max_metadata: 32 << 20, ..Default::default() }).is_ok(),
        "a larger limit admits it"
    );
}
