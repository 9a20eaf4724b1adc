//! NetCDF-3 files (classic, 64-bit offset, CDF-5; by netCDF4-python and SciPy) through the
//! store kind `netcdf3` (its reader the `netcdf3` decoder module, linked in natively): every
//! variable's values, attributes and fill value against its writer's manifest, requests counted
//! at the server (one record of one variable: one range), `.nc` told from NetCDF-4 by its first
//! bytes, malformed headers as typed errors naming the file — and never a panic, whatever the
//! header's bytes.
#![cfg(not(target_arch = "wasm32"))]
mod common;

use common::{check_case, check_group, fixture_files, parse_manifest};
use futures_executor::block_on;
use serde_json::Value;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::Sel;
use shardfetch::core::read::{read_chunk, read_region};
use shardfetch::core::transport::memory::ObjectServer;

const BASE: &str = "mem://fixtures";

fn fixtures() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn manifest() -> Value {
    serde_json::from_slice(&std::fs::read(fixtures().join("manifest-netcdf3.json")).unwrap()).unwrap()
}

fn at(path: &str) -> OpenOptions {
    OpenOptions { path: path.into(), ..OpenOptions::default() }
}

fn array(s: &ObjectServer, file: &str, var: &str) -> shardfetch::core::read::Array {
    match block_on(open(s, &format!("{BASE}/data/netcdf3/{file}"), at(var))).unwrap() {
        Opened::Array(a) => *a,
        Opened::Group(_) => panic!("{file} {var}: a group"),
    }
}

#[test]
fn every_variable_reads_as_its_writers_read_it_with_its_attributes() {
    let text = std::fs::read(fixtures().join("manifest-netcdf3.json")).unwrap();
    let (cases, groups) = parse_manifest(&text);
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let s = fixture_files(BASE, None);
    let failures: Vec<String> = cases.iter().filter_map(|k| block_on(check_case(&s, BASE, k)).err()).collect();
    assert!(failures.is_empty(), "{} of {} failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    for g in &groups {
        block_on(check_group(&s, BASE, g)).unwrap_or_else(|e| panic!("{}: {e}", g["path"]));
    }
    // Each variable's attributes and dimension names, as netCDF4-python or SciPy read them.
    let m = manifest();
    for c in m["cases"].as_array().unwrap() {
        let file = c["path"].as_str().unwrap().trim_start_matches("netcdf3/");
        let a = array(&s, file, c["open"]["path"].as_str().unwrap());
        let attrs: Value = serde_json::from_str(a.metadata().attributes.as_str()).unwrap();
        assert_eq!(attrs, c["attributes"], "{}: attributes", c["name"]);
        let dims: Vec<String> = a.metadata().dimension_names.clone().unwrap_or_default().into_iter().map(|d| d.unwrap_or_default()).collect();
        let want: Vec<String> = c["dimensionNames"].as_array().unwrap().iter().map(|d| d.as_str().unwrap().into()).collect();
        assert_eq!(dims, want, "{}: dimension names", c["name"]);
    }
}

#[test]
fn one_record_of_one_variable_is_one_range_once_the_header_is_in() {
    let s = fixture_files(BASE, None);
    let a = array(&s, "nc3_classic.nc", "temp");
    // The header and the variable's document: the first 64 KiB, one request (the file is
    // smaller: every record is held already).
    assert_eq!(s.requests(), 1, "{:?}", s.log());
    block_on(read_region(&a, &s, &[Sel::All, Sel::All, Sel::All])).unwrap();
    assert_eq!(s.requests(), 1, "{:?}", s.log());
    // nc3_long.nc: 68 KB of another variable, then the records.
    let s = fixture_files(BASE, None);
    let a = array(&s, "nc3_long.nc", "temp");
    assert_eq!(s.requests(), 1, "{:?}", s.log());
    assert_eq!(a.grid().chunk_shape(), Some(vec![1, 4, 5]));
    let before = s.requests();
    block_on(read_chunk(&a, &s, &[2, 0, 0])).unwrap();
    assert_eq!(s.requests() - before, 1, "{:?}", &s.log()[before..]);
    // A window of steps: its records, interleaved with `time`'s, one merged read.
    let s = fixture_files(BASE, None);
    let a = array(&s, "nc3_long.nc", "temp");
    let before = s.requests();
    block_on(read_region(&a, &s, &[Sel::Range(1, 4), Sel::All, Sel::All])).unwrap();
    assert_eq!(s.requests() - before, 1, "{:?}", &s.log()[before..]);
}

#[test]
fn a_header_longer_than_the_first_read_is_read_on_by_range() {
    // nc3_big_header.nc: an 80 KB history attribute, the variables after it. The first 64 KiB,
    // then the rest of the header (and, the file being small, the records) in one range more.
    let s = fixture_files(BASE, None);
    let a = array(&s, "nc3_big_header.nc", "temp");
    let ranges: Vec<String> = s.log().iter().map(|l| l.range.clone().unwrap_or_default()).collect();
    assert_eq!(ranges.len(), 2, "{ranges:?}");
    assert_eq!(ranges[0], "bytes=0-65535");
    assert!(ranges[1].starts_with("bytes=65536-"), "{ranges:?}");
    assert_eq!(a.metadata().shape, [3, 6]);
    let m = manifest();
    let c = m["cases"].as_array().unwrap().iter().find(|c| c["name"] == "nc3_big_header_temp").unwrap();
    let want = std::fs::read(format!("tests/fixtures/{}", c["expected"].as_str().unwrap())).unwrap();
    assert_eq!(block_on(read_region(&a, &s, &[Sel::All, Sel::All])).unwrap().bytes, want);
}

#[test]
fn a_nc_file_goes_to_its_kind_by_its_first_bytes() {
    let s = fixture_files(BASE, None);
    let Opened::Group(g) = block_on(open(&s, &format!("{BASE}/data/netcdf3/nc3_classic.nc"), OpenOptions::default())).unwrap() else { panic!("a group") };
    assert_eq!(g.container.unwrap().kind, "netcdf3");
    assert!(g.children.iter().any(|c| c.0 == "temp" && c.1), "{:?}", g.children);
    assert_eq!(s.requests(), 1, "{:?}", s.log());
    let Opened::Group(g) = block_on(open(&s, &format!("{BASE}/data/hdf5/netcdf4.nc"), OpenOptions::default())).unwrap() else { panic!("a group") };
    assert_eq!(g.container.unwrap().kind, "hdf5");
}

#[test]
fn malformed_headers_are_typed_errors_naming_the_file() {
    let m = manifest();
    let s = fixture_files(BASE, None);
    for e in m["errors"].as_array().unwrap() {
        let url = format!("{BASE}/data/{}", e["file"].as_str().unwrap());
        let path = e["path"].as_str().unwrap();
        let got = match block_on(open(&s, &url, at(path))) {
            Err(err) => err,
            Ok(Opened::Array(a)) if e["op"] == "chunk" => {
                let coords: Vec<u64> = e["coords"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect();
                block_on(read_chunk(&a, &s, &coords)).unwrap_err()
            }
            Ok(_) => panic!("{}: opened", e["name"]),
        };
        assert_eq!(got.code.as_str(), e["code"].as_str().unwrap(), "{}: {got:?}", e["name"]);
        assert!(got.message.contains(e["file"].as_str().unwrap()), "{}: {got:?}", e["name"]);
    }
}

/// A classic file of one record variable `t` (float) of `n` records, written here: a benchmark
/// input, not a fixture (its values are not checked).
fn records_file(n: u32) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(b"CDF\x01");
    h.extend_from_slice(&n.to_be_bytes());
    for v in [0x0Au32, 1, 4] { h.extend_from_slice(&v.to_be_bytes()); }
    h.extend_from_slice(b"time");
    h.extend_from_slice(&0u32.to_be_bytes());
    h.extend_from_slice(&[0; 8]);
    for v in [0x0Bu32, 1, 1] { h.extend_from_slice(&v.to_be_bytes()); }
    h.extend_from_slice(b"t\0\0\0");
    for v in [1u32, 0, 0, 0, 5, 4] { h.extend_from_slice(&v.to_be_bytes()); }
    let begin = h.len() as u32 + 4;
    h.extend_from_slice(&begin.to_be_bytes());
    for i in 0..n { h.extend_from_slice(&(i as f32).to_be_bytes()); }
    h
}

/// `cargo test --release --test netcdf3 -- --ignored --nocapture`: the time to read a record
/// variable whole (every record a chunk located by the driver); see BENCHMARKS.md.
#[test]
#[ignore]
fn bench_whole_record_variable() {
    for n in [2_000u32, 8_000, 20_000] {
        let s = ObjectServer::new();
        s.put("mem://x/a.nc", records_file(n));
        let a = match block_on(open(&s, "mem://x/a.nc", at("t"))).unwrap() {
            Opened::Array(a) => *a,
            _ => panic!(),
        };
        let t = std::time::Instant::now();
        block_on(read_region(&a, &s, &[Sel::All])).unwrap();
        eprintln!("BENCH n={n}: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    }
}
