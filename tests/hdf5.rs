//! HDF5 and NetCDF-4 files through the store kind `hdf5` (its reader the `hdf5` decoder module,
//! linked in natively): requests counted at the server, groups and their children, NetCDF
//! dimension names, hostile and unsupported files as typed errors, reads at the same time. (Every
//! case of `manifest-hdf5.json` is also read value by value by the shared fixture suites.)
#![cfg(not(target_arch = "wasm32"))]
mod common;

use common::fixture_files;
use futures_executor::block_on;
use serde_json::Value;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::Sel;
use shardfetch::core::read::{read_chunk, read_region};
use shardfetch::core::ErrorCode;

const BASE: &str = "mem://fixtures";

fn manifest() -> Value {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/manifest-hdf5.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn at(path: &str) -> OpenOptions {
    OpenOptions { path: path.into(), ..OpenOptions::default() }
}

#[test]
fn a_netcdf_variable_opens_in_a_few_requests_with_its_dimension_names() {
    let s = fixture_files(BASE, None);
    let url = format!("{BASE}/data/hdf5/netcdf4.nc");
    let Opened::Array(a) = block_on(open(&s, &url, at("var00"))).unwrap() else { panic!("an array") };
    let opened = s.requests();
    let names: Vec<Option<String>> = a.metadata().dimension_names.clone().unwrap_or_default();
    assert!(names.iter().any(|n| n.as_deref() == Some("time")), "{names:?}");
    // The superblock, the root group's links, the variable's header: read ahead in 64 KiB
    // ranges, each round's needs at once.
    eprintln!("# a NetCDF-4 variable of 50: {opened} requests, {} bytes", s.sent());
    assert!(opened <= 4, "{opened} requests: {:?}", s.log());
    let before = s.requests();
    block_on(read_chunk(&a, &s, &vec![0; a.metadata().shape.len()])).unwrap();
    assert!(s.requests() - before <= 2, "{:?}", &s.log()[before..]);
    // The root group: its attributes and children (the variables; dimensions without one not).
    let Opened::Group(g) = block_on(open(&s, &url, OpenOptions::default())).unwrap() else { panic!("a group") };
    let kids = g.children.clone();
    assert!(kids.iter().any(|c| c.0 == "var00" && c.1), "{kids:?}");
    assert!(kids.len() >= 50, "{} children", kids.len());
}

#[test]
fn hostile_and_unsupported_files_are_typed_errors_naming_the_file() {
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

#[test]
fn without_its_reader_an_hdf5_file_is_unsupported_codec_naming_it() {
    let s = fixture_files(BASE, None);
    let url = format!("{BASE}/data/hdf5/latest.h5");
    let e = block_on(open(&s, &url, OpenOptions { decoders: None, ..at("contig_i16") })).err().unwrap();
    assert_eq!(e.code, ErrorCode::UnsupportedCodec, "{e:?}");
    assert!(e.message.contains("no hdf5 decoder is loaded"), "{e:?}");
    // The wrapper loads it and opens again: nothing was requested meanwhile.
    assert_eq!(s.requests(), 0, "{:?}", s.log());
}

#[test]
fn reads_at_the_same_time_share_what_they_fetch() {
    // A chunked dataset's tiles read at once (a viewer's) each walk the chunk index; the server
    // yields before answering so the walks interleave.
    let m = manifest();
    let s = fixture_files(BASE, None);
    s.yields.set(2);
    let cases = m["cases"].as_array().unwrap();
    let c = cases.iter().find(|c| c["features"].as_array().unwrap().iter().any(|f| f == "btree_v2")).expect("a B-tree v2 case");
    let url = format!("{BASE}/data/{}", c["path"].as_str().unwrap());
    let Opened::Array(a) = block_on(open(&s, &url, at(c["open"]["path"].as_str().unwrap()))).unwrap() else { panic!() };
    let grid: Vec<u64> = a.metadata().shape.iter().zip(a.grid().chunk_shape().unwrap()).map(|(s, c)| s.div_ceil(c)).collect();
    let mut all = vec![vec![]];
    for n in &grid {
        all = all.into_iter().flat_map(|p: Vec<u64>| (0..*n).map(move |i| [p.clone(), vec![i]].concat())).collect();
    }
    for r in block_on(futures_util::future::join_all(all.iter().map(|k| read_chunk(&a, &s, k)))) {
        r.unwrap();
    }
}

#[test]
fn chunks_wanted_together_are_one_request() {
    // many_chunks (h5py, libver earliest): 40x40 in 2x2 chunks, 400 chunks spread through the
    // file past the bytes its opening read.
    let s = fixture_files(BASE, None);
    let url = format!("{BASE}/data/hdf5/earliest.h5");
    let Opened::Array(a) = block_on(open(&s, &url, at("many_chunks"))).unwrap() else { panic!("an array") };
    let before = s.requests();
    block_on(read_region(&a, &s, &[Sel::All, Sel::All])).unwrap();
    assert!(s.requests() - before <= 3, "{:?}", &s.log()[before..]);
}

/// Fixed-length strings (every charset and padding; NetCDF `char`): each element, as text and
/// as bytes, against what h5py (netCDF4-python for `char`) read back; a fill as both.
#[test]
fn fixed_length_strings_read_as_text_and_as_bytes_like_h5py() {
    use shardfetch::core::metadata::DataType;
    use shardfetch::core::read::{Element, Strings};
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let values = |rel: &Value| -> Vec<Value> {
        let v: Value = serde_json::from_slice(&std::fs::read(root.join(rel.as_str().unwrap())).unwrap()).unwrap();
        v["values"].as_array().unwrap().clone()
    };
    let s = fixture_files(BASE, None);
    let m = manifest();
    let cases: Vec<&Value> = m["cases"].as_array().unwrap().iter().filter(|c| c["dtype"] == "fixed_length_string").collect();
    assert!(cases.len() >= 11, "{} string cases", cases.len());
    let mut elements = 0;
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let url = format!("{BASE}/data/{}", c["path"].as_str().unwrap());
        let path = c["open"]["path"].as_str().unwrap();
        let Opened::Array(a) = block_on(open(&s, &url, at(path))).unwrap() else { panic!("{name}: an array") };
        let DataType::FixedString(t) = a.dtype() else { panic!("{name}: {:?}", a.dtype()) };
        assert_eq!((t.charset(), t.padding()), (c["stringType"]["charset"].as_str().unwrap(), c["stringType"]["padding"].as_str().unwrap()), "{name}");
        let all = vec![Sel::All; a.metadata().shape.len()];
        let got = block_on(read_region(&a, &s, &all)).unwrap();
        let (text, bytes) = (values(&c["expected"]), values(&c["expectedBytes"]));
        assert_eq!(text.len(), bytes.len());
        for (i, (t, b)) in text.iter().zip(&bytes).enumerate() {
            let as_text = got.element_as(a.dtype(), i, Strings::Declared);
            assert_eq!(as_text, Some(Element::Text(t.as_str().unwrap().into())), "{name} element {i}");
            let Some(Element::Bytes(raw)) = got.element_as(a.dtype(), i, Strings::Bytes) else { panic!("{name} {i}") };
            assert_eq!(common::base64_encode(raw), b.as_str().unwrap(), "{name} element {i} as bytes");
            elements += 1;
        }
    }
    assert!(elements >= 60, "{elements} elements");
    // An unwritten chunk reads as the fill, "fïll" (UTF-8, NUL-padded).
    let Opened::Array(a) = block_on(open(&s, &format!("{BASE}/data/hdf5/strings.h5"), at("utf8_fill"))).unwrap() else { panic!() };
    let got = block_on(read_chunk(&a, &s, &[1, 1])).unwrap();
    assert_eq!(got.element_as(a.dtype(), 0, Strings::Text), Some(Element::Text("f\u{ef}ll".into())));
    assert_eq!(got.element_as(a.dtype(), 0, Strings::Bytes), Some(Element::Bytes("f\u{ef}ll".as_bytes())));
}
