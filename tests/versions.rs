//! Objects that change under an open array (issue 43): every read gives the values of one
//! version of each object it reads — or `Changed` — never a mix, whatever request the change
//! lands before; and where nothing changes, versions cost no request.
//!
//! Here the arrays are built by hand (their values known by construction): a sharded Zarr v3
//! array whose shard is rewritten with its chunks at other offsets and other values, the same
//! inside a zip archive, and an array whose metadata changes (an appended row). The fixtures of
//! `tests/fixtures/manifest-versions.json` (written by zarr-python, tifffile, h5py, tensorstore,
//! icechunk, kerchunk) are swept the same way in `every_kind_switched_at_every_request`.
use futures_executor::block_on;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::{Sel, Want};
use shardfetch::core::read::{read_chunk, read_region, Array, Got};
use shardfetch::core::transport::memory::{ObjectServer, Validators};
use shardfetch::core::transport::{Conditional, Config, Recheck};
use shardfetch::core::{Error, ErrorCode};
use std::cell::Cell;

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
fn metadata_that_changed_is_changed_and_a_new_open_reads_the_new_version() {
    let c = switching(version(1), Vec::new(), usize::MAX, Validators::Both);
    let a = opened(&c, URL, Config::default()).unwrap();
    assert_eq!(block_on(read_chunk(&a, &c, &[0, 0])).unwrap().bytes, chunk_values(1, &[0, 0]));
    // An appended row: the metadata says 5 rows now, the shard holds version 2.
    c.put(&format!("{URL}/zarr.json"), zarr_json(5));
    c.put(&format!("{URL}/c/0/0"), shard(2, [3, 2, 1, 0], 7));
    let e = block_on(read_chunk(&a, &c, &[1, 1])).unwrap_err();
    assert_eq!(e.code, ErrorCode::Changed, "{e}");
    assert!(e.message.contains("mem://h/a.zarr/zarr.json: the array's metadata changed"), "{e}");
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

