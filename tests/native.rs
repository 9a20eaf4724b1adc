//! Native tests of the core over the committed fixtures, through an in-memory HTTP client
//! that can also behave like the servers that bite (see FORMAT-NOTES "HTTP behaviour").
#![cfg(not(target_arch = "wasm32"))]
mod common;

use common::{all_cases, check_case, check_group, fixture_files, writers_case, writers_chunk, Case, Patch};
use futures_executor::block_on;
use shardfetch::core::metadata::Scalar;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::{Sel, Want};
use shardfetch::core::read::{read_chunk, read_region, Array, Chunk, Got};
use shardfetch::core::transport::memory::{ObjectServer, Serve};
use shardfetch::core::transport::{Config, HttpClient, Method};
use shardfetch::core::{ErrorCode, Result};
use std::path::PathBuf;

const BASE: &str = "mem://fixtures";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The fixtures, answered as `serve` says.
fn fixtures(serve: Serve) -> ObjectServer {
    fixture_files(BASE, None).serving(serve)
}

/// The fixtures with their bytes changed by `patch`, answered honestly.
fn patched(patch: Patch) -> ObjectServer {
    fixture_files(BASE, Some(patch))
}

fn manifest() -> (Vec<Case>, Vec<serde_json::Value>) {
    block_on(all_cases(|name| async move { std::fs::read(root().join(&name)).unwrap() }))
}

fn case(name: &str) -> Case {
    manifest().0.into_iter().find(|c| c.name == name).unwrap()
}

fn with(config: Config) -> OpenOptions {
    OpenOptions { config, ..OpenOptions::default() }
}

fn open_array(c: &ObjectServer, path: &str, config: Config) -> Result<Array> {
    match block_on(open(c, &format!("{BASE}/data/{path}"), with(config)))? {
        Opened::Array(a) => Ok(*a),
        Opened::Group(_) => panic!("{path} is a group"),
    }
}

#[test]
fn every_fixture_reads_like_its_writer_wrote_it() {
    let (cases, groups) = manifest();
    assert!(cases.len() >= 30, "only {} cases", cases.len());
    let c = fixtures(Serve::Honest);
    let failures: Vec<String> = cases.iter().filter_map(|k| block_on(check_case(&c, BASE, k)).err()).collect();
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    for g in &groups {
        block_on(check_group(&c, BASE, g)).unwrap();
    }
}

#[test]
fn fixtures_read_through_misbehaving_servers() {
    let cases: Vec<Case> = manifest().0.into_iter().filter(|c| c.shard_shape.is_some()).collect();
    assert!(cases.len() >= 8);
    for mode in [Serve::IgnoreRange, Serve::NoSuffix416, Serve::NoSuffix400, Serve::NoContentRange] {
        let c = fixtures(mode);
        for k in &cases {
            block_on(check_case(&c, BASE, k)).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        }
    }
}

#[test]
fn cold_chunk_is_two_requests_warm_is_one() {
    let c = fixtures(Serve::Honest);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    c.reset();
    block_on(read_chunk(&a, &c, &[0, 0])).unwrap();
    let log = c.log();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log[0].range.as_deref().unwrap().starts_with("bytes=-"), "index by suffix range: {log:?}");
    assert!(log.iter().all(|r| r.method == Method::Get), "no HEAD: {log:?}");
    c.reset();
    block_on(read_chunk(&a, &c, &[0, 2])).unwrap(); // (0, 1) is an empty inner chunk: no request at all
    assert_eq!(c.requests(), 1);
    c.reset();
    block_on(read_chunk(&a, &c, &[0, 1])).unwrap();
    assert_eq!(c.requests(), 0, "an empty inner chunk needs no request once the index is known");
    assert_eq!(a.stats().store.memo_fills, 1);
}

#[test]
fn start_index_is_one_head_range() {
    let c = fixtures(Serve::Honest);
    // Some inner chunks are empty (one request: the index); a present one takes two.
    let counts: Vec<usize> = (0..4)
        .map(|x| {
            let a = open_array(&c, "ts/shard_start_nocrc", Config::default()).unwrap();
            c.reset();
            block_on(read_chunk(&a, &c, &[1, x])).unwrap();
            let log = c.log();
            assert_eq!(log[0].range.as_deref(), Some("bytes=0-255"), "{log:?}");
            log.len()
        })
        .collect();
    assert!(counts.contains(&2) && counts.iter().all(|&n| n <= 2), "{counts:?}");
}

#[test]
fn nested_shard_reads_only_the_innermost_chunk() {
    let k = case("ts_nested_shard");
    let c = fixtures(Serve::Honest);
    let a = open_array(&c, &k.path, Config::default()).unwrap();
    // Find a present innermost chunk, then read a cold one: outer index, sub-shard index, chunk.
    let grid = a.grid().count();
    let mut done = false;
    for y in 0..grid[0] {
        for x in 0..grid[1] {
            let fresh = open_array(&c, &k.path, Config::default()).unwrap();
            c.reset();
            block_on(read_chunk(&fresh, &c, &[y, x])).unwrap();
            if c.requests() == 3 {
                let log = c.log();
                assert!(log.iter().all(|r| r.range.is_some()), "every read is a range: {log:?}");
                done = true;
                break;
            }
        }
        if done {
            break;
        }
    }
    assert!(done, "no cold read took outer index + sub-shard index + chunk");
}

#[test]
fn concurrent_reads_share_one_index_fetch() {
    let c = fixtures(Serve::Honest);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    c.reset();
    c.yields.set(1);
    let (x, y) = block_on(futures_util::future::join(read_chunk(&a, &c, &[0, 0]), read_chunk(&a, &c, &[0, 2])));
    x.unwrap();
    y.unwrap();
    let suffixes = c.log().iter().filter(|r| r.range.as_deref().is_some_and(|r| r.starts_with("bytes=-"))).count();
    assert_eq!(suffixes, 1, "{:?}", c.log());
    assert_eq!(c.requests(), 3);
}

/// The same chunk wanted twice at once, or a chunk inside a merged read under way: one request.
#[test]
fn concurrent_reads_of_the_same_bytes_share_one_request() {
    let c = fixtures(Serve::Honest);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    block_on(read_chunk(&a, &c, &[0, 0])).unwrap(); // the index
    let b = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    block_on(read_chunk(&b, &c, &[0, 0])).unwrap();
    c.reset();
    c.yields.set(1);
    let (case, expected) = writers_case("zp_shard_gzip_end");
    let (x, y) = block_on(futures_util::future::join(read_chunk(&a, &c, &[3, 3]), read_chunk(&a, &c, &[3, 3])));
    writers_chunk(&case, &a, &expected, &[3, 3], &x.unwrap()).unwrap();
    writers_chunk(&case, &a, &expected, &[3, 3], &y.unwrap()).unwrap();
    assert_eq!(c.requests(), 1, "{:?}", c.log());
    // A whole-shard region under way, and a chunk of it asked meanwhile.
    c.reset();
    let all = [Sel::Range(0, 64), Sel::Range(0, 64)];
    let (r, one) = block_on(futures_util::future::join(read_region(&b, &c, &all), read_chunk(&b, &c, &[2, 1])));
    common::writers_region(&case, &b, &expected, &all, &r.unwrap()).unwrap();
    writers_chunk(&case, &b, &expected, &[2, 1], &one.unwrap()).unwrap();
    assert_eq!(c.requests(), 1, "{:?}", c.log());
}

#[test]
fn missing_shard_is_fill_and_asked_once() {
    let c = fixtures(Serve::Honest);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    // Shard c/0/1 is absent (generator checks it); its first inner chunk column is 64/16 = 4.
    let inner = a.grid().chunk_shape().unwrap()[1];
    let shard = a.shard_shape().unwrap()[1];
    let col = shard / inner;
    c.reset();
    let ch = block_on(read_chunk(&a, &c, &[0, col])).unwrap();
    assert!(ch.bytes.iter().all(|&b| b == 0));
    assert_eq!(c.requests(), 1);
    block_on(read_chunk(&a, &c, &[1, col])).unwrap();
    assert_eq!(c.requests(), 1, "a known-missing shard is not asked again");
}

#[test]
fn server_ignoring_range_sends_each_shard_once() {
    let c = fixtures(Serve::IgnoreRange);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    c.reset();
    for x in 0..4 {
        block_on(read_chunk(&a, &c, &[0, x])).unwrap();
    }
    assert_eq!(c.requests(), 1, "{:?}", c.log());
}

#[test]
fn refused_suffix_falls_back_to_head_once_per_server() {
    let c = fixtures(Serve::NoSuffix416);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    c.reset();
    block_on(read_chunk(&a, &c, &[0, 0])).unwrap();
    let kinds: Vec<(Method, bool)> = c.log().iter().map(|r| (r.method, r.range.is_some())).collect();
    assert_eq!(kinds, [(Method::Get, true), (Method::Head, false), (Method::Get, true), (Method::Get, true)]);
    c.reset();
    block_on(read_chunk(&a, &c, &[4, 0])).unwrap(); // another shard: no second suffix attempt
    let kinds: Vec<Method> = c.log().iter().map(|r| r.method).collect();
    assert_eq!(kinds, [Method::Head, Method::Get, Method::Get]);
}

#[test]
fn no_content_length_never_fetches_a_whole_object() {
    let c = fixtures(Serve::NoSuffixNoLength);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    c.reset();
    let e = block_on(read_chunk(&a, &c, &[0, 0])).unwrap_err();
    assert_eq!(e.code, ErrorCode::HttpError);
    assert!(e.message.contains("c/0/0"), "{}", e.message);
    assert!(c.log().iter().all(|r| r.method == Method::Head || r.range.is_some()), "{:?}", c.log());
}

#[test]
fn forbidden_is_an_error_unless_asked_otherwise() {
    let c = fixtures(Serve::Forbid403);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    let e = block_on(read_chunk(&a, &c, &[0, 4])).unwrap_err();
    assert_eq!((e.code, e.status), (ErrorCode::HttpError, Some(403)));
    let a = open_array(&c, "zp/shard_gzip_end", Config { treat403_as_missing: true, ..Config::default() }).unwrap();
    block_on(read_chunk(&a, &c, &[0, 4])).unwrap();
    let e = block_on(open(
        &fixtures(Serve::Always500),
        &format!("{BASE}/data/zp/shard_gzip_end"),
        with(Config::default()),
    ))
    .err()
    .unwrap();
    assert_eq!(e.code, ErrorCode::HttpError);
    assert!(e.message.contains("zarr.json") && e.message.contains("500"), "{}", e.message);
    let e = block_on(open(&c, &format!("{BASE}/data/nowhere"), with(Config::default()))).err().unwrap();
    assert_eq!(e.code, ErrorCode::HttpError); // 403 for a missing zarr.json too
}

#[test]
fn corrupt_shards_are_typed_errors() {
    let flip_index: Patch = Box::new(|p, mut b| {
        if p.ends_with("c/0/0") {
            let n = b.len();
            b[n - 10] ^= 0xff;
        }
        b
    });
    let c = patched(flip_index);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    let e = block_on(read_chunk(&a, &c, &[0, 0])).unwrap_err();
    assert_eq!(e.code, ErrorCode::ChecksumMismatch, "{e}");
    assert!(e.message.contains("c/0/0"), "{}", e.message);

    let truncate: Patch = Box::new(|p, b| if p.ends_with("c/0/0") { b[b.len() / 2..].to_vec() } else { b });
    let c = patched(truncate);
    let a = open_array(&c, "ts/shard_start_nocrc", Config::default()).unwrap();
    let e = block_on(read_region(&a, &c, &[Sel::All, Sel::All])).unwrap_err();
    assert_eq!(e.code, ErrorCode::CorruptShard, "{e}");

    let flip_chunk: Patch = Box::new(|p, mut b| {
        if p.ends_with("c/0/0") {
            b[20] ^= 0x55;
        }
        b
    });
    let c = patched(flip_chunk);
    let a = open_array(&c, "zp/gzip_crc32c", Config::default()).unwrap();
    let e = block_on(read_chunk(&a, &c, &[0, 0])).unwrap_err();
    assert_eq!(e.code, ErrorCode::ChecksumMismatch, "{e}");
    // A region over it fails too (it once came back with the chunk as fill).
    let a = open_array(&c, "zp/gzip_crc32c", Config::default()).unwrap();
    let e = block_on(read_region(&a, &c, &[Sel::All, Sel::All])).unwrap_err();
    assert_eq!(e.code, ErrorCode::ChecksumMismatch, "{e}");
}

/// The codec that wraps a stored chunk of `dir` (the last of its chain, the inner chain's when
/// sharded; in Zarr v2 the compressor, else the last filter), without a `numcodecs.` prefix.
fn outermost_codec(dir: &std::path::Path) -> String {
    let name = |v: &serde_json::Value| v.as_str().unwrap().trim_start_matches("numcodecs.").to_string();
    if let Ok(text) = std::fs::read_to_string(dir.join("zarr.json")) {
        let meta: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut codecs = meta["codecs"].as_array().unwrap();
        if codecs[0]["name"] == "sharding_indexed" {
            codecs = codecs[0]["configuration"]["codecs"].as_array().unwrap();
        }
        return name(&codecs.last().unwrap()["name"]);
    }
    let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join(".zarray")).unwrap()).unwrap();
    if !meta["compressor"].is_null() {
        return name(&meta["compressor"]["id"]);
    }
    name(&meta["filters"].as_array().unwrap().last().unwrap()["id"])
}

/// `chunk` with one byte of what its outermost codec wraps flipped, that codec's own framing kept
/// valid: a checksum codec's bytes flipped as they are; a compressor's output decoded, a byte of
/// it flipped and stored again in a form that codec passes through unchecked (zlib: deflated
/// anew, as zlib's own Adler-32 would catch a flipped compressed byte; zstd: raw blocks; blosc:
/// one raw (`MEMCPYED`) buffer; lz4: a byte of the first literal run). What the chunk then
/// decodes to differs in that byte from what its checksum covers: only ChecksumMismatch fits.
fn flip_under_checksum(outer: &str, mut chunk: Vec<u8>) -> Vec<u8> {
    match outer {
        "crc32" | "crc32c" | "adler32" | "fletcher32" | "jenkins_lookup3" => {
            let i = chunk.len() / 2;
            chunk[i] ^= 0x10;
            chunk
        }
        "zlib" => {
            let mut raw = miniz_oxide::inflate::decompress_to_vec_zlib(&chunk).unwrap();
            let i = raw.len() / 2;
            raw[i] ^= 0x10;
            miniz_oxide::deflate::compress_to_vec_zlib(&raw, 6)
        }
        "zstd" => {
            let mut raw = shardfetch::core::zstd::unzstd(&chunk, 1 << 30).unwrap();
            let i = raw.len() / 2;
            raw[i] ^= 0x10;
            // A single-segment frame (4-byte content size), raw blocks of at most 128 KiB.
            let mut out = vec![0x28, 0xb5, 0x2f, 0xfd, 0xa0];
            out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
            let pieces: Vec<&[u8]> = raw.chunks(128 << 10).collect();
            for (k, piece) in pieces.iter().enumerate() {
                let header = u32::from(k + 1 == pieces.len()) | ((piece.len() as u32) << 3);
                out.extend_from_slice(&header.to_le_bytes()[..3]);
                out.extend_from_slice(piece);
            }
            out
        }
        "blosc" => {
            let mut raw = shardfetch::core::codec::blosc::decode(&chunk, 1 << 30).unwrap();
            let i = raw.len() / 2;
            raw[i] ^= 0x10;
            let n = raw.len() as u32;
            let mut out = vec![2, 1, 0x02, 1]; // version, versionlz, MEMCPYED, typesize 1
            for v in [n, n, n + 16] {
                out.extend_from_slice(&v.to_le_bytes()); // nbytes, blocksize, cbytes
            }
            out.extend_from_slice(&raw);
            out
        }
        "lz4" => {
            // numcodecs' LZ4: the decoded size (u32), then one block; its first sequence opens with
            // literals, copied to the output as they are.
            let token = chunk[4];
            assert!(token >> 4 > 0, "an LZ4 block without a first literal");
            let first_literal =
                5 + if token >> 4 == 15 { chunk[5..].iter().position(|&b| b != 255).unwrap() + 1 } else { 0 };
            chunk[first_literal] ^= 0x10;
            chunk
        }
        other => panic!("no way to flip a byte under a checksum through {other}"),
    }
}

/// In a shard (index at its end, crc32c over the index), its first stored chunk, corrupted by
/// `f` in place (the same length: the index stays true).
fn corrupt_first_chunk_of_shard(mut shard: Vec<u8>, chunks: usize, f: impl Fn(Vec<u8>) -> Vec<u8>) -> Vec<u8> {
    let index = shard.len() - chunks * 16 - 4;
    let entry = (0..chunks)
        .map(|k| {
            let e = &shard[index + k * 16..index + k * 16 + 16];
            (u64::from_le_bytes(e[..8].try_into().unwrap()), u64::from_le_bytes(e[8..].try_into().unwrap()))
        })
        .find(|&(offset, _)| offset != u64::MAX)
        .expect("a stored chunk in the shard");
    let (at, n) = (entry.0 as usize, entry.1 as usize);
    let corrupted = f(shard[at..at + n].to_vec());
    assert_eq!(corrupted.len(), n, "a chunk corrupted in its shard keeps its length");
    shard[at..at + n].copy_from_slice(&corrupted);
    shard
}

/// A flipped byte under the checksum of every checksummed numcodecs case (under its compressor
/// where the compressor wraps the checksum, see `flip_under_checksum`): ChecksumMismatch, never
/// data or another error; the other chunks still read.
#[test]
fn checksummed_filter_chunks_with_a_flipped_byte_are_errors() {
    let sums = ["crc32", "adler32", "crc32c", "fletcher32", "jenkins_lookup3"];
    let cases: Vec<Case> = manifest()
        .0
        .into_iter()
        .filter(|k| k.path.starts_with("filters/") && sums.iter().any(|s| k.features.iter().any(|f| f.ends_with(s))))
        .collect();
    assert!(cases.len() >= 8, "{} checksummed cases", cases.len());
    let mut wrapped = std::collections::BTreeSet::new();
    for k in &cases {
        let dir = root().join("data").join(&k.path);
        let v3 = dir.join("zarr.json").exists();
        let first = if v3 { "c/0/0" } else { "0.0" };
        let outer = outermost_codec(&dir);
        wrapped.insert(outer.clone());
        // Inner chunks per shard (the first shard holds the first chunk).
        let per_shard: Option<usize> = k
            .shard_shape
            .as_ref()
            .map(|s| s.iter().zip(k.chunk_shape.as_ref().unwrap()).map(|(s, c)| (s / c) as usize).product());
        let flip: Patch = Box::new(move |p, b| {
            if !p.ends_with(&format!("/{first}")) {
                return b;
            }
            match per_shard {
                Some(n) => corrupt_first_chunk_of_shard(b, n, |chunk| flip_under_checksum(&outer, chunk)),
                None => flip_under_checksum(&outer, b),
            }
        });
        let c = patched(flip);
        let a = open_array(&c, &k.path, Config::default()).unwrap();
        // The whole of the first storage object (a shard holds several chunks).
        let first_object: Vec<Sel> = match &k.shard_shape {
            Some(s) => s.iter().map(|&n| Sel::Range(0, n)).collect(),
            None => k.chunk_shape.as_ref().unwrap().iter().map(|&n| Sel::Range(0, n)).collect(),
        };
        let e = block_on(read_region(&a, &c, &first_object)).expect_err(&k.name);
        assert_eq!(e.code, ErrorCode::ChecksumMismatch, "{}: {e}", k.name);
        assert!(e.message.contains(&format!("{}/{first}", k.path)), "{}: {e}", k.name);
        let chunk = k.chunk_shape.as_ref().unwrap();
        let last: Vec<u64> = k.shape.iter().zip(chunk).map(|(s, c)| s.div_ceil(*c) - 1).collect();
        let got = block_on(read_chunk(&a, &c, &last))
            .unwrap_or_else(|e| panic!("{}: the last chunk after a corrupt first: {e}", k.name));
        let expected = std::fs::read(root().join(&k.expected)).unwrap();
        writers_chunk(k, &a, &expected, &last, &got).unwrap();
    }
    // Checksums as the outermost codec and under each kind of compressor the fixtures have.
    let want = ["blosc", "lz4", "zlib", "zstd"];
    assert!(want.iter().all(|w| wrapped.contains(*w)), "outermost codecs: {wrapped:?}");
}

#[test]
fn metadata_errors_are_typed() {
    let patch = |text: &'static str| -> Patch {
        Box::new(move |p, b| if p.ends_with("zarr.json") { text.as_bytes().to_vec() } else { b })
    };
    for (text, code) in [
        ("{not json", ErrorCode::InvalidMetadata),
        (r#"{"zarr_format":2}"#, ErrorCode::InvalidMetadata),
        (
            r#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},"fill_value":0,"codecs":[{"name":"bytes"},{"name":"lz5"}]}"#,
            ErrorCode::UnsupportedCodec,
        ),
        (
            r#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"int128","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},"fill_value":0,"codecs":[{"name":"bytes"}]}"#,
            ErrorCode::UnsupportedDataType,
        ),
        (
            r#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[0]}},"fill_value":0,"codecs":[{"name":"bytes"}]}"#,
            ErrorCode::InvalidMetadata,
        ),
        (
            r#"{"zarr_format":3,"node_type":"array","shape":[4e9,4e9],"data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4000000000,4000000000]}},"fill_value":0,"codecs":[{"name":"bytes"}]}"#,
            ErrorCode::InvalidMetadata,
        ),
        (
            r#"{"zarr_format":3,"node_type":"array","shape":[4000000000,4000000000],"data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4000000000,4000000000]}},"fill_value":0,"codecs":[{"name":"bytes"}]}"#,
            ErrorCode::TooLarge,
        ),
    ] {
        let c = patched(patch(text));
        let e = block_on(open(&c, &format!("{BASE}/data/zp/shard_gzip_end"), with(Config::default()))).err().unwrap();
        assert_eq!(e.code, code, "{text}: {e}");
        assert!(e.message.contains("zp/shard_gzip_end/zarr.json"), "{}", e.message);
    }
    let e =
        block_on(open(&fixtures(Serve::Honest), &format!("{BASE}/data/nowhere"), with(Config::default()))).err().unwrap();
    assert_eq!(e.code, ErrorCode::NotFound);
}

/// Fill values as written, whatever a double holds: 64-bit integers past 2^53 and a float32
/// `0.1` rounded once, to f32; attributes kept as their text.
#[test]
fn fill_values_are_exact() {
    let cases: [(&str, &str, Vec<u8>, Scalar); 5] = [
        ("int64", "9007199254740993", 9007199254740993i64.to_le_bytes().to_vec(), Scalar::Int(9007199254740993)),
        ("int64", "-9223372036854775808", i64::MIN.to_le_bytes().to_vec(), Scalar::Int(i64::MIN)),
        ("uint64", "18446744073709551615", u64::MAX.to_le_bytes().to_vec(), Scalar::UInt(u64::MAX)),
        ("float32", "0.1", 0.1f32.to_le_bytes().to_vec(), Scalar::Float(f64::from(0.1f32))),
        ("float64", "0.1", 0.1f64.to_le_bytes().to_vec(), Scalar::Float(0.1)),
    ];
    for (dtype, fill, bytes, value) in cases {
        let text = format!(
            r#"{{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"{dtype}","fill_value":{fill},
            "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":[2]}}}},"codecs":[{{"name":"bytes"}}],
            "attributes": {{"n": 9223372036854775807, "x": 0.10}} }}"#
        );
        let patch: Patch = Box::new(move |p, b| if p.ends_with("zarr.json") { text.clone().into_bytes() } else { b });
        let c = patched(patch);
        let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
        let f = &a.metadata().fill_value;
        assert_eq!((&f.bytes, f.value), (&bytes, value), "{dtype} {fill}");
        assert_eq!(a.metadata().attributes.as_str(), r#"{"n": 9223372036854775807, "x": 0.10}"#);
        // No chunk there: the fill.
        let chunk = block_on(read_chunk(&a, &c, &[1])).unwrap();
        assert_eq!(chunk.bytes, bytes.repeat(2), "{dtype} {fill}");
    }
}

#[test]
fn selections_out_of_bounds_are_errors() {
    let c = fixtures(Serve::Honest);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    assert_eq!(block_on(read_chunk(&a, &c, &[99, 0])).unwrap_err().code, ErrorCode::InvalidSelection);
    assert_eq!(block_on(read_chunk(&a, &c, &[0])).unwrap_err().code, ErrorCode::InvalidSelection);
    assert_eq!(
        block_on(read_region(&a, &c, &[Sel::Range(0, 1000), Sel::All])).unwrap_err().code,
        ErrorCode::InvalidSelection
    );
    let empty = block_on(read_region(&a, &c, &[Sel::Range(3, 3), Sel::All])).unwrap();
    assert_eq!(empty.shape[0], 0);
}

/// Random corruption of every file of sharded arrays: errors are fine, panics are not.
#[test]
fn random_corruption_never_panics() {
    // Every case of every format, corrupted several ways each.
    let cases = manifest().0;
    let mut seed = 0x2545f4914f6cdd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut errors = 0;
    let rounds = 6 * cases.len();
    for round in 0..rounds {
        let k = &cases[round % cases.len()];
        let (r1, r2, r3) = (next(), next(), next());
        // Mostly chunk and shard bytes (what the decoders see); every fourth round metadata too.
        let meta_too = round % 4 == 0;
        let patch: Patch = Box::new(move |rel, mut b| {
            let name = rel.rsplit('/').next().unwrap_or("");
            let meta = name.ends_with(".json") || name.starts_with(".z") || name == "info";
            if !b.is_empty() && (meta_too || !meta) {
                for k in 0..(r3 % 4 + 1) {
                    let i = ((r1.wrapping_add(k * 7919)) % b.len() as u64) as usize;
                    b[i] ^= (r2 >> (8 * k)) as u8 | 1;
                }
                if r3 % 7 == 0 {
                    b.truncate((r1 % b.len() as u64) as usize);
                }
            }
            b
        });
        let c = patched(patch);
        match block_on(open(&c, &format!("{BASE}/data/{}", k.path), k.options())) {
            Ok(Opened::Array(a)) => {
                let all = vec![Sel::All; a.metadata().shape.len()];
                if block_on(read_region(&a, &c, &all)).is_err() {
                    errors += 1;
                }
            }
            Ok(Opened::Group(_)) => {}
            Err(_) => errors += 1,
        }
    }
    eprintln!("corruption: {errors} of {rounds} reads failed with a typed error");
    assert!(errors > rounds / 6, "corruption should mostly be detected: {errors} of {rounds}");
}

/// A server whose Content-Range lies must give an error, not a panic or wrong data.
#[test]
fn lying_content_range_is_corrupt() {
    // Every partial answer claims the last byte of a 2^64-byte object.
    let liar = ObjectServer::new().with_hook(|s, req| {
        let mut r = s.answer(req);
        if r.status == 206 {
            r.content_range = Some(format!("bytes {}-{}/{}", u64::MAX, u64::MAX, u64::MAX));
            r.content_length = None;
        }
        Some(Ok(r))
    });
    liar.put("mem://x/a/zarr.json", std::fs::read(root().join("data/zp/shard_gzip_end/zarr.json")).unwrap());
    liar.put("mem://x/a/c/0/0", vec![0; 16 * 16 + 4]);
    let a = match block_on(open(&liar, "mem://x/a", with(Config::default()))).unwrap() {
        Opened::Array(a) => *a,
        _ => unreachable!(),
    };
    assert_eq!(block_on(read_chunk(&a, &liar, &[0, 0])).unwrap_err().code, ErrorCode::CorruptShard);
}

/// A region covering whole shards: one index request and one data request per shard, however
/// the writer ordered the chunks (tensorstore: C order after a start index; zarr-python:
/// Morton order before an end index).
/// A region covering a whole shard not seen before is one plain GET (no Range: no CORS
/// preflight, no index round trip); once its index is known, one ranged read.
#[test]
fn a_region_of_one_shard_is_one_request() {
    for (path, shard) in [("ts/shard_start_nocrc", 32u64), ("zp/shard_gzip_end", 64)] {
        let c = fixtures(Serve::Honest);
        let a = open_array(&c, path, Config::default()).unwrap();
        c.reset();
        let all = [Sel::Range(0, shard), Sel::Range(0, shard)];
        let cold = block_on(read_region(&a, &c, &all)).unwrap();
        let log = c.log();
        assert_eq!(log.len(), 1, "{path}: {log:?}");
        assert!(log[0].url.ends_with("/c/0/0") && log[0].range.is_none(), "{path}: {log:?}");
        // Warm: the index is cached, the data is one ranged request.
        c.reset();
        let b = open_array(&c, path, Config::default()).unwrap();
        block_on(read_chunk(&b, &c, &[0, 0])).unwrap();
        c.reset();
        assert_eq!(block_on(read_region(&b, &c, &all)).unwrap(), cold);
        assert_eq!(c.requests(), 1, "{path} warm: {:?}", c.log());
        assert!(c.log()[0].range.is_some());
        let st = b.stats().store;
        assert_eq!(st.merged_requests, 1, "{path}: {st:?}");
        assert!(st.spans > 1, "{path}: {st:?}");
    }
}

/// Chunks asked for together share requests too, each with its own result; a tiny merge gap
/// splits them again.
#[test]
fn chunks_asked_together_share_requests() {
    let k = case("zp_shard_gzip_end");
    let c = fixtures(Serve::Honest);
    let a = open_array(&c, &k.path, Config::default()).unwrap();
    // Every chunk of shard (0, 0) but one (all of them would be one whole-object GET).
    let list: Vec<Vec<u64>> =
        (0..4).flat_map(|y| (0..4).map(move |x| vec![y, x])).skip(1).chain([vec![99, 0]]).collect();
    c.reset();
    let mut got: Vec<Option<Result<_>>> = list.iter().map(|_| None).collect();
    block_on(chunks(&a, &c, &list, |i, r| got[i] = Some(r)));
    let got: Vec<Result<_>> = got.into_iter().map(Option::unwrap).collect();
    assert_eq!(c.requests(), 2, "index + one merged read: {:?}", c.log());
    assert_eq!(got.last().unwrap().as_ref().unwrap_err().code, ErrorCode::InvalidSelection);
    for (coords, r) in list.iter().zip(&got).take(15) {
        let one = block_on(read_chunk(&a, &c, coords)).unwrap();
        assert_eq!(r.as_ref().unwrap(), &one, "chunk {coords:?} read alone and together differ");
    }
    let split = Config { merge_gap: 0, merge_max: 1, ..Config::default() };
    let a = open_array(&c, &k.path, split).unwrap();
    c.reset();
    block_on(chunks(&a, &c, &list, |_, _| {}));
    let present = got.iter().take(15).count();
    assert!(c.requests() > 2 && c.requests() <= present + 1, "{}", c.requests());
}

/// A merged read's gap bytes are kept: the chunk that lay in the gap is then free.
#[test]
fn a_chunk_inside_a_merged_gap_needs_no_request() {
    // Shard c/0/0 of zp_shard_gzip_end: 4x4 inner chunks, index (+crc32c) at the end.
    let file = std::fs::read(root().join("data/zp/shard_gzip_end/c/0/0")).unwrap();
    let index = &file[file.len() - (16 * 16 + 4)..];
    let mut present: Vec<(u64, u64)> = (0..16u64)
        .filter_map(|i| {
            let e = &index[i as usize * 16..i as usize * 16 + 16];
            let offset = u64::from_le_bytes(e[..8].try_into().unwrap());
            (offset != u64::MAX).then_some((offset, i))
        })
        .collect();
    present.sort();
    let coords = |i: u64| vec![i / 4, i % 4];
    let (first, middle, last) = (present[0].1, present[1].1, present[2].1);
    let c = fixtures(Serve::Honest);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    c.reset();
    let (case, expected) = writers_case("zp_shard_gzip_end");
    let pair = [coords(first), coords(last)];
    block_on(chunks(&a, &c, &pair, |i, r| writers_chunk(&case, &a, &expected, &pair[i], &r.unwrap()).unwrap()));
    assert_eq!(c.requests(), 2, "index + one merged read: {:?}", c.log());
    c.reset();
    let alone = block_on(read_chunk(&a, &c, &coords(middle))).unwrap();
    assert_eq!(c.requests(), 0, "the middle chunk was in the gap: {:?}", c.log());
    writers_chunk(&case, &a, &expected, &coords(middle), &alone).unwrap();
}

/// Chunks asked while a merged read that holds some of them is under way: those wait for it,
/// only the rest is requested — no byte is sent twice.
#[test]
fn chunks_inside_a_read_under_way_are_not_read_again() {
    let file = std::fs::read(root().join("data/zp/shard_gzip_end/c/0/0")).unwrap();
    let index = &file[file.len() - (16 * 16 + 4)..];
    let mut present: Vec<(u64, u64, u64)> = (0..16u64)
        .filter_map(|i| {
            let e = &index[i as usize * 16..i as usize * 16 + 16];
            let offset = u64::from_le_bytes(e[..8].try_into().unwrap());
            let len = u64::from_le_bytes(e[8..].try_into().unwrap());
            (offset != u64::MAX).then_some((offset, len, i))
        })
        .collect();
    present.sort();
    assert!(present.len() >= 4);
    let coords = |k: usize| vec![present[k].2 / 4, present[k].2 % 4];
    let c = fixtures(Serve::Honest);
    let (case, expected) = writers_case("zp_shard_gzip_end");
    let writers = |a: &Array, k: usize, got: &Chunk| {
        writers_chunk(&case, a, &expected, &coords(k), got).unwrap_or_else(|e| panic!("chunk {k}: {e}"))
    };
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    block_on(read_chunk(&a, &c, &coords(present.len() - 1))).unwrap(); // the index, and nothing kept below
    c.reset();
    c.yields.set(1);
    let mut first = [None, None];
    let mut second = [None, None];
    block_on(futures_util::future::join(
        // Chunks 0 and 2: one read, chunk 1 in its gap.
        chunks(&a, &c, &[coords(0), coords(2)], |i, r| first[i] = Some(r.unwrap())),
        // Meanwhile chunks 1 and 3: 1 is inside that read, 3 is not.
        chunks(&a, &c, &[coords(1), coords(3)], |i, r| second[i] = Some(r.unwrap())),
    ));
    for (k, got) in [&first[0], &second[0], &first[1], &second[1]].into_iter().enumerate() {
        writers(&a, k, got.as_ref().unwrap_or_else(|| panic!("chunk {k} not read")));
    }
    let ranges = sent_ranges(&c);
    let sent: u64 = ranges.iter().map(|(a, b)| b - a + 1).sum();
    let (lo, hi) = (ranges.iter().map(|r| r.0).min().unwrap(), ranges.iter().map(|r| r.1).max().unwrap());
    assert_eq!(sent, hi - lo + 1, "bytes sent twice: {ranges:?}");
    assert_eq!(ranges.len(), 2, "{ranges:?}");

    // Chunk 1 under way, then 0 and 2: their merged read would carry 1 again in its gap.
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    block_on(read_chunk(&a, &c, &coords(present.len() - 1))).unwrap();
    c.reset();
    let mut got = [None, None, None];
    let (one, two) = got.split_at_mut(1);
    block_on(futures_util::future::join(
        chunks(&a, &c, &[coords(1)], |_, r| one[0] = Some(r.unwrap())),
        chunks(&a, &c, &[coords(0), coords(2)], |i, r| two[i] = Some(r.unwrap())),
    ));
    for (k, got) in [&got[1], &got[0], &got[2]].into_iter().enumerate() {
        writers(&a, k, got.as_ref().unwrap_or_else(|| panic!("chunk {k} not read")));
    }
    let ranges = sent_ranges(&c);
    let sent: u64 = ranges.iter().map(|(a, b)| b - a + 1).sum();
    assert_eq!(sent, present[2].0 + present[2].1 - present[0].0, "bytes sent twice: {ranges:?}");
}

/// Chunks read together, each handed to `each` decoded (its fill when absent).
async fn chunks<C: HttpClient>(a: &Array, c: &C, list: &[Vec<u64>], mut each: impl FnMut(usize, Result<Chunk>)) {
    let plan = a.plan(Want::Chunks(list)).unwrap();
    a.read(c, &plan, true, |i, got| {
        each(
            i,
            got.and_then(|g| match g {
                Got::Decoded(d) => Ok(a.chunk_of(&list[i], d)),
                _ => a.fill_chunk(&list[i]),
            }),
        );
        Ok(())
    })
    .await
    .unwrap();
}

/// The `bytes=a-b` ranges a server was asked for.
fn sent_ranges(c: &ObjectServer) -> Vec<(u64, u64)> {
    c.log().iter().filter_map(|r| r.span()).collect()
}


/// PCodec is an external decoder: such an array opens and names it among the decoders it
/// needs; without decoders a chunk is UnsupportedCodec naming it, with the linked ones it reads.
#[test]
fn pcodec_is_an_external_decoder() {
    let c = fixtures(Serve::Honest);
    let a = open_array(&c, "filters/v3_pcodec_i2", Config::default()).unwrap();
    assert_eq!(a.decoders(), vec!["pcodec"]);
    let zero = vec![0u64; a.metadata().shape.len()];
    let without = a.with_decoders(None);
    let e = block_on(read_chunk(&without, &c, &zero)).unwrap_err();
    assert_eq!(e.code, ErrorCode::UnsupportedCodec, "{e}");
    assert!(e.message.contains("pcodec"), "{e}");
}

/// Neuroglancer precomputed `jxl` (cloud-volume, lossless): read through the external `jxl`
/// decoder, the writer's values.
#[test]
fn jxl_reads_through_its_external_decoder() {
    let c = fixtures(Serve::Honest);
    let k = case("cv_jxl_u8");
    let Ok(Opened::Array(a)) = block_on(open(&c, &format!("{BASE}/data/{}", k.path), k.options())) else {
        panic!("open")
    };
    assert_eq!(a.decoders(), vec!["jxl"]);
    let got = block_on(read_region(&a, &c, &vec![Sel::All; a.metadata().shape.len()])).unwrap();
    let want = std::fs::read(root().join(&k.expected)).unwrap();
    assert_eq!(got.bytes.len(), want.len());
    // The expected values in C order of the region's shape, walked through its strides.
    let strides = &got.stride;
    let shape = &got.shape;
    let mut idx = vec![0u64; shape.len()];
    for w in &want {
        let at: u64 = idx.iter().zip(strides).map(|(i, s)| i * s).sum();
        assert_eq!(got.bytes[at as usize], *w, "at {idx:?}");
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}
