//! Objects that change under an open array (issue 43): every read gives the values of one
//! version of each object it reads — or `Changed` — never a mix, whatever request the change
//! lands before; and where nothing changes, versions cost no request.
//!
//! Here the arrays are built by hand (their values known by construction): a sharded Zarr v3
//! array whose shard is rewritten with its chunks at other offsets and other values, the same
//! inside a zip archive, and an array whose metadata changes (an appended row). The fixtures of
//! `tests/fixtures/manifest-versions.json` (written by zarr-python, tifffile, h5py, tensorstore,
//! icechunk, kerchunk) are swept the same way in `every_kind_switched_at_every_request`.
#![cfg(not(target_arch = "wasm32"))]
use futures_executor::block_on;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::{Sel, Want};
use shardfetch::core::read::{read_chunk, read_region, Array, Got};
use shardfetch::core::transport::memory::{ObjectServer, Validators};
use shardfetch::core::transport::{Conditional, Config, Recheck};
use shardfetch::core::{Error, ErrorCode};
use std::cell::Cell;
use std::collections::BTreeMap;

const URL: &str = "mem://h/a.zarr";

/// A sharded uint8 array of `rows` × 4 (one shard of 4 × 4, inner chunks 2 × 2, no
/// compression, index at the end without a checksum): its `zarr.json`.
fn zarr_json(rows: u64) -> Vec<u8> {
    format!(
        r#"{{"zarr_format":3,"node_type":"array","shape":[{rows},4],"data_type":"uint8",
        "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":[4,4]}}}},
        "chunk_key_encoding":{{"name":"default","configuration":{{"separator":"/"}}}},
        "fill_value":0,"codecs":[{{"name":"sharding_indexed","configuration":{{"chunk_shape":[2,2],
        "codecs":[{{"name":"bytes","configuration":{{"endian":"little"}}}}],
        "index_codecs":[{{"name":"bytes","configuration":{{"endian":"little"}}}}],"index_location":"end"}}}}]}}"#
    )
    .into_bytes()
}

/// The first value of version `v`'s chunks.
fn base(v: u8) -> u8 {
    [0, 100, 200, 50][v as usize]
}

/// Version 3 stores no chunk (1, 1): it reads as the fill value, 0.
const ABSENT_IN_3: usize = 3;

/// Version `v` of the shard: inner chunk `i` (C order over the 2 × 2 grid) holds four bytes
/// `base(v) + i*10 + k`; the chunks are written in `order`, after `pad` unused bytes.
fn shard(v: u8, order: [usize; 4], pad: usize) -> Vec<u8> {
    let mut data = vec![0xeeu8; pad];
    let mut index = [(u64::MAX, u64::MAX); 4];
    for i in order {
        if v == 3 && i == ABSENT_IN_3 {
            continue;
        }
        index[i] = (data.len() as u64, 4);
        data.extend((0..4).map(|k| base(v) + i as u8 * 10 + k));
    }
    for (o, n) in index {
        data.extend(o.to_le_bytes());
        data.extend(n.to_le_bytes());
    }
    data
}

/// The values of chunk `coords` in version `v`.
fn chunk_values(v: u8, coords: &[u64]) -> Vec<u8> {
    let i = (coords[0] * 2 + coords[1]) as u8;
    if v == 3 && i as usize == ABSENT_IN_3 {
        return vec![0; 4];
    }
    (0..4).map(|k| base(v) + i * 10 + k).collect()
}

/// The whole 4 × 4 array in version `v`, C order.
fn array_values(v: u8) -> Vec<u8> {
    let mut out = vec![0u8; 16];
    for cy in 0..2u64 {
        for cx in 0..2u64 {
            let vals = chunk_values(v, &[cy, cx]);
            for (k, val) in vals.into_iter().enumerate() {
                let (y, x) = (cy * 2 + k as u64 / 2, cx * 2 + k as u64 % 2);
                out[(y * 4 + x) as usize] = val;
            }
        }
    }
    out
}

/// What a read gave, as the sweep counts it.
#[derive(Debug, PartialEq)]
enum Outcome {
    Version(u8),
    Changed,
}

/// A server of version 1 that becomes version 2 (`next`) just before request `at` (0: before
/// the first): every object `next` names is replaced, in one step, as a writer's atomic rename
/// does.
fn switching(first: Vec<(String, Vec<u8>)>, next: Vec<(String, Vec<u8>)>, at: usize, shown: Validators) -> ObjectServer {
    let switched = Cell::new(false);
    let later = next.clone();
    let s = ObjectServer::new().with_hook(move |s, _| {
        if !switched.get() && s.requests() > at {
            switched.set(true);
            for (url, bytes) in &later {
                s.put(url, bytes.clone());
            }
        }
        None
    });
    s.validators.set(shown);
    s.yields.set(1);
    // Merged reads' spans handed out as their bytes arrive, a switch landing between.
    s.pieces.set(3);
    for (url, bytes) in first {
        s.put(&url, bytes);
    }
    if at == 0 {
        for (url, bytes) in next {
            s.put(&url, bytes);
        }
    }
    s
}

fn opened(c: &ObjectServer, url: &str, config: Config) -> Result<Array, Error> {
    match block_on(open(c, url, OpenOptions { config, ..Default::default() }))? {
        Opened::Array(a) => Ok(*a),
        Opened::Group(_) => panic!("{url}: a group"),
    }
}

/// The outcome of a chunk read, or a panic naming what else it gave.
fn chunk_outcome(got: Result<Vec<u8>, Error>, coords: &[u64], what: &str) -> Outcome {
    match got {
        Ok(b) if b == chunk_values(1, coords) => Outcome::Version(1),
        Ok(b) if b == chunk_values(2, coords) => Outcome::Version(2),
        Ok(b) if b == chunk_values(3, coords) => Outcome::Version(3),
        Ok(b) => panic!("{what}: chunk {coords:?} is of no version: {b:?}"),
        Err(e) if e.code == ErrorCode::Changed => {
            assert!(e.message.contains("mem://h/"), "{what}: {e}");
            Outcome::Changed
        }
        Err(e) => panic!("{what}: chunk {coords:?}: {e}"),
    }
}

fn region_outcome(got: Result<Vec<u8>, Error>, what: &str) -> Outcome {
    match got {
        Ok(b) if b == array_values(1) => Outcome::Version(1),
        Ok(b) if b == array_values(2) => Outcome::Version(2),
        Ok(b) if b == array_values(3) => Outcome::Version(3),
        Ok(b) => panic!("{what}: the region mixes versions: {b:?} (1: {:?}, 2: {:?})", array_values(1), array_values(2)),
        Err(e) if e.code == ErrorCode::Changed => Outcome::Changed,
        Err(e) => panic!("{what}: {e}"),
    }
}

/// The reads a viewer makes, in turn: two chunks one by one, the four together, the whole
/// region, each chunk again. Each outcome with whether the read sent a request after the switch.
fn reads(a: &Array, c: &ObjectServer, switch_at: usize) -> Vec<(Outcome, bool)> {
    let mut out = Vec::new();
    let after = |before: usize| c.requests() > switch_at.max(before);
    for coords in [[0u64, 0], [1, 1]] {
        let before = c.requests();
        let got = block_on(read_chunk(a, c, &coords)).map(|ch| ch.bytes);
        out.push((chunk_outcome(got, &coords, "one chunk"), after(before)));
    }
    let list: Vec<Vec<u64>> = vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]];
    let plan = a.plan(Want::Chunks(&list)).unwrap();
    let before = c.requests();
    let mut got: Vec<Option<Result<Vec<u8>, Error>>> = vec![None, None, None, None];
    block_on(a.read(c, &plan, true, |i, r| {
        got[i] = Some(r.map(|g| match g {
            Got::Decoded(d) => d.bytes,
            // The fill value.
            _ => vec![0; 4],
        }));
        Ok(())
    }))
    .unwrap();
    let moved = after(before);
    for (i, g) in got.into_iter().enumerate() {
        out.push((chunk_outcome(g.expect("every chunk reported"), &list[i], "a batch"), moved));
    }
    let before = c.requests();
    let got = block_on(read_region(a, c, &[Sel::All, Sel::All])).map(|ch| ch.bytes);
    out.push((region_outcome(got, "the region"), after(before)));
    for coords in [[0u64, 1], [1, 0]] {
        let before = c.requests();
        let got = block_on(read_chunk(a, c, &coords)).map(|ch| ch.bytes);
        out.push((chunk_outcome(got, &coords, "again"), after(before)));
    }
    out
}

/// Every outcome of every sweep: one version per chunk and per region, and version 2 (or
/// `Changed`) for every read that asked the server anything after the switch.
fn check_sweep(first: Vec<(String, Vec<u8>)>, next: Vec<(String, Vec<u8>)>, open_url: &str, config: Config, shown: Validators) -> (usize, usize) {
    // Requests of the whole sequence without a switch: the switch lands before each of them.
    let quiet = switching(first.clone(), Vec::new(), usize::MAX, shown);
    let a = opened(&quiet, open_url, config.clone()).unwrap();
    let plain = reads(&a, &quiet, usize::MAX);
    assert!(plain.iter().all(|(o, _)| *o == Outcome::Version(1)), "{plain:?}");
    let total = quiet.requests();
    let (mut new, mut changed) = (0, 0);
    for at in 1..=total {
        let c = switching(first.clone(), next.clone(), at, shown);
        let a = match opened(&c, open_url, config.clone()) {
            Ok(a) => a,
            // The switch landed during the open.
            Err(e) if e.code == ErrorCode::Changed => continue,
            Err(e) => panic!("switch at {at}: open: {e}"),
        };
        for (k, (o, asked_after)) in reads(&a, &c, at).into_iter().enumerate() {
            match o {
                Outcome::Version(1) => assert!(!asked_after, "switch at {at}, read {k}: the old version after asking the server"),
                Outcome::Version(_) => new += 1,
                Outcome::Changed => changed += 1,
            }
        }
    }
    (new, changed)
}

fn version(v: u8) -> Vec<(String, Vec<u8>)> {
    let body = match v {
        1 => shard(1, [0, 1, 2, 3], 0),
        // Other values, the chunks at other offsets (reversed, after padding).
        2 => shard(2, [3, 2, 1, 0], 7),
        // Other values, one chunk no longer stored.
        _ => shard(3, [1, 0, 2, 3], 3),
    };
    vec![(format!("{URL}/zarr.json"), zarr_json(4)), (format!("{URL}/c/0/0"), body)]
}

#[test]
fn a_shard_rewritten_in_place_never_gives_mixed_values() {
    // Merged reads (one request per shard), and one request per chunk, several in flight at
    // once: the change then lands between the pieces of one read.
    let apart = Config { merge_max: 4, merge_gap: 0, ..Config::default() };
    for (shown, config) in [(Validators::Both, Config::default()), (Validators::Modified, Config::default()), (Validators::Both, apart)] {
        for next in [2, 3] {
            let (new, changed) = check_sweep(version(1), version(next), URL, config.clone(), shown);
            // Most reads after the switch resolve it and give the new values.
            assert!(new > 4 * changed, "{shown:?}, version {next}: {new} new, {changed} Changed");
        }
    }
}

#[test]
fn without_validators_nothing_is_promised_but_the_reads_stay_typed() {
    // No ETag, no Last-Modified (a server that sends neither): a change cannot be seen. Reads
    // give a version's values per chunk or a typed error; the sweep only checks nothing panics.
    for at in 1..12 {
        let c = switching(version(1), version(2), at, Validators::None);
        if let Ok(a) = opened(&c, URL, Config::default()) {
            for coords in [[0u64, 0], [1, 1], [0, 1]] {
                if let Err(e) = block_on(read_chunk(&a, &c, &coords)) {
                    assert!(!e.message.is_empty());
                }
            }
        }
    }
}

#[test]
fn a_change_is_resolved_by_reading_the_new_version_once() {
    let c = switching(version(1), version(2), usize::MAX, Validators::Both);
    let a = opened(&c, URL, Config::default()).unwrap();
    assert_eq!(block_on(read_chunk(&a, &c, &[0, 0])).unwrap().bytes, chunk_values(1, &[0, 0]));
    let before = c.requests();
    c.put(&format!("{URL}/c/0/0"), shard(2, [3, 2, 1, 0], 7));
    // The index is cached: the chunk's range is asked for at version 1's offset; the answer
    // shows version 2; the metadata is read again (unchanged), then the index and the chunk.
    let got = block_on(read_chunk(&a, &c, &[1, 1])).unwrap();
    assert_eq!(got.bytes, chunk_values(2, &[1, 1]));
    let log: Vec<String> = c.log()[before..].iter().map(|l| format!("{} {}", l.url, l.range.as_deref().unwrap_or("-"))).collect();
    assert_eq!(
        log,
        [
            "mem://h/a.zarr/c/0/0 bytes=12-15".to_string(),
            "mem://h/a.zarr/zarr.json -".into(),
            "mem://h/a.zarr/c/0/0 bytes=-64".into(),
            "mem://h/a.zarr/c/0/0 bytes=7-10".into(),
        ]
    );
    assert_eq!(a.stats().store.changes, 1);
    // Chunk (0, 0), cached nowhere but its range: version 2 now.
    assert_eq!(block_on(read_chunk(&a, &c, &[0, 0])).unwrap().bytes, chunk_values(2, &[0, 0]));
}

#[test]
fn an_object_that_changes_again_while_a_change_is_resolved_is_changed() {
    use std::rc::Rc;
    // Version 3 replaces version 2 just before the last request of the resolution (the chunk at
    // version 2's offsets, after the metadata and the index were read again): no one version
    // holds the answer, so the read is `Changed`, naming the object; the next read gives version 3.
    let at = Rc::new(Cell::new(usize::MAX));
    let when = at.clone();
    let c = ObjectServer::new().with_hook(move |s, _| {
        if s.requests() > when.get() {
            when.set(usize::MAX);
            s.put(&format!("{URL}/c/0/0"), shard(3, [1, 0, 2, 3], 3));
        }
        None
    });
    c.validators.set(Validators::Both);
    for (url, bytes) in version(1) {
        c.put(&url, bytes);
    }
    let a = opened(&c, URL, Config::default()).unwrap();
    assert_eq!(block_on(read_chunk(&a, &c, &[0, 0])).unwrap().bytes, chunk_values(1, &[0, 0]));
    c.put(&format!("{URL}/c/0/0"), shard(2, [3, 2, 1, 0], 7));
    let before = c.requests();
    at.set(before + 3);
    let e = block_on(read_chunk(&a, &c, &[1, 1])).unwrap_err();
    assert_eq!(e.code, ErrorCode::Changed, "{e}");
    assert!(e.message.contains("mem://h/a.zarr/c/0/0: changed twice during one read"), "{e}");
    let log: Vec<String> = c.log()[before..].iter().map(|l| format!("{} {}", l.url, l.range.as_deref().unwrap_or("-"))).collect();
    assert_eq!(log.len(), 4, "{log:?}");
    assert_eq!(block_on(read_chunk(&a, &c, &[1, 1])).unwrap().bytes, chunk_values(3, &[1, 1]));
    assert_eq!(block_on(read_chunk(&a, &c, &[0, 0])).unwrap().bytes, chunk_values(3, &[0, 0]));
}

#[test]
fn a_change_drops_only_what_came_from_the_object_that_changed() {
    // Two shards (4 × 8, shards 4 × 4): both indexes read, then shard (0, 0) rewritten. Its read
    // resolves the change; shard (0, 1)'s index is still trusted: its next chunk costs one request.
    let meta = String::from_utf8(zarr_json(4)).unwrap().replace("\"shape\":[4,4]", "\"shape\":[4,8]");
    assert!(meta.contains("[4,8]"));
    let objects = vec![
        (format!("{URL}/zarr.json"), meta.into_bytes()),
        (format!("{URL}/c/0/0"), shard(1, [0, 1, 2, 3], 0)),
        (format!("{URL}/c/0/1"), shard(1, [2, 0, 3, 1], 5)),
    ];
    let c = switching(objects, Vec::new(), usize::MAX, Validators::Both);
    let a = opened(&c, URL, Config::default()).unwrap();
    assert_eq!(a.metadata().shape, [4, 8]);
    // Inner chunk (y, x) is chunk (y % 2, x % 2) of its shard.
    let local = |y: u64, x: u64| chunk_values(1, &[y % 2, x % 2]);
    assert_eq!(block_on(read_chunk(&a, &c, &[0, 0])).unwrap().bytes, local(0, 0));
    assert_eq!(block_on(read_chunk(&a, &c, &[0, 2])).unwrap().bytes, local(0, 2));
    c.put(&format!("{URL}/c/0/0"), shard(2, [3, 2, 1, 0], 7));
    assert_eq!(block_on(read_chunk(&a, &c, &[1, 1])).unwrap().bytes, chunk_values(2, &[1, 1]));
    assert_eq!(a.stats().store.changes, 1);
    let before = c.requests();
    assert_eq!(block_on(read_chunk(&a, &c, &[1, 3])).unwrap().bytes, local(1, 3));
    let log: Vec<String> = c.log()[before..].iter().map(|l| format!("{} {}", l.url, l.range.as_deref().unwrap_or("-"))).collect();
    assert_eq!(log, ["mem://h/a.zarr/c/0/1 bytes=13-16".to_string()], "shard (0, 1): its chunk only, from its cached index");
}

#[test]
fn metadata_that_changed_is_changed_and_a_new_open_reads_the_new_version() {
    let c = switching(version(1), Vec::new(), usize::MAX, Validators::Both);
    let a = opened(&c, URL, Config::default()).unwrap();
    assert_eq!(block_on(read_chunk(&a, &c, &[0, 0])).unwrap().bytes, chunk_values(1, &[0, 0]));
    // An appended row: the metadata says 5 rows now, the shard holds version 2.
    c.put(&format!("{URL}/zarr.json"), zarr_json(5));
    c.put(&format!("{URL}/c/0/0"), shard(2, [3, 2, 1, 0], 7));
    let e = block_on(read_chunk(&a, &c, &[1, 1])).unwrap_err();
    assert_eq!(e.code, ErrorCode::Changed, "{e}");
    assert!(e.message.contains("mem://h/a.zarr/zarr.json: the array's metadata changed while it was open (ETag \"v1\" → ETag \"v3\")"), "{e}");
    let e = block_on(read_region(&a, &c, &[Sel::All, Sel::All])).unwrap_err();
    assert_eq!(e.code, ErrorCode::Changed, "{e}");
    let b = opened(&c, URL, Config::default()).unwrap();
    assert_eq!(b.metadata().shape, [5, 4]);
    assert_eq!(block_on(read_chunk(&b, &c, &[1, 1])).unwrap().bytes, chunk_values(2, &[1, 1]));
}

#[test]
fn nothing_changed_costs_no_request_with_or_without_validators() {
    let mut counts = Vec::new();
    for shown in [Validators::None, Validators::Modified, Validators::Both] {
        let c = switching(version(1), Vec::new(), usize::MAX, shown);
        let a = opened(&c, URL, Config::default()).unwrap();
        let out = reads(&a, &c, usize::MAX);
        assert!(out.iter().all(|(o, _)| *o == Outcome::Version(1)));
        counts.push((c.requests(), c.log()));
    }
    assert_eq!(counts[0], counts[1]);
    assert_eq!(counts[0], counts[2]);
}

#[test]
fn conditional_reads_refuse_a_stale_answer() {
    for how in [Conditional::IfMatch, Conditional::IfRange] {
        let config = Config { conditional: how, ..Config::default() };
        let (new, changed) = check_sweep(version(1), version(2), URL, config.clone(), Validators::Both);
        assert!(new > changed, "{how:?}: {new} new, {changed} Changed");
        // The condition goes with each range of an object whose version is known.
        let c = switching(version(1), Vec::new(), usize::MAX, Validators::Both);
        let a = opened(&c, URL, config).unwrap();
        block_on(read_chunk(&a, &c, &[0, 0])).unwrap();
        block_on(read_chunk(&a, &c, &[1, 1])).unwrap();
        assert_eq!(c.requests(), 4, "{how:?}: no request more for the conditions");
    }
}

#[test]
fn recheck_after_a_time_asks_again_and_sees_an_append() {
    let config = Config { recheck: Recheck::After(1000.0), ..Config::default() };
    let c = switching(version(1), Vec::new(), usize::MAX, Validators::Both);
    let a = opened(&c, URL, config).unwrap();
    assert_eq!(block_on(read_chunk(&a, &c, &[0, 0])).unwrap().bytes, chunk_values(1, &[0, 0]));
    // Within the time: nothing asked again.
    let before = c.requests();
    c.clock.set(c.clock.get() + 500.0);
    block_on(read_chunk(&a, &c, &[1, 1])).unwrap();
    assert_eq!(c.requests(), before + 1, "{:?}", &c.log()[before..]);
    // Later: the metadata and the shard are confirmed (a GET of zarr.json, a HEAD of the shard).
    c.clock.set(c.clock.get() + 1500.0);
    let before = c.requests();
    assert_eq!(block_on(read_chunk(&a, &c, &[1, 1])).unwrap().bytes, chunk_values(1, &[1, 1]));
    assert_eq!(a.stats().store.revalidations, 1);
    assert!(c.requests() <= before + 3, "{:?}", &c.log()[before..]);
    // An append: seen at the next check, without any chunk read of the old version.
    c.put(&format!("{URL}/zarr.json"), zarr_json(5));
    c.clock.set(c.clock.get() + 1500.0);
    let e = block_on(read_chunk(&a, &c, &[0, 0])).unwrap_err();
    assert_eq!(e.code, ErrorCode::Changed, "{e}");
}

#[test]
fn never_trusts_the_first_version_for_good() {
    let config = Config { recheck: Recheck::Never, ..Config::default() };
    let c = switching(version(1), Vec::new(), usize::MAX, Validators::Both);
    let a = opened(&c, URL, config).unwrap();
    block_on(read_chunk(&a, &c, &[0, 0])).unwrap();
    c.put(&format!("{URL}/c/0/0"), shard(1, [0, 1, 2, 3], 0));
    // Same bytes, a new ETag: not compared, so no change is seen.
    assert_eq!(block_on(read_chunk(&a, &c, &[1, 1])).unwrap().bytes, chunk_values(1, &[1, 1]));
    assert_eq!(a.stats().store.changes, 0);
}


// ---- The fixtures of manifest-versions.json: every store kind, written by its own writer. ----

mod fixtures {
    use super::*;
    use serde_json::Value;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    fn fixtures_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
    }

    /// One version of a case: the writer's values (uint16, C order) and shape, and whether the
    /// array's metadata differs from version `a`'s.
    pub struct Version {
        pub values: Vec<u16>,
        pub shape: Vec<u64>,
        pub metadata_changed: bool,
        pub objects: Vec<String>,
        /// Per read chunk: (grid index, the object holding it).
        pub layout: Vec<(Vec<u64>, String)>,
    }

    pub struct VCase {
        pub name: String,
        /// The version read is fixed at open (an Icechunk branch resolved to its snapshot,
        /// whose files never change): under `recheck: "open"` every read is of it.
        pub pinned: bool,
        /// The objects' URL base (the same for every version) and each version's folder.
        pub base: String,
        root: String,
        pub open: String,
        pub options: Value,
        pub chunk: Vec<u64>,
        pub versions: BTreeMap<String, Version>,
    }

    pub fn cases() -> Vec<VCase> {
        let m: Value = serde_json::from_slice(&std::fs::read(fixtures_dir().join("manifest-versions.json")).unwrap()).unwrap();
        let nums = |v: &Value| v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect::<Vec<u64>>();
        m["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                assert_eq!(c["dtype"], "uint16", "{}", c["name"]);
                let root = c["root"].as_str().unwrap().to_string();
                let versions = c["versions"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| {
                        let bytes = std::fs::read(fixtures_dir().join(v["expected"].as_str().unwrap())).unwrap();
                        let values = bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
                        let objects = c["objects"][k].as_array().unwrap().iter().map(|o| o.as_str().unwrap().to_string()).collect();
                        let layout = c["layout"][k]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|e| (nums(&e[0]), e[1].as_str().unwrap().to_string()))
                            .collect();
                        let version = Version {
                            values,
                            shape: nums(&v["shape"]),
                            metadata_changed: v["metadataChanged"].as_bool().unwrap_or(false),
                            objects,
                            layout,
                        };
                        (k.clone(), version)
                    })
                    .collect();
                VCase {
                    name: c["name"].as_str().unwrap().into(),
                    pinned: c["kind"] == "icechunk",
                    base: format!("mem://v/{}", root.replace("/{version}", "")),
                    root,
                    open: c["open"].as_str().unwrap().into(),
                    options: c["options"].clone(),
                    chunk: nums(&c["chunkShape"]),
                    versions,
                }
            })
            .collect()
    }

    impl VCase {
        /// The files of version `v`: (URL, bytes).
        pub fn files(&self, v: &str) -> Vec<(String, Vec<u8>)> {
            let dir = fixtures_dir().join("data").join(self.root.replace("{version}", v));
            self.versions[v].objects.iter().map(|o| (format!("{}/{o}", self.base), std::fs::read(dir.join(o)).unwrap())).collect()
        }

        /// The URLs of version `from`'s objects that version `to` does not have.
        pub fn removed(&self, from: &str, to: &str) -> Vec<String> {
            let kept = &self.versions[to].objects;
            self.versions[from].objects.iter().filter(|o| !kept.contains(o)).map(|o| format!("{}/{o}", self.base)).collect()
        }

        pub fn url(&self) -> String {
            if self.open.is_empty() {
                self.base.clone()
            } else {
                format!("{}/{}", self.base, self.open)
            }
        }

        pub fn options(&self, config: Config) -> OpenOptions {
            let o = &self.options;
            let names = shardfetch::core::store::registry::OPTIONS.iter().flat_map(|(_, names)| names.iter());
            OpenOptions {
                format: o.get("format").and_then(Value::as_str).map(|f| shardfetch::core::metadata::Format::parse(f).unwrap()),
                path: o.get("path").and_then(Value::as_str).unwrap_or("").into(),
                scale: o.get("scale").map(|s| s.as_str().map(String::from).unwrap_or_else(|| s.to_string())),
                store: o.get("store").and_then(Value::as_str).map(String::from),
                store_settings: names.filter_map(|n| Some((n.to_string(), o.get(*n)?.as_str()?.to_string()))).collect(),
                config,
                ..OpenOptions::default()
            }
        }

        /// Element `at` (array coordinates) of version `v`, if inside its shape.
        pub fn value(&self, v: &str, at: &[u64]) -> Option<u16> {
            let ver = &self.versions[v];
            let mut i = 0u64;
            for (&x, &n) in at.iter().zip(&ver.shape) {
                if x >= n {
                    return None;
                }
                i = i * n + x;
            }
            ver.values.get(i as usize).copied()
        }
    }
}

use fixtures::VCase;

/// Each element of `got` (a chunk or region: `shape`, `stride` in elements, `origin` its first
/// element's array coordinates), uint16.
fn elements(bytes: &[u8], shape: &[u64], stride: &[u64], origin: &[u64], mut each: impl FnMut(&[u64], u16)) {
    let n: u64 = shape.iter().product();
    let mut idx = vec![0u64; shape.len()];
    for _ in 0..n {
        let at: u64 = idx.iter().zip(stride).map(|(i, s)| i * s).sum();
        let v = u16::from_le_bytes([bytes[2 * at as usize], bytes[2 * at as usize + 1]]);
        let pos: Vec<u64> = idx.iter().zip(origin).map(|(i, o)| i + o).collect();
        each(&pos, v);
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// The versions (among those of the array's `shape`: those it can read) whose values the box
/// holds, all of it.
fn versions_of(case: &VCase, array: &[u64], bytes: &[u8], shape: &[u64], stride: &[u64], origin: &[u64]) -> Vec<String> {
    let mut out = Vec::new();
    for (v, ver) in &case.versions {
        if ver.shape != array {
            continue;
        }
        let mut all = true;
        elements(bytes, shape, stride, origin, |at, x| all &= case.value(v, at) == Some(x));
        if all {
            out.push(v.clone());
        }
    }
    out
}

/// A server of `case`'s version `a` that becomes version `to` just before request `at`.
fn case_server(case: &VCase, to: &str, at: usize, shown: Validators) -> ObjectServer {
    let next = case.files(to);
    let removed = case.removed("a", to);
    let switched = Cell::new(false);
    let s = ObjectServer::new().with_hook(move |s, _| {
        if !switched.get() && s.requests() > at {
            switched.set(true);
            switch(s, &next, &removed);
        }
        None
    });
    s.validators.set(shown);
    s.yields.set(1);
    s.pieces.set(3);
    for (url, bytes) in case.files("a") {
        s.put(&url, bytes);
    }
    s
}

/// The objects of another version put in place, as a writer does: only those whose bytes
/// differ are written (an unchanged object keeps its version), those it lacks removed.
fn switch(s: &ObjectServer, next: &[(String, Vec<u8>)], removed: &[String]) {
    for (url, bytes) in next {
        if s.object(url).as_ref() != Some(bytes) {
            s.put(url, bytes.clone());
        }
    }
    for url in removed {
        s.delete(url);
    }
}

/// What the reads of one sweep gave: chunks or regions of a version, or `Changed`.
#[derive(Default, Debug)]
struct Tally {
    old: usize,
    new: usize,
    changed: usize,
}

/// The reads a viewer makes — the first and last chunks one by one, every chunk together, the
/// whole array, the first chunk again — each checked: a chunk holds one version's values; a
/// region one version's per object (a store of several objects has no version of its own); or
/// `Changed`. Any other error or value fails.
fn case_reads(case: &VCase, a: &Array, c: &ObjectServer, tally: &mut Tally, what: &str) {
    // The version the array was opened at (the switch may land during the open): its layout.
    let shape = a.metadata().shape.clone();
    let opened = case.versions.values().find(|v| v.shape == shape).unwrap_or_else(|| panic!("{what}: opened at shape {shape:?}"));
    // (Grid indexes as the writer gives them: a precomputed volume's without its channel axis.)
    let pad = |g: &Vec<u64>| g.iter().copied().chain(std::iter::repeat(0)).take(shape.len()).collect::<Vec<u64>>();
    let layout: Vec<(Vec<u64>, String)> = opened.layout.iter().map(|(g, o)| (pad(g), o.clone())).collect();
    let layout = &layout;
    let grid: Vec<Vec<u64>> = layout.iter().map(|(g, _)| g.clone()).collect();
    let changed = |e: &Error, what: &str| {
        assert_eq!(e.code, ErrorCode::Changed, "{what}: {e}");
        assert!(e.message.contains("mem://v/"), "{what}: {e}");
    };
    let origin = |g: &[u64]| g.iter().zip(&case.chunk).map(|(i, n)| i * n).collect::<Vec<u64>>();
    let one = |g: &[u64]| match block_on(read_chunk(a, c, g)) {
        Ok(ch) => versions_of(case, &shape, &ch.bytes, &ch.shape, &ch.stride, &origin(g)),
        Err(e) => {
            changed(&e, &format!("{what}: chunk {g:?}"));
            Vec::from(["changed".to_string()])
        }
    };
    let record = |vs: Vec<String>, w: &str, tally: &mut Tally| {
        if vs == ["changed"] {
            tally.changed += 1;
        } else {
            assert!(!vs.is_empty(), "{w}: values of no version");
            // (A version with the old values counts as new: nothing to tell them apart by.)
            if vs.iter().all(|v| v == "a") {
                tally.old += 1
            } else {
                tally.new += 1
            }
        }
    };
    for g in [grid[0].clone(), grid[grid.len() - 1].clone()] {
        let vs = one(&g);
        record(vs, &format!("{what}: chunk {g:?}"), tally);
    }
    let plan = a.plan(Want::Chunks(&grid)).unwrap();
    let mut got: Vec<Option<Result<Got, Error>>> = (0..grid.len()).map(|_| None).collect();
    let whole = block_on(a.read(c, &plan, true, |i, r| {
        got[i] = Some(r);
        Ok(())
    }));
    // (The read as a whole may fail: the metadata found changed before any chunk.)
    if let Err(e) = whole {
        got.iter_mut().for_each(|g| *g = Some(Err(e.clone())));
    }
    for (i, r) in got.into_iter().enumerate() {
        let g = &grid[i];
        let w = format!("{what}: batch chunk {g:?}");
        match r.expect("every chunk reported") {
            Ok(Got::Decoded(d)) => {
                let ch = a.chunk_of(g, d);
                let vs = versions_of(case, &shape, &ch.bytes, &ch.shape, &ch.stride, &origin(g));
                record(vs, &w, tally);
            }
            Ok(_) => {
                let ch = a.fill_chunk(g).unwrap();
                record(versions_of(case, &shape, &ch.bytes, &ch.shape, &ch.stride, &origin(g)), &w, tally);
            }
            Err(e) => {
                changed(&e, &w);
                tally.changed += 1;
            }
        }
    }
    let sel: Vec<Sel> = a.metadata().shape.iter().map(|_| Sel::All).collect();
    match block_on(read_region(a, c, &sel)) {
        Ok(r) => {
            // Per object: every chunk of it of one version.
            let stride = shardfetch::core::nd::c_strides(&r.shape);
            let mut by_object: BTreeMap<&str, Vec<Vec<String>>> = BTreeMap::new();
            for (g, object) in layout {
                let o = origin(g);
                let box_shape: Vec<u64> = o.iter().zip(&case.chunk).zip(&r.shape).map(|((o, n), s)| (*n).min(s - o)).collect();
                let at: u64 = o.iter().zip(&stride).map(|(o, s)| o * s).sum();
                let bytes = &r.bytes[2 * at as usize..];
                by_object.entry(object).or_default().push(versions_of(case, &shape, bytes, &box_shape, &stride, &o));
            }
            for (object, chunks) in by_object {
                let common = chunks.iter().skip(1).fold(chunks[0].clone(), |acc, vs| acc.into_iter().filter(|v| vs.contains(v)).collect());
                assert!(!common.is_empty(), "{what}: the region's chunks of {object} are of no one version: {chunks:?}");
                record(common, &format!("{what}: region, {object}"), tally);
            }
        }
        Err(e) => {
            changed(&e, &format!("{what}: region"));
            tally.changed += 1;
        }
    }
    let vs = one(&grid[0]);
    record(vs, &format!("{what}: chunk {:?} again", grid[0]), tally);
}

fn open_case(case: &VCase, c: &ObjectServer, config: Config) -> Result<Array, Error> {
    match block_on(open(c, &case.url(), case.options(config)))? {
        Opened::Array(a) => Ok(*a),
        Opened::Group(_) => panic!("{}: a group", case.name),
    }
}

/// Every case, switched from version `a` to each other version before each request of the
/// reads above, with both validators and with `Last-Modified` only (what a page sees of a
/// server that does not expose `ETag`): 0 results of no version, or of two versions of one
/// object. Then, with warm caches, a switch between two reads: the read after it gives the new
/// version (or `Changed`: always so when the metadata changed), the one after that the new
/// version.
#[test]
fn every_kind_switched_at_every_request() {
    let cases = fixtures::cases();
    assert!(cases.len() >= 9);
    let mut summary = Vec::new();
    for case in &cases {
        for shown in [Validators::Both, Validators::Modified] {
            let quiet = case_server(case, "a", usize::MAX, shown);
            let a = open_case(case, &quiet, Config::default()).unwrap_or_else(|e| panic!("{}: {e}", case.name));
            let mut tally = Tally::default();
            case_reads(case, &a, &quiet, &mut tally, &case.name);
            assert_eq!((tally.old + tally.new > 0, tally.changed), (true, 0), "{}: without a switch", case.name);
            let total = quiet.requests();
            for to in case.versions.keys().filter(|v| *v != "a") {
                let mut tally = Tally::default();
                // Whether any read asked the server anything after a switch (a small file read
                // whole at open is never asked again).
                let mut asked = false;
                for at in 1..=total {
                    let c = case_server(case, to, at, shown);
                    let what = format!("{} a→{to} at request {at} ({shown:?})", case.name);
                    let a = match open_case(case, &c, Config::default()) {
                        Ok(a) => a,
                        Err(e) if e.code == ErrorCode::Changed => continue,
                        Err(e) => panic!("{what}: open: {e}"),
                    };
                    let before = c.requests();
                    case_reads(case, &a, &c, &mut tally, &what);
                    asked |= c.requests() > before.max(at + 1);
                }
                summary.push(format!("{} a→{to} {shown:?}: {tally:?}, asked after a switch: {asked}", case.name));
                if !case.versions[to].metadata_changed && !case.pinned && asked {
                    assert!(tally.new > 0, "{} a→{to}: the new version was never read", case.name);
                }
                if case.pinned {
                    assert_eq!((tally.new, tally.changed), (0, 0), "{} a→{to}: a snapshot read at open is the one read", case.name);
                }
            }
        }
        // A warm array, then the switch, then two reads: with `recheck` of 1 s, two seconds
        // later (what was read is confirmed before use), and with the default (nothing asked
        // again while nothing shows a change: a read served without a request may be the old
        // version's).
        for to in case.versions.keys().filter(|v| *v != "a") {
            for recheck in [Recheck::After(1000.0), Recheck::Open] {
                warm_switch(case, to, recheck);
            }
        }
    }
    eprintln!("{}", summary.join("\n"));
}

/// The whole array read, then `case` switched to version `to`, then read twice more.
fn warm_switch(case: &VCase, to: &str, recheck: Recheck) {
    let what = format!("{} warm a→{to} ({recheck:?})", case.name);
    let c = case_server(case, to, usize::MAX, Validators::Both);
    let config = Config { recheck, ..Config::default() };
    let a = open_case(case, &c, config.clone()).unwrap();
    let sel: Vec<Sel> = a.metadata().shape.iter().map(|_| Sel::All).collect();
    block_on(read_region(&a, &c, &sel)).unwrap();
    switch(&c, &case.files(to), &case.removed("a", to));
    c.clock.set(c.clock.get() + 2000.0);
    let whole = |r: &shardfetch::core::read::Chunk| {
        let zero = vec![0u64; r.shape.len()];
        versions_of(case, &r.shape, &r.bytes, &r.shape, &shardfetch::core::nd::c_strides(&r.shape), &zero)
    };
    let fresh = matches!(recheck, Recheck::After(_));
    for k in 0..2 {
        let before = c.requests();
        let got = block_on(read_region(&a, &c, &sel));
        let asked = c.requests() > before;
        match got {
            Ok(r) => {
                let vs = whole(&r);
                let new = !case.versions[to].metadata_changed && vs.iter().any(|v| v == to);
                // The old version only from what was kept, without a word with the server (or
                // from the snapshot an Icechunk branch was resolved to at open).
                let old = vs.iter().any(|v| v == "a") && (!asked || case.pinned) && !fresh;
                assert!(new || old, "{what}: read {k} gave {vs:?} (asked the server: {asked})");
            }
            Err(e) if e.code == ErrorCode::Changed && (k == 0 || case.versions[to].metadata_changed) => {}
            Err(e) => panic!("{what}: read {k}: {e}"),
        }
    }
    if case.versions[to].metadata_changed && fresh {
        // Seen within the time, and a new open reads the new version.
        assert_eq!(block_on(read_region(&a, &c, &sel)).map(|_| ()).unwrap_err().code, ErrorCode::Changed, "{what}");
        let b = open_case(case, &c, config).unwrap();
        assert_eq!(b.metadata().shape, case.versions[to].shape, "{what}");
        let sel: Vec<Sel> = b.metadata().shape.iter().map(|_| Sel::All).collect();
        let r = block_on(read_region(&b, &c, &sel)).unwrap();
        assert_eq!(whole(&r), [to.to_string()], "{what}: a new open");
    }
}

/// A reference file's target uploaded after it (a bucket copied in any order): its first read
/// looks newer than the file saying where its bytes are; that file is confirmed (one `HEAD`) and
/// the read goes on — values as written, no error.
#[test]
fn a_target_newer_than_its_references_costs_one_head_not_an_error() {
    let refs = r#"{"version":1,"refs":{".zgroup":"{\"zarr_format\":2}",
        "x/.zarray":"{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"|u1\",\"compressor\":null,\"fill_value\":0,\"order\":\"C\",\"filters\":null}",
        "x/0":["t.bin",0,2],"x/1":["t.bin",2,2]}}"#;
    let s = ObjectServer::new();
    s.put("mem://h/refs.json", refs.as_bytes().to_vec());
    s.put("mem://h/t.bin", vec![1u8, 2, 3, 4]);
    let a = match block_on(open(&s, "mem://h/refs.json", OpenOptions { path: "x".into(), ..Default::default() })).unwrap() {
        Opened::Array(a) => *a,
        _ => panic!("a group"),
    };
    let before = s.requests();
    assert_eq!(block_on(read_chunk(&a, &s, &[1])).unwrap().bytes, [3, 4]);
    let log: Vec<String> = s.log()[before..].iter().map(|l| format!("{:?} {} {}", l.method, l.url, l.range.as_deref().unwrap_or("-"))).collect();
    assert_eq!(log, ["Get mem://h/t.bin bytes=2-3", "Head mem://h/refs.json -", "Get mem://h/t.bin bytes=2-3"]);
    let before = s.requests();
    assert_eq!(block_on(read_chunk(&a, &s, &[0])).unwrap().bytes, [1, 2]);
    assert_eq!(s.requests(), before + 1, "once per target");
}


/// A region's merged read hands its spans out as the answer's bytes arrive (issue 46: decoded
/// while the rest downloads): an answer cut short every time still serves the spans that
/// arrived whole, of the version their index was read in; the rest fail. Without progress (a
/// client that reads bodies whole), all fail.
#[test]
fn spans_that_arrived_are_served_before_the_answer_ends() {
    for pieces in [0u32, 4] {
        let s = ObjectServer::new().with_hook(|s, req| {
            // The shard's data (16 bytes at 0, four chunks in order) always cut after 9 bytes.
            let r = req.range.as_deref()?;
            if r != "bytes=0-15" {
                return None;
            }
            let mut a = s.answer(req);
            a.body.truncate(9);
            Some(Ok(a))
        });
        s.pieces.set(pieces);
        s.put(&format!("{URL}/zarr.json"), zarr_json(4));
        s.put(&format!("{URL}/c/0/0"), shard(1, [0, 1, 2, 3], 0));
        let a = opened(&s, URL, Config::default()).unwrap();
        // (The index read first: four chunks of a shard not known yet are one GET of it.)
        assert_eq!(block_on(read_chunk(&a, &s, &[1, 1])).unwrap().bytes, chunk_values(1, &[1, 1]));
        // A region's pieces, as its assembly receives them.
        let plan = a.plan(Want::Region(&[Sel::All, Sel::All])).unwrap();
        let list: Vec<Vec<u64>> = plan.pieces.iter().map(|p| p.coords.clone()).collect();
        assert_eq!(list, [[0, 0], [0, 1], [1, 0], [1, 1]]);
        let mut got: Vec<Option<Result<Vec<u8>, Error>>> = vec![None, None, None, None];
        block_on(a.read(&s, &plan, true, |i, r| {
            assert!(got[i].is_none(), "chunk {i} handed out twice");
            got[i] = Some(r.map(|g| match g {
                Got::Decoded(d) => d.bytes,
                _ => panic!("absent"),
            }));
            Ok(())
        }))
        .unwrap();
        let ok: Vec<bool> = got.iter().map(|g| g.as_ref().unwrap().is_ok()).collect();
        // Bytes 0..8 are chunks 0 and 1 (C order, written in order).
        let expect = if pieces > 0 { [true, true, false, false] } else { [false; 4] };
        assert_eq!(ok, expect, "pieces {pieces}");
        for (i, g) in got.into_iter().enumerate() {
            match g.unwrap() {
                Ok(b) => assert_eq!(b, chunk_values(1, &list[i]), "chunk {i}"),
                Err(e) => assert_eq!(e.code, ErrorCode::Network, "chunk {i}: {e}"),
            }
        }
        let requests = s.log().iter().filter(|l| l.range.as_deref() == Some("bytes=0-15")).count();
        assert!(requests > 1, "retried: {requests}");
    }
}
