//! TIFF files through the store kind `tiff`: georeferencing as GDAL reads it, a COG's overviews
//! as a multiscale, requests counted at the server, detection by the first bytes, and hostile
//! files as typed errors. (Every case of `manifest-tiff.json` is also read value by value by the
//! shared fixture suites.)
#![cfg(not(target_arch = "wasm32"))]
mod common;

use common::fixture_files;
use futures_executor::block_on;
use serde_json::Value;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::Sel;
use shardfetch::core::read::{read_chunk, read_region, Array};
use shardfetch::core::transport::memory::ObjectServer;
use shardfetch::core::ErrorCode;

const BASE: &str = "mem://fixtures";

fn manifest() -> Value {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/manifest-tiff.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn file(name: &str) -> Vec<u8> {
    std::fs::read(std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/data/tiff").join(name))
        .unwrap()
}

fn at(path: &str) -> OpenOptions {
    OpenOptions { path: path.into(), ..OpenOptions::default() }
}

#[test]
fn georeferencing_is_gdals() {
    let m = manifest();
    let s = fixture_files(BASE, None);
    for c in m["cases"].as_array().unwrap().iter().filter(|c| c.get("geotiff").is_some()) {
        let url = format!("{BASE}/data/{}", c["path"].as_str().unwrap());
        let path = c["open"]["path"].as_str().unwrap_or("");
        let Opened::Array(a) = block_on(open(&s, &url, at(path))).unwrap() else { panic!() };
        let attrs: Value = serde_json::from_str(a.metadata().attributes.as_str()).unwrap();
        let (got, want) = (&attrs["geotiff"], &c["geotiff"]);
        assert_eq!(got["epsg"], want["epsg"], "{url}");
        let g: Vec<f64> = got["geotransform"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let w: Vec<f64> = want["geotransform"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(g, w, "{url}");
        if !want["nodata"].is_null() {
            assert_eq!(got["nodata"].as_f64(), want["nodata"].as_f64(), "{url}");
        }
    }
}

/// JSON values alike, numbers by value (`1` and `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        _ => a == b,
    }
}

/// Each fixture array, its attributes and tifffile's tags of its directory
/// (`expected/tiff/tags.json`, by `tests/fixtures/tiff_tags.py`), but SubIFD levels (OME-TIFF:
/// their directory index is their plane's, and tifffile's page of that index another image).
/// Returns how many.
fn with_tifffiles_tags(s: &ObjectServer, mut each: impl FnMut(&str, &Array, &Value, &serde_json::Map<String, Value>)) -> usize {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/expected/tiff/tags.json");
    let want: Value = serde_json::from_slice(&std::fs::read(root).unwrap()).unwrap();
    let mut n = 0;
    for c in manifest()["cases"].as_array().unwrap() {
        let name = c["path"].as_str().unwrap();
        let url = format!("{BASE}/data/{name}");
        let Ok(Opened::Array(a)) = block_on(open(s, &url, at(c["open"]["path"].as_str().unwrap_or("")))) else { continue };
        let attrs: Value = serde_json::from_str(a.metadata().attributes.as_str()).unwrap();
        let ifd = attrs["tiff"]["ifd"].as_u64().unwrap().to_string();
        let file = name.rsplit('/').next().unwrap();
        let w = want["tags"][file][&ifd].as_object().unwrap_or_else(|| panic!("{url}: tifffile read no directory {ifd}"));
        if attrs["tiff"]["tags"].get("256") != w.get("256") && w.get("330").is_some() {
            continue;
        }
        each(&url, &a, &attrs, w);
        n += 1;
    }
    n
}

/// Every tag of every array's directory, as tifffile reads it: the raw tags of its attributes,
/// opened without a request more.
#[test]
fn raw_tags_are_tifffiles() {
    let s = fixture_files(BASE, None);
    let mut values = 0;
    let checked = with_tifffiles_tags(&s, |url, _, attrs, w| {
        let got = attrs["tiff"]["tags"].as_object().unwrap_or_else(|| panic!("{url}: no tags"));
        let keys = |m: &serde_json::Map<String, Value>| m.keys().cloned().collect::<std::collections::BTreeSet<_>>();
        assert_eq!(keys(got), keys(w), "{url}: the directory's tags");
        for (tag, v) in w {
            match v {
                // More than 1,024 values: where they are, not what.
                Value::Null => assert!(got[tag]["count"].as_u64().unwrap() > 1024, "{url} {tag}: {}", got[tag]),
                _ => {
                    assert!(same(&got[tag], v), "{url} tag {tag}: {} for {v}", got[tag]);
                    values += 1;
                }
            }
        }
    });
    assert!(checked >= 30 && values >= 400, "{checked} directories, {values} values");
}

/// A COG's directories come with its first read; its first tile is one more request.
#[test]
fn a_cog_opens_in_one_request_and_its_first_tile_in_one_more() {
    let s = fixture_files(BASE, None);
    let url = format!("{BASE}/data/tiff/gd_cog_f32.tif");
    let Opened::Group(g) = block_on(open(&s, &url, OpenOptions::default())).unwrap() else { panic!("a group") };
    assert_eq!(s.requests(), 1, "{:?}", s.log());
    let attrs: Value = serde_json::from_str(g.attributes.as_str()).unwrap();
    let paths: Vec<&str> =
        attrs["multiscales"][0]["datasets"].as_array().unwrap().iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["0", "1", "2"]);
    assert_eq!(
        g.children.iter().map(|(n, a)| (n.as_str(), *a)).collect::<Vec<_>>(),
        [("0", true), ("1", true), ("2", true)]
    );
    let opened = block_on(open(&s, &url, OpenOptions { stack: g.stack.clone(), ..at("0") })).unwrap();
    let Opened::Array(a) = opened else { panic!() };
    assert_eq!(s.requests(), 1, "the image's metadata is the group's: {:?}", s.log());
    block_on(read_chunk(&a, &s, &[0, 0])).unwrap();
    assert_eq!(s.requests(), 2, "{:?}", s.log());
}

/// Tiles wanted together are one request of the file.
#[test]
fn tiles_wanted_together_are_one_request() {
    // gd_cog_f32's full resolution: 180x200 in 64x64 tiles (12), GDAL's layout.
    let s = fixture_files(BASE, None);
    let url = format!("{BASE}/data/tiff/gd_cog_f32.tif");
    let Opened::Array(a) = block_on(open(&s, &url, at("0"))).unwrap() else { panic!("an array") };
    let before = s.requests();
    block_on(read_region(&a, &s, &[Sel::All, Sel::All])).unwrap();
    assert_eq!(s.requests() - before, 1, "{:?}", &s.log()[before..]);
}

/// A TIFF behind a URL without its extension opens by its first bytes.
#[test]
fn a_tiff_without_its_extension_is_known_by_its_first_bytes() {
    let s = ObjectServer::new();
    s.put("https://h/scene", file("tf_u16_deflate_pred.tif"));
    let Opened::Array(a) = block_on(open(&s, "https://h/scene", OpenOptions::default())).unwrap() else { panic!() };
    assert_eq!(a.metadata().shape, [130, 170]);
    assert_eq!(a.container().map(|c| c.kind), Some("tiff"));
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

/// `b` with the integer array of `tag` (SHORT or LONG) replaced by LONGs appended at its end,
/// changed by `change`.
fn with_longs(b: &[u8], tag: u16, change: impl Fn(&mut Vec<u32>)) -> Vec<u8> {
    let mut b = b.to_vec();
    let e = entry(&b, tag);
    let typ = u16::from_le_bytes(b[e + 2..e + 4].try_into().unwrap());
    let n = u32::from_le_bytes(b[e + 4..e + 8].try_into().unwrap()) as usize;
    let at = u32::from_le_bytes(b[e + 8..e + 12].try_into().unwrap()) as usize;
    let mut v: Vec<u32> = (0..n)
        .map(|k| match typ {
            3 => u16::from_le_bytes(b[at + 2 * k..at + 2 * k + 2].try_into().unwrap()) as u32,
            _ => u32::from_le_bytes(b[at + 4 * k..at + 4 * k + 4].try_into().unwrap()),
        })
        .collect();
    change(&mut v);
    let new = b.len() as u32;
    b.extend(v.iter().flat_map(|x| x.to_le_bytes()));
    b[e + 2..e + 4].copy_from_slice(&4u16.to_le_bytes());
    le_u32(&mut b, e + 8, new);
    b
}

#[test]
fn hostile_files_are_typed_errors_naming_the_file() {
    let good = file("tf_u8_strips.tif");
    let url = "https://h/bad.tif";
    let try_open = |bytes: Vec<u8>| {
        let s = ObjectServer::new();
        s.put(url, bytes);
        match block_on(open(&s, url, OpenOptions::default())) {
            Ok(Opened::Array(a)) => (0..7u64)
                .map(|y| block_on(read_chunk(&a, &s, &[y, 0])).map(drop))
                .find(Result::is_err)
                .unwrap_or(Ok(())),
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        }
    };
    let check = |what: &str, bytes: Vec<u8>, code: ErrorCode| {
        let e = try_open(bytes).expect_err(what);
        assert_eq!(e.code, code, "{what}: {e}");
        assert!(e.message.contains(url), "{what}: {e}");
    };
    // The directory chain loops back to the first directory.
    let mut b = good.clone();
    let ifd = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
    let n = u16::from_le_bytes(b[ifd..ifd + 2].try_into().unwrap()) as usize;
    le_u32(&mut b, ifd + 2 + 12 * n, ifd as u32);
    check("a looping chain", b, ErrorCode::CorruptShard);
    // The first directory past the end.
    let mut b = good.clone();
    le_u32(&mut b, 4, 1 << 30);
    check("a directory past the end", b, ErrorCode::CorruptShard);
    // 2^32-1 x 2^32-1 pixels (LONG width and length) in one strip of them: the directory
    // consistent but for the size (one strip offset and byte count for its one strip), so that
    // the size is all that can fail — TooLarge, not a strip count that disagrees.
    let mut b = good.clone();
    let first_int = |tag: u16| {
        let e = entry(&good, tag);
        let typ = u16::from_le_bytes(good[e + 2..e + 4].try_into().unwrap());
        let n = u32::from_le_bytes(good[e + 4..e + 8].try_into().unwrap());
        let at = if (typ == 3 && n <= 2) || (typ == 4 && n == 1) {
            e + 8
        } else {
            u32::from_le_bytes(good[e + 8..e + 12].try_into().unwrap()) as usize
        };
        match typ {
            3 => u16::from_le_bytes(good[at..at + 2].try_into().unwrap()) as u32,
            _ => u32::from_le_bytes(good[at..at + 4].try_into().unwrap()),
        }
    };
    let (offset, count) = (first_int(273), first_int(279));
    for (tag, v) in [(256u16, u32::MAX), (257, u32::MAX), (278, u32::MAX), (273, offset), (279, count)] {
        let e = entry(&b, tag);
        b[e + 2..e + 4].copy_from_slice(&4u16.to_le_bytes());
        le_u32(&mut b, e + 4, 1);
        le_u32(&mut b, e + 8, v);
    }
    check("2^32-1 x 2^32-1 pixels in one strip", b, ErrorCode::TooLarge);
    // A strip claiming 4 GiB.
    check("a strip of 4 GiB", with_longs(&good, 279, |v| v[0] = u32::MAX), ErrorCode::TooLarge);
    // A strip past the end (its offset beyond the file).
    let n = good.len() as u32;
    check("a strip past the end", with_longs(&good, 273, |v| v[0] += n), ErrorCode::CorruptShard);
    // Not a TIFF at all.
    check("no header", b"not a tiff".to_vec(), ErrorCode::CorruptShard);
}

/// An OME-TIFF pyramid is an OME-Zarr image: levels from its SubIFDs, axes t, c, z, y, x with
/// the physical sizes and channel names its OME-XML gives.
#[test]
fn an_ome_tiff_is_an_ome_zarr_image() {
    use shardfetch::core::metadata::multiscale::ome_in;
    let s = fixture_files(BASE, None);
    let url = format!("{BASE}/data/tiff/tf_ome_pyramid.ome.tif");
    let Opened::Group(g) = block_on(open(&s, &url, OpenOptions::default())).unwrap() else { panic!("a group") };
    let m = ome_in(g.attributes.as_str().as_bytes(), None).unwrap().unwrap();
    let axes: Vec<(String, Option<String>)> = m.axes.iter().map(|a| (a.name.clone(), a.unit.clone())).collect();
    assert_eq!(axes[0].0, "t");
    assert_eq!(axes[4], ("x".to_string(), Some("micrometer".to_string())));
    let paths: Vec<&str> = m.levels.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(paths, ["0", "1", "2"]);
    assert_eq!(m.levels[1].scale, [1.0, 1.0, 2.0, 1.0, 1.0]);
    let labels: Vec<&str> = m.omero.as_ref().unwrap()["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["DAPI", "GFP", "RFP"]);
    // A plane far in the file, at a reduced level: read through its directory's SubIFDs.
    let Opened::Array(a) = block_on(open(&s, &url, OpenOptions { stack: g.stack.clone(), ..at("1") })).unwrap() else {
        panic!()
    };
    assert_eq!(a.metadata().shape, [2, 3, 4, 48, 40]);
    // Plane (t 1, c 2, z 3) is the 24th directory: the chain is followed to it by windows of
    // 64 KiB (each holding the next few directories here), then its SubIFDs, then the tile.
    let before = s.requests();
    block_on(read_chunk(&a, &s, &[1, 2, 3, 1, 1])).unwrap();
    let cold = s.requests() - before;
    assert!(cold <= 10, "{cold}: {:?}", &s.log()[before..]);
    // The chain is known now: another plane before it costs its SubIFDs and its tile.
    let before = s.requests();
    block_on(read_chunk(&a, &s, &[1, 1, 0, 0, 0])).unwrap();
    assert!(s.requests() - before <= 3, "{:?}", &s.log()[before..]);
}

/// Every tile of a reduced level, plane after plane as a viewer's sweep asks: each tile one
/// request, the directories found by a few reads ahead, the file not read over and over (with
/// one read-ahead window, each SubIFD read dropped the window the chain walk went on from: 196
/// requests and 2.5 MB for a 452 KB file).
#[test]
fn a_reduced_level_costs_its_tiles_and_a_few_directory_reads() {
    let s = fixture_files(BASE, None);
    let url = format!("{BASE}/data/tiff/tf_ome_pyramid.ome.tif");
    let size = file("tf_ome_pyramid.ome.tif").len() as u64;
    let Opened::Array(a) = block_on(open(&s, &url, at("1"))).unwrap() else { panic!() };
    let (before, sent) = (s.requests(), s.sent());
    let mut tiles = 0;
    for t in 0..2 {
        for c in 0..3 {
            for z in 0..4 {
                let reads: Vec<_> = (0..2).flat_map(|y| (0..2).map(move |x| [t, c, z, y, x])).collect();
                for r in block_on(futures_util::future::join_all(reads.iter().map(|k| read_chunk(&a, &s, k)))) {
                    r.unwrap();
                    tiles += 1;
                }
            }
        }
    }
    let (requests, bytes) = (s.requests() - before, s.sent() - sent);
    assert!(requests <= tiles + 12, "{requests} requests for {tiles} tiles");
    // (102 requests, 457 KB: the reads ahead hold level 0's tiles as well in so small a file.)
    assert!(bytes <= size + size / 4, "{bytes} bytes read of a {size}-byte file");
}

#[test]
fn concurrent_reads_follow_an_ome_chain_once() {
    // Reads of many planes at once (a viewer's tiles) each walk the directory chain; the walks
    // interleave (the server yields before answering) and must agree, not see a loop.
    let s = fixture_files(BASE, None);
    s.yields.set(2);
    let url = format!("{BASE}/data/tiff/tf_ome_pyramid.ome.tif");
    let Opened::Array(a) = block_on(open(&s, &url, at("1"))).unwrap() else { panic!() };
    let coords: Vec<[u64; 5]> = (0..2)
        .flat_map(|t| (0..3).flat_map(move |c| (0..4).map(move |z| [t, c, z, 1, 1])))
        .collect();
    let reads = coords.iter().map(|k| read_chunk(&a, &s, k));
    for r in block_on(futures_util::future::join_all(reads)) {
        r.unwrap();
    }
}

#[test]
fn gdal_band_scales_and_offsets_are_attributes() {
    let m = manifest();
    let s = fixture_files(BASE, None);
    let mut n = 0;
    for c in m["cases"].as_array().unwrap().iter().filter(|c| c.get("gdal_metadata").is_some()) {
        let url = format!("{BASE}/data/{}", c["path"].as_str().unwrap());
        let Opened::Array(a) = block_on(open(&s, &url, OpenOptions::default())).unwrap() else { panic!() };
        let attrs: Value = serde_json::from_str(a.metadata().attributes.as_str()).unwrap();
        let want = &c["gdal_metadata"];
        assert_eq!(attrs["geotiff"]["scales"][0].as_f64(), want["scale"].as_f64(), "{}", c["name"]);
        assert_eq!(attrs["geotiff"]["offsets"][0].as_f64(), want["offset"].as_f64(), "{}", c["name"]);
        n += 1;
    }
    assert!(n > 0, "no case has GDAL_METADATA");
}

/// Every tag of every array's directory read on demand (`tags/<tag>`, `ShardedArray.tiffTag`)
/// is tifffile's value; a tag the directory lacks is none.
#[test]
fn tags_read_on_demand_are_tifffiles() {
    let s = fixture_files(BASE, None);
    let mut values = 0;
    let checked = with_tifffiles_tags(&s, |url, a, _, w| {
        let read = |tag: &str| block_on(a.read_document(&s, &format!("tags/{tag}"))).unwrap();
        for (tag, v) in w {
            let got: Value = serde_json::from_slice(&read(tag).unwrap_or_else(|| panic!("{url} {tag}: none"))).unwrap();
            assert!(same(&got, v), "{url} tag {tag}: {got} for {v}");
            values += 1;
        }
        assert!(read("65000").is_none(), "{url}: a tag it lacks");
    });
    assert!(checked >= 30 && values >= 400, "{checked} directories, {values} values");
}

/// A tag whose value lies past the bytes read — attributes give where it is — is read on demand
/// in one request: a one-pixel image whose Software (305) is 70,000 bytes at offset 70,000.
#[test]
fn a_tag_past_the_bytes_read_is_one_request() {
    let mut b = vec![0u8; 140_008];
    b[..8].copy_from_slice(b"II*\0\x08\0\0\0");
    let entries: [(u16, u16, u32, u32); 8] =
        [(256, 3, 1, 1), (257, 3, 1, 1), (258, 3, 1, 8), (273, 4, 1, 200), (277, 3, 1, 1), (278, 3, 1, 1), (279, 4, 1, 1), (305, 2, 70_000, 70_000)];
    b[8..10].copy_from_slice(&(entries.len() as u16).to_le_bytes());
    for (k, (tag, typ, count, value)) in entries.iter().enumerate() {
        let at = 10 + 12 * k;
        b[at..at + 2].copy_from_slice(&tag.to_le_bytes());
        b[at + 2..at + 4].copy_from_slice(&typ.to_le_bytes());
        b[at + 4..at + 8].copy_from_slice(&count.to_le_bytes());
        b[at + 8..at + 12].copy_from_slice(&value.to_le_bytes());
    }
    b[200] = 42;
    b[70_000..139_999].fill(b'x');
    let (s, url) = (ObjectServer::new(), "https://h/one.tif");
    s.put(url, b);
    let Opened::Array(a) = block_on(open(&s, url, OpenOptions::default())).unwrap() else { panic!("an array") };
    let attrs: Value = serde_json::from_str(a.metadata().attributes.as_str()).unwrap();
    assert_eq!(attrs["tiff"]["tags"]["305"], serde_json::json!({"type": 2, "count": 70000, "offset": 70000}));
    let before = s.requests();
    let got = block_on(a.read_document(&s, "tags/305")).unwrap().unwrap();
    assert_eq!(s.requests(), before + 1, "{:?}", s.log());
    assert_eq!(serde_json::from_slice::<Value>(&got).unwrap(), Value::String("x".repeat(69_999)));
    let chunk = block_on(read_chunk(&a, &s, &[0, 0])).unwrap();
    assert_eq!(chunk.bytes[0], 42);
}
