//! The TIFF encodings of issue 44, once refused or decoded wrong (`manifest-tiff-classes.json`,
//! by `generate_tiff_classes.py`; every case is also read by the shared fixture suites): float
//! predictor with several samples, horizontal predictor on floats, JPEG of RGB and RGBA,
//! GDAL_NODATA spellings, last strips stored past the image; and what stays refused, typed.
#![cfg(not(target_arch = "wasm32"))]
mod common;

use common::{check_case, fixture_files, parse_manifest, Case};
use futures_executor::block_on;
use serde_json::Value;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::read_chunk;
use shardfetch::core::transport::memory::ObjectServer;
use shardfetch::core::ErrorCode;

const BASE: &str = "mem://fixtures";

fn manifest() -> Value {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/manifest-tiff-classes.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn cases() -> Vec<Case> {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/manifest-tiff-classes.json");
    parse_manifest(&std::fs::read(p).unwrap()).0
}

fn file(name: &str) -> Vec<u8> {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/data/tiff-classes").join(name);
    std::fs::read(p).unwrap()
}

/// Every case whose name starts with one of `prefixes` (`n` of them) reads as its second
/// reader read it: metadata, fill value, every chunk, regions.
fn class(prefixes: &[&str], n: usize) {
    let s = fixture_files(BASE, None);
    let picked: Vec<Case> = cases().into_iter().filter(|c| prefixes.iter().any(|p| c.name.starts_with(p))).collect();
    assert_eq!(picked.len(), n, "{prefixes:?}");
    let failures: Vec<String> = picked.iter().filter_map(|k| block_on(check_case(&s, BASE, k)).err()).collect();
    assert!(failures.is_empty(), "{} of {n} failed:\n{}", failures.len(), failures.join("\n"));
}

/// Predictor 3 with 2, 3 and 4 samples a pixel, chunky and planar, float16, float32 and
/// float64, as GDAL and tifffile read them (the chunky case once came back wrong, unrefused).
#[test]
fn float_predictor_with_several_samples_is_gdals() {
    class(&["tf_fpred_", "gd_fpred_"], 9);
}

/// Predictor 2 on float16, float32 and float64 (libtiff's tiffcp): integer differences of
/// their bits, as libtiff (GDAL) and tifffile undo them.
#[test]
fn horizontal_predictor_on_floats_is_libtiffs() {
    class(&["cp_hpred_"], 3);
}

/// JPEG of Photometric RGB (3 components, no YCbCr transform), RGB + alpha (4), strips, planar:
/// GDAL's decoding within the manifest's tolerance.
#[test]
fn jpeg_of_rgb_and_rgba_is_gdals() {
    class(&["gd_jpeg_"], 4);
}

/// A last strip stored at full RowsPerStrip height (hand-patched files) is cropped to the
/// image's rows, for every compression, as GDAL reads it.
#[test]
fn a_long_last_strip_is_cropped() {
    class(&["tf_longstrip_", "gd_longstrip_"], 7);
}

/// GDAL_NODATA as GDAL reads it: the fill value (checked by `class`) and the `nodata`
/// attribute, GDAL's value, also where no sample can hold it (300 for uint8).
#[test]
fn gdal_nodata_spellings_are_read_as_gdal_reads_them() {
    class(&["tf_nodata_"], 8);
    let s = fixture_files(BASE, None);
    let mut checked = 0;
    for c in manifest()["cases"].as_array().unwrap().iter().filter(|c| c.get("gdalNodata").is_some()) {
        let url = format!("{BASE}/data/{}", c["path"].as_str().unwrap());
        let Opened::Array(a) = block_on(open(&s, &url, OpenOptions::default())).unwrap() else { panic!("{url}") };
        let attrs: Value = serde_json::from_str(a.metadata().attributes.as_str()).unwrap();
        let got = &attrs["geotiff"]["nodata"];
        let want: f64 = c["gdalNodata"]["value"].as_str().unwrap().parse().unwrap();
        let got = match got {
            Value::String(t) if t == "NaN" => f64::NAN,
            Value::String(t) if t == "Infinity" => f64::INFINITY,
            Value::String(t) if t == "-Infinity" => f64::NEG_INFINITY,
            v => v.as_f64().unwrap_or_else(|| panic!("{url}: nodata {v}")),
        };
        assert!(got == want || (got.is_nan() && want.is_nan()), "{url}: nodata {got}, GDAL's {want}");
        checked += 1;
    }
    assert_eq!(checked, 8);
}

fn le_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// The entry of `tag` in the first directory of a classic little-endian TIFF: its position.
fn entry(b: &[u8], tag: u16) -> usize {
    let ifd = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
    let n = u16::from_le_bytes(b[ifd..ifd + 2].try_into().unwrap()) as usize;
    (0..n).map(|k| ifd + 2 + 12 * k).find(|&e| u16::from_le_bytes(b[e..e + 2].try_into().unwrap()) == tag).unwrap()
}

/// `b` with the one SHORT or LONG value of `tag` (inline) set to `v`.
fn with_short(b: &[u8], tag: u16, v: u16) -> Vec<u8> {
    let mut b = b.to_vec();
    let e = entry(&b, tag);
    match u16::from_le_bytes(b[e + 2..e + 4].try_into().unwrap()) {
        3 => b[e + 8..e + 10].copy_from_slice(&v.to_le_bytes()),
        4 => le_u32(&mut b, e + 8, v.into()),
        t => panic!("tag {tag} of type {t}"),
    }
    b
}

/// `b` with the LONG or SHORT value `k` of `tag` (values elsewhere in the file) set to `v`.
fn with_value(b: &[u8], tag: u16, k: usize, v: u32) -> Vec<u8> {
    let mut b = b.to_vec();
    let e = entry(&b, tag);
    let typ = u16::from_le_bytes(b[e + 2..e + 4].try_into().unwrap());
    let at = u32::from_le_bytes(b[e + 8..e + 12].try_into().unwrap()) as usize;
    match typ {
        3 => b[at + 2 * k..at + 2 * k + 2].copy_from_slice(&(v as u16).to_le_bytes()),
        _ => le_u32(&mut b, at + 4 * k, v),
    }
    b
}

/// Opening `bytes` and reading each of `chunks`: the first error.
fn first_error(bytes: Vec<u8>, url: &str, chunks: &[&[u64]]) -> shardfetch::core::Error {
    let s = ObjectServer::new();
    s.put(url, bytes);
    let a = match block_on(open(&s, url, OpenOptions::default())) {
        Ok(Opened::Array(a)) => a,
        Ok(_) => panic!("{url}: a group"),
        Err(e) => return e,
    };
    chunks.iter().find_map(|c| block_on(read_chunk(&a, &s, c)).err()).unwrap_or_else(|| panic!("{url}: no error"))
}

/// What stays unread is a typed error naming the file (and the tag and value where refused):
/// a strip short of its rows (libtiff refuses it too: "Read error", "Not enough data"),
/// JPEG of a photometric other than grey, RGB or YCbCr, Predictor 3 of integers.
#[test]
fn what_stays_refused_is_typed() {
    let url = "https://h/classes.tif";
    // Uncompressed: the last strip's byte count cut from 8 rows (480 bytes) to 300.
    let short = with_value(&file("tf_longstrip_rgb_none.tif"), 279, 2, 300);
    let e = first_error(short, url, &[&[0, 0, 0], &[0, 1, 0], &[0, 2, 0]]);
    assert_eq!(e.code, ErrorCode::CorruptChunk, "{e}");
    assert!(e.message.contains(url) && e.message.contains("300 bytes, expected 480"), "{e}");
    // Deflate and Predictor 3: strips of 8 rows of 20, ImageLength 20 → 23 (the last strip
    // holds 4 rows for 7).
    let short = with_short(&file("tf_fpred_f32_chunky.tif"), 257, 23);
    let e = first_error(short, url, &[&[0, 0, 0], &[0, 1, 0], &[0, 2, 0]]);
    assert_eq!(e.code, ErrorCode::CorruptChunk, "{e}");
    assert!(e.message.contains(url), "{e}");
    // JPEG of 4 samples called CMYK (Photometric 5) or YCbCr (6): refused, naming both.
    for (p, what) in [(5u16, "Photometric 5"), (6, "Photometric 6")] {
        let e = first_error(with_short(&file("gd_jpeg_rgba.tif"), 262, p), url, &[&[0, 0, 0]]);
        assert_eq!(e.code, ErrorCode::UnsupportedFormat, "{e}");
        assert!(e.message.contains(url) && e.message.contains(what) && e.message.contains("Compression 7"), "{e}");
    }
    // Predictor 3 of uint8 samples (libtiff refuses it too).
    let e = first_error(with_short(&file("tf_longstrip_rgb_lzw_pred.tif"), 317, 3), url, &[&[0, 0, 0]]);
    assert_eq!(e.code, ErrorCode::UnsupportedFormat, "{e}");
    assert!(e.message.contains(url) && e.message.contains("Predictor 3 of uint8"), "{e}");
}
