//! Bilevel fax TIFFs (compressions 2, 3, 4; FillOrder 1 and 2; strips and tiles) by libtiff,
//! Pillow and ImageMagick, and old-style LZW, against libtiff's values
//! (`manifest-tiff-fax.json`, by `tests/fixtures/generate_tiff_fax.py`); damaged streams as
//! typed chunk errors naming the file, never a panic; what is not read, refused by name.
#![cfg(not(target_arch = "wasm32"))]
mod common;

use common::fixture_files;
use futures_executor::block_on;
use serde_json::Value;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::Sel;
use shardfetch::core::read::{read_chunk, read_region};
use shardfetch::core::transport::memory::ObjectServer;
use shardfetch::core::{Error, ErrorCode};

const BASE: &str = "mem://fixtures";

fn fixtures() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn manifest() -> Value {
    serde_json::from_slice(&std::fs::read(fixtures().join("manifest-tiff-fax.json")).unwrap()).unwrap()
}

fn file(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join("data/tiff-fax").join(name)).unwrap()
}

/// Every fixture, whole, is libtiff's values; the fax files hold the uncompressed page's.
#[test]
fn every_fixture_reads_libtiffs_values() {
    let s = fixture_files(BASE, None);
    let (mut fax, mut old_lzw) = (0, 0);
    let page = std::fs::read(
        fixtures().join(
            manifest()["cases"].as_array().unwrap().iter().find(|c| c["name"] == "tf_page_none").unwrap()["expected"]
                .as_str()
                .unwrap(),
        ),
    )
    .unwrap();
    for c in manifest()["cases"].as_array().unwrap() {
        let url = format!("{BASE}/data/{}", c["path"].as_str().unwrap());
        let Opened::Array(a) = block_on(open(&s, &url, OpenOptions::default())).unwrap() else { panic!("{url}") };
        let shape: Vec<u64> = c["shape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        assert_eq!(a.metadata().shape, shape, "{url}");
        let got = block_on(read_region(&a, &s, &[Sel::All, Sel::All])).unwrap_or_else(|e| panic!("{url}: {e}"));
        let want = std::fs::read(fixtures().join(c["expected"].as_str().unwrap())).unwrap();
        let diff = got.bytes.iter().zip(&want).filter(|(g, w)| g != w).count();
        assert!(got.bytes.len() == want.len() && diff == 0, "{url}: {diff} pixels differ of {}", want.len());
        let features = c["features"].to_string();
        if features.contains("compression_ccitt") {
            assert_eq!(got.bytes, page, "{url}: the page's bits");
            fax += 1;
        }
        old_lzw += usize::from(features.contains("compression_lzw_old"));
    }
    assert_eq!((fax, old_lzw), (19, 2));
}

/// The first directory's entry of `tag` in a classic little-endian TIFF: its position.
fn entry(b: &[u8], tag: u16) -> usize {
    let ifd = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
    let n = u16::from_le_bytes(b[ifd..ifd + 2].try_into().unwrap()) as usize;
    (0..n).map(|k| ifd + 2 + 12 * k).find(|&e| u16::from_le_bytes(b[e..e + 2].try_into().unwrap()) == tag).unwrap()
}

/// The inline value of a one-value SHORT or LONG entry.
fn inline(b: &[u8], tag: u16) -> u32 {
    let e = entry(b, tag);
    match u16::from_le_bytes(b[e + 2..e + 4].try_into().unwrap()) {
        3 => u16::from_le_bytes(b[e + 8..e + 10].try_into().unwrap()) as u32,
        _ => u32::from_le_bytes(b[e + 8..e + 12].try_into().unwrap()),
    }
}

/// `b` with the inline value of a one-value entry set to `v` (as a LONG).
fn set(b: &[u8], tag: u16, v: u32) -> Vec<u8> {
    let mut b = b.to_vec();
    let e = entry(&b, tag);
    b[e + 2..e + 4].copy_from_slice(&4u16.to_le_bytes());
    b[e + 8..e + 12].copy_from_slice(&v.to_le_bytes());
    b
}

const URL: &str = "https://h/damaged.tif";

/// Chunk [0, 0] of a TIFF of `bytes`.
fn first_chunk(bytes: Vec<u8>) -> Result<Vec<u8>, Error> {
    let s = ObjectServer::new();
    s.put(URL, bytes);
    let Opened::Array(a) = block_on(open(&s, URL, OpenOptions::default()))? else { panic!("an array") };
    block_on(read_chunk(&a, &s, &[0, 0])).map(|c| c.bytes)
}

fn corrupt_chunk(what: &str, r: Result<Vec<u8>, Error>) -> bool {
    match r {
        Ok(_) => false,
        Err(e) => {
            assert_eq!(e.code, ErrorCode::CorruptChunk, "{what}: {e}");
            assert!(e.message.contains(URL), "{what}: {e}");
            true
        }
    }
}

/// One-strip files (G4, G3 2-D with fill bits, modified Huffman, Group 3 1-D; FillOrder 2 among
/// them) and old-style LZW, cut at every byte and with bits flipped: some pixels or a
/// CorruptChunk naming the file, never a panic; cut before the stream's last few bytes (a
/// Group 4 EOFB, an LZW EndOfInformation), always CorruptChunk.
#[test]
fn damaged_streams_are_corrupt_chunks_naming_the_file() {
    for (name, tail) in [
        ("lt_g4_lsb.tif", 4),
        ("lt_g3_2d_fill.tif", 0),
        ("pil_ccitt_rle.tif", 0),
        ("im_fax.tif", 0),
        ("pil_group4.tif", 4),
        ("old_lzw_noise.tif", 0),
    ] {
        let good = file(name);
        let (at, len) = (inline(&good, 273) as usize, inline(&good, 279));
        assert!(first_chunk(good.clone()).is_ok(), "{name}");
        // Cuts (0 bytes: a strip not written, the fill value): G3 and MH rows end where their last
        // code does (trailing EOLs or RTC may go).
        let mut refused = 0;
        for cut in (1..len).filter(|c| c % 5 == 0 || c + 40 > len) {
            let what = format!("{name} cut to {cut} of {len} bytes");
            let r = first_chunk(set(&good, 279, cut));
            let bad = corrupt_chunk(&what, r);
            refused += usize::from(bad);
            assert!(bad || cut + 4 + tail > len, "{what}: read");
        }
        assert!(refused as u32 * 5 + 60 >= len, "{name}: {refused} of {len} cuts refused");
        // Flipped bits: every bit of the first 24 bytes, every 31st after.
        let mut flipped = 0;
        for bit in (0..len as usize * 8).filter(|b| *b < 192 || b % 31 == 0) {
            let mut b = good.clone();
            b[at + bit / 8] ^= 0x80 >> (bit % 8);
            flipped += usize::from(corrupt_chunk(&format!("{name} bit {bit} flipped"), first_chunk(b)));
        }
        assert!(flipped > 0, "{name}: no flip refused");
    }
}

/// What is not read is refused when the image is opened, naming the tag and its value: fax of
/// 8-bit samples, T4Options or T6Options bits no standard defines, FillOrder 3.
#[test]
fn fax_that_is_not_read_is_unsupported_naming_the_tag() {
    let g3 = file("lt_g3_2d.tif");
    let g4 = file("lt_g4_lsb.tif");
    for (what, bytes, says) in [
        // (tiffcp writes no BitsPerSample of 1: Orientation's entry made one of 8.)
        ("8-bit samples", retag(&g4, 274, 258, 8), "Compression 4 (CCITT fax) of 1 8-bit samples"),
        ("T4Options 9", set(&g3, 292, 9), "T4Options 9"),
        // (FillOrder's entry made a T6Options of bit 0.)
        ("T6Options 1", retag(&g4, 266, 293, 1), "T6Options 1"),
        ("FillOrder 3", set(&g4, 266, 3), "FillOrder 3"),
        // FillOrder 2 of anything but fax (libtiff would reverse each byte's bits first).
        ("uncompressed FillOrder 2", set(&g4, 259, 1), "FillOrder 2 of Compression 1"),
    ] {
        let s = ObjectServer::new();
        s.put(URL, bytes);
        let e = block_on(open(&s, URL, OpenOptions::default())).map(drop).expect_err(what);
        assert_eq!(e.code, ErrorCode::UnsupportedFormat, "{what}: {e}");
        assert!(e.message.contains(says) && e.message.contains(URL), "{what}: {e}");
    }
}

/// `b` with the entry of `tag` made one of `to`, its value `v` (LONG).
fn retag(b: &[u8], tag: u16, to: u16, v: u32) -> Vec<u8> {
    let mut b = set(b, tag, v);
    let e = entry(&b, tag);
    b[e..e + 2].copy_from_slice(&to.to_le_bytes());
    b
}
