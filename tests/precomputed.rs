//! Neuroglancer precomputed volumes written by tensorstore (`tests/fixtures/generate_precomputed.py`),
//! read chunk by chunk through `Layout::locate` + `shard::locate` + `Store::read` + `Layout::decode` over an
//! in-memory HTTP client, and compared with what tensorstore read back.
#![cfg(not(target_arch = "wasm32"))]
mod common;

use common::Patch;
use futures_executor::block_on;
use serde_json::Value;
use shardfetch::core::codec::external::linked;
use shardfetch::core::codec::Decoded;
use shardfetch::core::layout::precomputed::ScaleLayout as Scale;
use shardfetch::core::layout::{Layout, Located};
use shardfetch::core::metadata::precomputed::{Encoding, ScaleRef, VolumeInfo};
use shardfetch::core::shard::{locate, IndexFormat};
use shardfetch::core::store::Store as Source;
use shardfetch::core::transport::memory::ObjectServer;
use shardfetch::core::transport::{Config, HttpClient, Method, Request};
use shardfetch::core::{Error, ErrorCode, Result};
use std::path::PathBuf;
use std::rc::Rc;

/// Follow the index levels to a chunk, then read its bytes (`None`: absent).
async fn read_chunk<C: HttpClient>(
    src: &Source,
    c: &C,
    url: &str,
    levels: &[(&dyn IndexFormat, u64)],
) -> shardfetch::core::Result<Option<Vec<u8>>> {
    let Some(region) = locate(src, c, url, levels).await? else { return Ok(None) };
    Ok(src.read(c, url, region.range()).await?.map(|f| f.bytes))
}

/// Whether this build decodes the image encoding (the linked decoders, feature `native-decoders`).
fn supported(_encoding: &str) -> bool {
    cfg!(feature = "native-decoders")
}

const BASE: &str = "mem://fixtures";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The fixtures as a static server, each file through `patch`.
fn files(patch: Option<Patch>) -> ObjectServer {
    common::fixture_files(BASE, patch)
}

struct Case {
    name: String,
    path: String,
    scale: usize,
    dtype: String,
    shape: Vec<u64>,
    chunk_shape: Vec<u64>,
    expected: Vec<u8>,
    features: Vec<String>,
}

/// The cases this build can read (jpeg/png are cargo features).
fn manifest() -> Vec<Case> {
    let all = every_case();
    let n = all.len();
    let kept: Vec<Case> = all
        .into_iter()
        .filter(|c| {
            !c.features
                .iter()
                .any(|f| f.strip_prefix("encoding_").is_some_and(|e| (e == "jpeg" || e == "png") && !supported(e)))
        })
        .collect();
    if kept.len() < n {
        eprintln!("skipping {} jpeg/png cases: feature off", n - kept.len());
    }
    kept
}

fn every_case() -> Vec<Case> {
    let m: Value = serde_json::from_slice(&std::fs::read(root().join("manifest-precomputed.json")).unwrap()).unwrap();
    let u64s = |v: &Value| v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect::<Vec<_>>();
    m["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["open"]["format"], "precomputed");
            assert_eq!(c["fillValue"], "0");
            Case {
                name: c["name"].as_str().unwrap().into(),
                path: c["path"].as_str().unwrap().into(),
                scale: c["open"]["scale"].as_u64().unwrap() as usize,
                dtype: c["dtype"].as_str().unwrap().into(),
                shape: u64s(&c["shape"]),
                chunk_shape: u64s(&c["chunkShape"]),
                expected: std::fs::read(root().join(c["expected"].as_str().unwrap())).unwrap(),
                features: c["features"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().into()).collect(),
            }
        })
        .collect()
}

fn open(c: &ObjectServer, path: &str, which: ScaleRef) -> Result<Scale> {
    let info = block_on(c.send(Request::new(Method::Get, &format!("{BASE}/data/{path}/info"), None)))?;
    if info.status != 200 {
        return Err(Error::new(ErrorCode::NotFound, format!("{path}/info: HTTP {}", info.status)));
    }
    Scale::from_info(&info.body, which)
}

/// One chunk through the read path the array layer will use; `None` when absent.
fn read(src: &Source, c: &ObjectServer, path: &str, s: &Scale, coords: &[u64]) -> Result<Option<Decoded>> {
    let Located { key, levels } = s.locate(coords)?;
    let url = format!("{BASE}/data/{path}/{key}");
    let levels: Vec<(&dyn IndexFormat, u64)> = levels.iter().map(|(f, k)| (f.as_ref(), *k)).collect();
    match block_on(read_chunk(src, c, &url, &levels))? {
        None => Ok(None),
        Some(bytes) => s.decode(coords, bytes, linked().as_deref()).map(Some).map_err(|e| e.at(&url)),
    }
}

fn chunks(s: &Scale) -> Vec<[u64; 4]> {
    let g = s.grid().count();
    let mut out = Vec::new();
    for z in 0..g[2] {
        for y in 0..g[1] {
            for x in 0..g[0] {
                out.push([x, y, z, 0]);
            }
        }
    }
    out
}

/// Compare one chunk with the expected array (C order over [x, y, z, channel]); jpeg may
/// differ by `tolerance` per sample (different decoders of the same lossy stream).
fn compare(
    k: &Case,
    s: &Scale,
    coords: &[u64; 4],
    got: Option<&Decoded>,
    tolerance: u8,
) -> std::result::Result<u64, String> {
    let elem = s.volume().data_type.size();
    let clip = s.grid().clipped(coords);
    let origin: Vec<u64> = (0..3).map(|i| coords[i] * k.chunk_shape[i]).collect();
    let nc = k.shape[3];
    let mut worst = 0u64;
    for z in 0..clip[2] {
        for y in 0..clip[1] {
            for x in 0..clip[0] {
                for ch in 0..nc {
                    let (gx, gy, gz) = (origin[0] + x, origin[1] + y, origin[2] + z);
                    let e = (((gx * k.shape[1] + gy) * k.shape[2] + gz) * nc + ch) as usize * elem;
                    let want = &k.expected[e..e + elem];
                    let have = match got {
                        None => vec![0u8; elem],
                        Some(d) => {
                            let i =
                                (x * d.strides[0] + y * d.strides[1] + z * d.strides[2] + ch * d.strides[3]) as usize;
                            d.bytes.get(i * elem..(i + 1) * elem).map(<[u8]>::to_vec).unwrap_or_default()
                        }
                    };
                    if have.as_slice() == want {
                        continue;
                    }
                    let diff = match (have.as_slice(), want) {
                        ([h], [w]) => h.abs_diff(*w),
                        _ => u8::MAX,
                    };
                    worst = worst.max(u64::from(diff));
                    if diff > tolerance {
                        return Err(format!(
                            "{}: chunk {coords:?} voxel ({gx}, {gy}, {gz}) channel {ch}: expected {want:?}, got {have:?}",
                            k.name
                        ));
                    }
                }
            }
        }
    }
    Ok(worst)
}

#[test]
fn every_chunk_reads_like_tensorstore_wrote_it() {
    assert!(every_case().len() >= 11);
    let cases = manifest();
    let c = files(None);
    let (mut checked, mut present, mut absent) = (0, 0, 0);
    let mut failures = Vec::new();
    for k in &cases {
        let s = open(&c, &k.path, ScaleRef::Index(k.scale)).unwrap();
        assert_eq!(s.grid().shape(), k.shape, "{}", k.name);
        assert_eq!(s.grid().chunk_shape().unwrap(), k.chunk_shape, "{}", k.name);
        assert_eq!(s.volume().data_type.name(), k.dtype, "{}", k.name);
        assert_eq!(k.expected.len() as u64, k.shape.iter().product::<u64>() * s.volume().data_type.size() as u64);
        // JPEG leaves upsampling and rounding to the decoder: zune-jpeg and tensorstore's
        // libjpeg-turbo differ by 1 in gray samples, and in subsampled colour images by up to
        // a few levels, most at the right edge of images whose width is not a multiple of 16
        // (libjpeg-turbo replicates the last real chroma sample, zune-jpeg interpolates into
        // the MCU padding).
        let tolerance = match (&s.scale().encoding, k.shape[3]) {
            (Encoding::Jpeg, 1) => 1,
            (Encoding::Jpeg, _) => 8,
            _ => 0,
        };
        let src = Source::new(Config::default());
        let mut worst = 0;
        for coords in chunks(&s) {
            let got = match read(&src, &c, &k.path, &s, &coords) {
                Ok(g) => g,
                Err(e) => {
                    failures.push(format!("{}: chunk {coords:?}: {e}", k.name));
                    continue;
                }
            };
            if got.is_some() {
                present += 1;
            } else {
                absent += 1;
            }
            match compare(k, &s, &coords, got.as_ref(), tolerance) {
                Ok(w) => worst = worst.max(w),
                Err(e) => failures.push(e),
            }
            checked += 1;
        }
        if tolerance > 0 {
            eprintln!("{}: largest jpeg sample difference from tensorstore's decode: {worst}", k.name);
        }
        if k.features.iter().any(|f| f == "missing_chunk") {
            assert!(absent > 0, "{}: claims missing chunks", k.name);
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(checked >= 200 && present >= 100 && absent >= 50, "checked {checked}, present {present}, absent {absent}");
    eprintln!("{} cases, {checked} chunks ({present} present, {absent} absent)", cases.len());
}

/// Chunk ids tensorstore wrote, each mapped to its grid position by its contents.
#[test]
fn chunk_ids_match_what_tensorstore_wrote() {
    let ids: Value =
        serde_json::from_slice(&std::fs::read(root().join("expected/precomputed/chunk_ids.json")).unwrap()).unwrap();
    let c = files(None);
    let mut n = 0;
    for (name, t) in ids.as_object().unwrap() {
        let s = open(&c, &format!("precomputed/{name}"), ScaleRef::Index(0)).unwrap();
        let grid: Vec<u64> = t["grid"].as_array().unwrap().iter().map(|g| g.as_u64().unwrap()).collect();
        assert_eq!(&s.grid().count()[..3], grid.as_slice());
        for row in t["ids"].as_array().unwrap() {
            let r: Vec<u64> = row.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
            assert_eq!(s.chunk_id(&[r[0], r[1], r[2], 0]).unwrap(), Some(r[3]), "{name} {r:?}");
            n += 1;
        }
    }
    assert!(n >= 40, "{n}");
}

#[test]
fn cold_chunk_is_three_requests_warm_is_one() {
    let c = files(None);
    let path = "precomputed/ident_u16";
    let s = open(&c, path, ScaleRef::Index(0)).unwrap();
    let spec = s.scale().sharding.unwrap();
    // Two present chunks in the same minishard of the same shard.
    let all = chunks(&s);
    let place = |k: &[u64; 4]| spec.place(s.chunk_id(k).unwrap().unwrap());
    let (a, b) = all
        .iter()
        .flat_map(|a| all.iter().map(move |b| (a, b)))
        .find(|(a, b)| a != b && a[1] < 3 && b[1] < 3 && place(a) == place(b))
        .unwrap();
    let src = Source::new(Config::default());
    c.reset();
    assert!(read(&src, &c, path, &s, a).unwrap().is_some());
    let log = c.log();
    assert_eq!(log.len(), 3, "{log:?}");
    let m = place(a).1;
    assert_eq!(log[0].range.as_deref(), Some(format!("bytes={}-{}", 16 * m, 16 * m + 15).as_str()), "{log:?}");
    assert!(log.iter().all(|r| r.range.is_some() && r.url.ends_with(".shard")), "{log:?}");
    c.reset();
    assert!(read(&src, &c, path, &s, b).unwrap().is_some());
    assert_eq!(c.requests(), 1, "warm: {:?}", c.log());

    // A never-written chunk (y >= 24) whose minishard index is already known: no request.
    let known: Vec<_> = all.iter().filter(|k| k[1] == 3 && place(k) == place(a)).collect();
    for k in known {
        c.reset();
        assert!(read(&src, &c, path, &s, k).unwrap().is_none());
        assert_eq!(c.requests(), 0);
    }
    assert_eq!(src.stats().memo_fills, 2);
}

#[test]
fn missing_shard_and_empty_minishard_cost_one_request() {
    let c = files(None);
    let path = "precomputed/murmur_rgb_u8";
    let s = open(&c, path, ScaleRef::Index(0)).unwrap();
    let (mut missing_shard, mut empty_minishard) = (0, 0);
    for k in chunks(&s) {
        let src = Source::new(Config::default());
        let key = s.locate(&k).unwrap().key;
        let exists = root().join("data").join(path).join(&key).exists();
        c.reset();
        if read(&src, &c, path, &s, &k).unwrap().is_none() && c.requests() == 1 {
            if exists {
                empty_minishard += 1;
            } else {
                missing_shard += 1;
            }
        }
    }
    assert!(missing_shard > 0 && empty_minishard > 0, "{missing_shard} {empty_minishard}");
}

#[test]
fn scales_by_key_and_listing() {
    let c = files(None);
    let s = open(&c, "precomputed/multiscale_u64", ScaleRef::Key("8_8_80")).unwrap();
    assert_eq!((s.index(), s.volume().scales.len(), s.scale().key.as_str()), (1, 2, "8_8_80"));
    assert_eq!(s.scale().resolution, [8.0, 8.0, 80.0]);
    assert!(s.scale().sharding.is_none() && s.volume().scales[0].sharding.is_some());
    let e = open(&c, "precomputed/multiscale_u64", ScaleRef::Key("nope")).err().unwrap();
    assert_eq!(e.code, ErrorCode::InvalidSelection);
    assert!(e.message.contains("4_4_40"), "{e}");
    let s = open(&c, "precomputed/cseg_u32", ScaleRef::Index(0)).unwrap();
    assert_eq!(s.scale().voxel_offset, [10, 20, 30]);
    assert_eq!(s.locate(&[2, 1, 1, 0]).unwrap().key, "1_1_1/42-50_36-41_38-40");
}

fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// (offset, len) of every non-empty minishard index of a shard file.
fn minishard_ranges(blob: &[u8], minishard_bits: u32) -> Vec<(usize, usize)> {
    let end = 16usize << minishard_bits;
    let w = |i: usize| u64::from_le_bytes(blob[i..i + 8].try_into().unwrap()) as usize;
    (0..1usize << minishard_bits).map(|m| (end + w(16 * m), w(16 * m + 8) - w(16 * m))).filter(|r| r.1 > 0).collect()
}

/// Flipped and truncated shard indexes, minishard indexes, chunk data and unsharded chunk files:
/// every outcome is data or a typed error, never a panic.
#[test]
fn corruption_is_a_typed_error_never_a_panic() {
    let cases = manifest();
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let (mut errors, mut rounds) = (0, 0);
    let mut codes = std::collections::BTreeSet::new();
    for round in 0..240 {
        let k = &cases[round % cases.len()];
        let clean = files(None);
        let s = open(&clean, &k.path, ScaleRef::Index(k.scale)).unwrap();
        let mb = s.scale().sharding.map(|sh| sh.minishard_bits);
        let (r1, r2, r3) = (next(), next(), next());
        let patch: Patch = Box::new(move |p, mut b| {
            if p.ends_with("/info") || b.is_empty() {
                return b;
            }
            // Target: 0 = shard index, 1 = a minishard index, 2 = anywhere; or truncate.
            let (lo, len) = match (r3 % 4, mb) {
                (0, Some(mb)) => (0, (16usize << mb).min(b.len())),
                (1, Some(mb)) => {
                    let ranges = minishard_ranges(&b, mb);
                    if ranges.is_empty() {
                        (0, b.len())
                    } else {
                        ranges[(r1 % ranges.len() as u64) as usize]
                    }
                }
                (3, _) => {
                    b.truncate((r1 % b.len() as u64) as usize);
                    return b;
                }
                _ => (0, b.len()),
            };
            let len = len.min(b.len() - lo);
            if len == 0 {
                return b;
            }
            for j in 0..=(r2 % 3) {
                let i = lo + ((r1.wrapping_add(j * 0x9e37)) % len as u64) as usize;
                b[i] ^= (r2 >> (8 * j)) as u8 | 1;
            }
            b
        });
        let c = files(Some(patch));
        let src = Source::new(Config::default());
        for coords in chunks(&s) {
            rounds += 1;
            if let Err(e) = read(&src, &c, &k.path, &s, &coords) {
                codes.insert(e.code.as_str());
                errors += 1;
            }
        }
    }
    let allowed = ["CorruptShard", "CorruptChunk", "ChecksumMismatch", "TooLarge"];
    assert!(codes.iter().all(|c| allowed.contains(c)), "{codes:?}");
    assert!(errors > 100, "corruption should mostly be detected: {errors} errors in {rounds} reads");
    eprintln!("{rounds} corrupted reads, {errors} typed errors: {codes:?}");
}

#[test]
fn garbage_info_files_are_typed_errors() {
    let good = std::fs::read_to_string(root().join("data/precomputed/murmur_rgb_u8/info")).unwrap();
    let swap = |a: &str, b: &str| {
        assert!(good.contains(a), "{a}");
        good.replace(a, b)
    };
    let cases = [
        ("".to_string(), ErrorCode::InvalidMetadata),
        ("{\"data_type\":".to_string(), ErrorCode::InvalidMetadata),
        ("null".to_string(), ErrorCode::InvalidMetadata),
        (swap("\"uint8\"", "\"float64\""), ErrorCode::UnsupportedDataType),
        (swap("\"uint8\"", "7"), ErrorCode::InvalidMetadata),
        (swap("\"raw\",\"key\"", "\"zfpc\",\"key\""), ErrorCode::UnsupportedCodec),
        (swap("\"murmurhash3_x86_128\"", "\"crc32\""), ErrorCode::UnsupportedFormat),
        (
            swap("\"neuroglancer_uint64_sharded_v1\"", "\"neuroglancer_uint64_sharded_v2\""),
            ErrorCode::UnsupportedFormat,
        ),
        (swap("\"data_encoding\":\"gzip\"", "\"data_encoding\":\"lz4\""), ErrorCode::UnsupportedCodec),
        (swap("\"minishard_bits\":1", "\"minishard_bits\":61"), ErrorCode::InvalidMetadata),
        (swap("\"shard_bits\":4", "\"shard_bits\":-4"), ErrorCode::InvalidMetadata),
        (swap("\"num_channels\":3", "\"num_channels\":0"), ErrorCode::InvalidMetadata),
        (swap("\"size\":[40,33,9]", "\"size\":[40,33]"), ErrorCode::InvalidMetadata),
        (swap("\"chunk_sizes\":[[8,8,4]]", "\"chunk_sizes\":[[8,0,4]]"), ErrorCode::InvalidMetadata),
        (swap("\"chunk_sizes\":[[8,8,4]]", "\"chunk_sizes\":[[4000000,4000000,4000000]]"), ErrorCode::TooLarge),
        (swap("\"size\":[40,33,9]", "\"size\":[18446744073709551615,33,9]"), ErrorCode::InvalidMetadata),
        (swap("\"voxel_offset\":[3,-5,7]", "\"voxel_offset\":[3.5,-5,7]"), ErrorCode::InvalidMetadata),
        (swap("\"scales\":[", "\"scales\":[] , \"x\":["), ErrorCode::InvalidMetadata),
        (
            swap("\"@type\":\"neuroglancer_multiscale_volume\"", "\"@type\":\"neuroglancer_skeletons\""),
            ErrorCode::UnsupportedFormat,
        ),
    ];
    for (text, code) in cases {
        let e = Scale::from_info(text.as_bytes(), ScaleRef::Index(0)).err().unwrap();
        assert_eq!(e.code, code, "{text}: {e}");
    }
    // Random byte damage: parsing either succeeds or fails with a typed error.
    let mut next = xorshift(7);
    for _ in 0..500 {
        let mut b = good.clone().into_bytes();
        for _ in 0..(next() % 3 + 1) {
            let i = (next() % b.len() as u64) as usize;
            b[i] = b"0123456789[]{},:\"-.ex"[(next() % 21) as usize];
        }
        if let Ok(info) = VolumeInfo::parse(&b) {
            for i in 0..info.scales.len() {
                let _ = Scale::new(Rc::new(info.clone()), i);
            }
        }
    }
}

/// Mutated stored chunks (flips, truncations, garbage appended) fed straight to `decode`:
/// compressed_segmentation, jpeg, png and raw decoders return data or a typed error.
#[test]
fn chunk_decoders_survive_mutations() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let c = files(None);
    let (mut decoded, mut errors) = (0, 0);
    for k in manifest() {
        let s = open(&c, &k.path, ScaleRef::Index(k.scale)).unwrap();
        let src = Source::new(Config::default());
        for coords in chunks(&s) {
            let Located { key, levels } = s.locate(&coords).unwrap();
            let url = format!("{BASE}/data/{}/{key}", k.path);
            let levels: Vec<(&dyn IndexFormat, u64)> = levels.iter().map(|(f, k)| (f.as_ref(), *k)).collect();
            let Some(stored) = block_on(read_chunk(&src, &c, &url, &levels)).unwrap() else { continue };
            for _ in 0..40 {
                let mut b = stored.clone();
                match next() % 5 {
                    0 => b.truncate((next() % (b.len() as u64 + 1)) as usize),
                    1 => b.extend((0..next() % 64).map(|_| next() as u8)),
                    _ => {
                        for _ in 0..=next() % 4 {
                            if !b.is_empty() {
                                let i = (next() % b.len() as u64) as usize;
                                b[i] ^= next() as u8 | 1;
                            }
                        }
                    }
                }
                match s.decode(&coords, b, linked().as_deref()) {
                    Ok(_) => decoded += 1,
                    Err(e) => {
                        assert!(
                            [ErrorCode::CorruptChunk, ErrorCode::ChecksumMismatch, ErrorCode::TooLarge]
                                .contains(&e.code),
                            "{}: {e}",
                            k.name
                        );
                        errors += 1;
                    }
                }
            }
        }
    }
    assert!(errors > 1000 && decoded > 100, "{errors} errors, {decoded} decoded");
}

/// jpeg/png scales open whatever the decoders; a chunk decodes with the external decoder, and
/// without one is UnsupportedCodec naming it.
#[test]
fn image_encodings_need_their_external_decoder() {
    let c = files(None);
    let mut seen = 0;
    for k in every_case() {
        let enc = k.features.iter().find_map(|f| f.strip_prefix("encoding_")).unwrap().to_string();
        if enc != "jpeg" && enc != "png" || k.features.iter().any(|f| f == "missing_chunk") {
            continue;
        }
        seen += 1;
        let s = open(&c, &k.path, ScaleRef::Index(k.scale)).unwrap_or_else(|e| panic!("{}: {e}", k.name));
        assert_eq!(s.decoders(), vec![enc.as_str()], "{}", k.name);
        let coords = [0, 0, 0, 0];
        let url = format!("{BASE}/data/{}", k.path);
        let loc = s.locate(&coords).unwrap();
        let levels: Vec<(&dyn IndexFormat, u64)> = loc.levels.iter().map(|(f, key)| (f.as_ref(), *key)).collect();
        let store = Source::new(Config::default());
        let bytes = block_on(read_chunk(&store, &c, &format!("{url}/{}", loc.key), &levels)).unwrap().unwrap();
        let e = s.decode(&coords, bytes.clone(), None).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedCodec, "{e}");
        assert!(e.message.contains(&enc), "{e}");
        if supported(&enc) {
            s.decode(&coords, bytes, linked().as_deref()).unwrap_or_else(|e| panic!("{}: {e}", k.name));
        }
    }
    assert!(seen >= 2, "{seen} cases");
}
