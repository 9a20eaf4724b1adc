//! Transient and permanent faults, stalls, a clock: the retry policy of the storage layer, seen
//! through the whole read path over the committed fixtures (issue 14). The server here is a
//! well-behaved file server with faults injected by a seeded generator; time is virtual (a
//! sleep advances the clock), so budgets are exact and the tests take no wall time.
#![cfg(not(target_arch = "wasm32"))]
mod common;

use common::{all_cases, check_case, fixture_files, writers_case, writers_chunk, writers_region, Case, Patch};
use futures_executor::block_on;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::Sel;
use shardfetch::core::read::{read_chunk, read_region, Array};
use shardfetch::core::transport::memory::{answered_range, span, Logged, ObjectServer, Serve};
use shardfetch::core::transport::{Config, Request, Response, Retry};
use shardfetch::core::{Error, ErrorCode, Result};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

const BASE: &str = "mem://fixtures";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Fault {
    /// 503 with `Retry-After: 1` (S3's SlowDown).
    SlowDown,
    Status500,
    /// The connection reset before the answer.
    Reset,
    /// The body cut short: fewer bytes than its Content-Length.
    Truncated,
    /// A 206 for other bytes than those asked (with an honest Content-Range).
    WrongRange,
    /// No answer: the client gives up after the stall time.
    Stall,
}

const TRANSIENT: [Fault; 6] =
    [Fault::SlowDown, Fault::Status500, Fault::Reset, Fault::Truncated, Fault::WrongRange, Fault::Stall];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Faults injected into a file server's answers by a seeded generator (the backoff's jitter
/// draws from it too), and what was injected.
#[derive(Default)]
struct Faults {
    /// Chance that a request meets a fault (transient mode).
    rate: f64,
    /// Every request of `data/` meets this fault (permanent mode).
    permanent: Option<Fault>,
    /// Bytes flipped in the objects whose path contains the key.
    corrupt: RefCell<Vec<(String, usize)>>,
    seed: Cell<u64>,
    injected: RefCell<HashMap<Fault, u64>>,
    /// Faults in a row per request, so that a transient fault never outlasts the attempts,
    /// and requests that already had a wrong range (the store refetches those only once).
    in_a_row: RefCell<HashMap<(String, Option<String>), (u32, bool)>>,
}

/// A file server over `tests/fixtures` answering Range like S3, with `rate` transient faults.
fn transient(rate: f64, seed: u64) -> (ObjectServer, Rc<Faults>) {
    faulty(Faults { rate, seed: Cell::new(seed), ..Default::default() })
}

/// The same with `f` for every request of `data/`.
fn permanent(f: Fault) -> (ObjectServer, Rc<Faults>) {
    faulty(Faults { permanent: Some(f), seed: Cell::new(1), ..Default::default() })
}

fn faulty(faults: Faults) -> (ObjectServer, Rc<Faults>) {
    let faults = Rc::new(faults);
    let (corrupt, hook, jitter) = (faults.clone(), faults.clone(), faults.clone());
    let patch: Patch = Box::new(move |rel, mut body| {
        for (key, at) in corrupt.corrupt.borrow().iter() {
            if rel.contains(key.as_str()) && *at < body.len() {
                body[*at] ^= 0x5a;
            }
        }
        body
    });
    let server = fixture_files(BASE, Some(patch))
        .with_hook(move |s, req| Some(hook.answer(s, req)))
        .with_random(move || jitter.next());
    (server, faults)
}

impl Faults {
    fn next(&self) -> f64 {
        // xorshift64*: deterministic, so a failure reproduces.
        let mut x = self.seed.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.seed.set(x);
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn injected(&self) -> u64 {
        self.injected.borrow().values().sum()
    }

    fn fault_for(&self, req: &Request<'_>) -> Option<Fault> {
        if !req.url.contains("/data/") {
            return None; // the harness's expected values
        }
        if self.permanent.is_some() {
            return self.permanent;
        }
        let key = (req.url.to_string(), req.range.clone());
        let mut runs = self.in_a_row.borrow_mut();
        let (run, had_wrong) = runs.entry(key).or_default();
        if *run >= 3 || self.next() >= self.rate {
            *run = 0;
            return None;
        }
        let mut f = TRANSIENT[(self.next() * TRANSIENT.len() as f64) as usize];
        if f == Fault::WrongRange && (*had_wrong || req.range.is_none()) {
            f = Fault::Status500;
        }
        *had_wrong |= f == Fault::WrongRange;
        *run += 1;
        Some(f)
    }

    /// The server's answer to `req`, or the fault it meets.
    fn answer(&self, s: &ObjectServer, req: &Request<'_>) -> Result<Response> {
        let fault = self.fault_for(req);
        if let Some(f) = fault {
            *self.injected.borrow_mut().entry(f).or_default() += 1;
        }
        let network = |what: &str| Err(Error::new(ErrorCode::Network, format!("{}: {what}", req.url)));
        let mut r = match fault {
            Some(Fault::SlowDown) => {
                return Ok(Response { status: 503, retry_after: Some("1".into()), ..Default::default() })
            }
            Some(Fault::Status500) => return Ok(Response { status: 500, ..Default::default() }),
            Some(Fault::Reset) => return network("connection reset"),
            Some(Fault::Stall) => {
                let ms = req.stall_ms.expect("every request has a stall time");
                s.clock.set(s.clock.get() + ms);
                return network(&format!("stalled: nothing for {ms} ms"));
            }
            _ => s.answer(req),
        };
        match fault {
            Some(Fault::Truncated) if !r.body.is_empty() => {
                let n = r.body.len() / 2;
                r.body.truncate(n);
            }
            Some(Fault::WrongRange) if r.status == 206 => {
                let (a, b, total) = answered_range(&r).unwrap();
                if b + 1 < total.unwrap() {
                    // Other bytes: one byte later, with a Content-Range saying so.
                    let later = Some(format!("bytes={}-{}", a + 1, b + 1));
                    r = s.answer(&Request { range: later, ..req.clone() });
                } else {
                    r.body.pop();
                    r.content_length = None; // a short 206
                }
            }
            _ => {}
        }
        Ok(r)
    }
}

fn manifest() -> Vec<Case> {
    block_on(all_cases(|name| async move { std::fs::read(root().join(&name)).unwrap() })).0
}

fn open_array(c: &ObjectServer, path: &str, config: Config) -> Result<Array> {
    match block_on(open(c, &format!("{BASE}/data/{path}"), OpenOptions { config, ..Default::default() }))? {
        Opened::Array(a) => Ok(*a),
        Opened::Group(_) => panic!("{path} is a group"),
    }
}

#[test]
fn every_fixture_reads_through_20_percent_transient_faults() {
    let cases = manifest();
    assert!(cases.len() >= 30);
    let (c, injected) = transient(0.2, 0x5eed);
    let failures: Vec<String> = cases.iter().filter_map(|k| block_on(check_case(&c, BASE, k)).err()).collect();
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    let faults = injected.injected.borrow().clone();
    for f in TRANSIENT {
        assert!(faults.get(&f).copied().unwrap_or(0) >= 5, "too few {f:?} injected: {faults:?}");
    }
    let share = injected.injected() as f64 / c.requests() as f64;
    assert!(share > 0.1, "{} faults in {} requests", injected.injected(), c.requests());
}

#[test]
fn fixtures_read_under_faults_from_a_server_that_ignores_range() {
    let cases: Vec<Case> = manifest().into_iter().filter(|k| k.shard_shape.is_some()).collect();
    let (c, injected) = transient(0.2, 7);
    c.serve.set(Serve::IgnoreRange);
    for k in &cases {
        block_on(check_case(&c, BASE, k)).unwrap();
    }
    assert!(injected.injected() > 10);
}

#[test]
fn retries_are_counted_and_the_data_is_the_writers() {
    let (c, injected) = transient(0.3, 42);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    let (case, expected) = writers_case("zp_shard_gzip_end");
    for x in 0..4 {
        for y in 0..4 {
            let got = block_on(read_chunk(&a, &c, &[x, y])).unwrap();
            writers_chunk(&case, &a, &expected, &[x, y], &got).unwrap();
        }
    }
    assert!(a.stats().store.retries > 0);
    assert_eq!(a.stats().store.retries, injected.injected(), "one retry per fault");
}

/// Every permanent fault ends in a typed error, within the attempts and the time budget.
#[test]
fn permanent_faults_are_typed_errors_within_the_budget() {
    let retry = Retry { attempts: 6, base_ms: 100.0, max_ms: 2_000.0, stall_ms: 3_000.0, budget_ms: 10_000.0 };
    let (good, _) = transient(0.0, 1);
    for fault in TRANSIENT {
        let (c, _) = permanent(fault);
        let config = Config { retry, ..Config::default() };
        // At open: the metadata read.
        let opened = open_array(&c, "zp/shard_gzip_end", config.clone());
        if fault == Fault::WrongRange {
            assert!(opened.is_ok(), "a whole document has no range to get wrong");
        }
        let e = opened.err().unwrap_or_else(|| Error::new(ErrorCode::CorruptShard, "zarr.json"));
        let code = match fault {
            Fault::SlowDown | Fault::Status500 => ErrorCode::HttpError,
            Fault::WrongRange => ErrorCode::CorruptShard,
            _ => ErrorCode::Network,
        };
        if fault != Fault::WrongRange {
            assert_eq!(e.code, code, "{fault:?}: {e}");
            assert!(e.message.contains("zarr.json"), "names the URL: {e}");
        }
        let tries = c.requests();
        assert!(fault == Fault::WrongRange || (2..=6).contains(&tries), "{fault:?}: {tries} tries at open");
        let last_start = c.clock.get() - if fault == Fault::Stall { retry.stall_ms } else { 0.0 };
        assert!(last_start <= retry.budget_ms, "{fault:?}: the last try began at {last_start} ms");
        // At a read: the index and the chunk.
        c.clock.set(0.0);
        c.reset();
        let a = open_array(&good, "zp/shard_gzip_end", config).unwrap();
        let e = block_on(read_chunk(&a, &c, &[0, 0])).unwrap_err();
        let code = if fault == Fault::Truncated { ErrorCode::Network } else { code };
        assert_eq!(e.code, code, "{fault:?}: {e}");
        assert!(e.message.contains("c/0/0"), "names the URL: {e}");
        assert!(c.clock.get() <= retry.budget_ms + retry.stall_ms + retry.max_ms, "{fault:?}");
    }
}

#[test]
fn a_silent_server_is_given_up_by_the_budget() {
    let retry = Retry { attempts: 100, base_ms: 200.0, max_ms: 5_000.0, stall_ms: 10_000.0, budget_ms: 30_000.0 };
    let (c, _) = permanent(Fault::Stall);
    let e = open_array(&c, "zp/shard_gzip_end", Config { retry, ..Config::default() }).err().unwrap();
    assert_eq!(e.code, ErrorCode::Network, "{e}");
    assert!(e.message.contains("stalled"), "says why: {e}");
    // Tries start every ~10 s (the stall) plus backoff: four fit in 30 s; none starts later.
    assert!((3..=4).contains(&c.requests()), "{} tries", c.requests());
    assert!(c.clock.get() <= 30_000.0 + 10_000.0, "settled at {} ms", c.clock.get());
}

#[test]
fn retry_after_is_a_floor_on_the_backoff() {
    let retry = Retry { attempts: 3, base_ms: 1.0, max_ms: 1.0, stall_ms: 1_000.0, budget_ms: 60_000.0 };
    let (c, _) = permanent(Fault::SlowDown);
    open_array(&c, "zp/shard_gzip_end", Config { retry, ..Config::default() }).err().unwrap();
    assert_eq!(c.requests(), 3);
    assert_eq!(c.clock.get(), 2_000.0, "two waits of Retry-After: 1");
}

#[test]
fn retry_false_is_one_try() {
    let retry = Retry { attempts: 1, ..Retry::default() };
    for fault in [Fault::SlowDown, Fault::Reset, Fault::Truncated] {
        let (c, _) = permanent(fault);
        open_array(&c, "zp/shard_gzip_end", Config { retry, ..Config::default() }).err().unwrap();
        assert_eq!(c.requests(), 1, "{fault:?}");
    }
}

#[test]
fn client_errors_are_not_retried() {
    let (c, _) = transient(0.0, 1);
    let e = open_array(&c, "zp/no_such_array", Config::default()).err().unwrap();
    assert_eq!(e.code, ErrorCode::NotFound, "{e}");
    let asked = c.requests();
    // Nothing there, and 403 for it.
    let f = ObjectServer::new().serving(Serve::Forbid403);
    let e = block_on(open(&f, "mem://x/a", OpenOptions::default())).err().unwrap();
    assert_eq!(e.code, ErrorCode::HttpError, "{e}");
    assert_eq!(f.requests(), 1, "a 403 is not retried");
    // zarr.json, .zmetadata, .zarray, info, .zgroup; then the URL's first bytes (a store kind's
    // file without its extension: a TIFF), once.
    assert!(asked <= 6, "one request per metadata name and one of the first bytes, none repeated: {asked}");
    let sniffs = c.log().iter().filter(|l| l.url.ends_with("zp/no_such_array")).count();
    assert_eq!(sniffs, 1, "{:?}", c.log());
}

#[test]
fn a_wrong_range_is_asked_again_once_then_an_error() {
    let (c, _) = transient(0.0, 1);
    let a = open_array(&c, "zp/shard_gzip_end", Config::default()).unwrap();
    block_on(read_chunk(&a, &c, &[0, 0])).unwrap(); // the index
    let (c, _) = permanent(Fault::WrongRange);
    let e = block_on(read_chunk(&a, &c, &[0, 2])).unwrap_err();
    assert_eq!(e.code, ErrorCode::CorruptShard, "{e}");
    assert!(e.message.contains("twice"), "{e}");
    assert_eq!(c.requests(), 2, "asked twice, then an error — never data");
}

#[test]
fn checksum_mismatches_are_reported_not_retried_and_forgotten_when_healed() {
    let path = "zp/shard_gzip_end";
    let (case, expected) = writers_case("zp_shard_gzip_end");
    // A server sending one wrong byte in each shard's index (its last bytes).
    let (bad, faults) = transient(0.0, 1);
    let a = open_array(&bad, path, Config::default()).unwrap();
    let size = std::fs::metadata(root().join("data").join(path).join("c/0/0")).unwrap().len() as usize;
    faults.corrupt.borrow_mut().push(("/c/".into(), size - 6));
    let e = block_on(read_chunk(&a, &bad, &[0, 0])).unwrap_err();
    assert_eq!(e.code, ErrorCode::ChecksumMismatch, "{e}");
    assert_eq!(a.stats().store.retries, 0);
    // Healed: the same array reads the writer's values (nothing wrong was kept).
    faults.corrupt.borrow_mut().clear();
    let all = [Sel::All, Sel::All];
    let got = block_on(read_region(&a, &bad, &all)).unwrap();
    writers_region(&case, &a, &expected, &all, &got).unwrap();
}

#[test]
fn wrong_bytes_in_a_chunk_are_forgotten_when_healed() {
    let path = "zp/shard_gzip_end";
    let (case, expected) = writers_case("zp_shard_gzip_end");
    let all = [Sel::All, Sel::All];
    let (bad, faults) = transient(0.0, 1);
    bad.serve.set(Serve::IgnoreRange);
    let a = open_array(&bad, path, Config::default()).unwrap();
    // Wrong bytes in one object, downloaded whole (the server ignores Range) and cached: the
    // gzip magic of the first chunk stored in shard c/0/0 (its offset from the shard's index),
    // so that the read fails in one way only — not a gzip stream.
    let file = std::fs::read(root().join("data").join(path).join("c/0/0")).unwrap();
    let index = &file[file.len() - (16 * 16 + 4)..];
    let first = (0..16)
        .map(|i| u64::from_le_bytes(index[i * 16..i * 16 + 8].try_into().unwrap()))
        .filter(|&o| o != u64::MAX)
        .min()
        .unwrap() as usize;
    assert_eq!(file[first..first + 2], [0x1f, 0x8b], "a gzip stream at {first}");
    faults.corrupt.borrow_mut().extend((0..2).map(|i| ("/c/0/0".to_string(), first + i)));
    let e = block_on(read_region(&a, &bad, &all)).map(|_| "data");
    let e = e.expect_err("wrong bytes are an error, never data");
    assert_eq!(e.code, ErrorCode::CorruptChunk, "{e}");
    assert!(e.message.contains("not a gzip stream") && e.message.contains(&format!("{path}/c/0/0")), "{e}");
    faults.corrupt.borrow_mut().clear();
    let got = block_on(read_region(&a, &bad, &all)).unwrap();
    writers_region(&case, &a, &expected, &all, &got)
        .unwrap_or_else(|e| panic!("a whole object with wrong bytes is not served from the cache: {e}"));
}

#[test]
fn a_corrupt_index_entry_fails_its_chunk_only() {
    let path = "ts/shard_start_nocrc"; // 4×4 inner chunks per shard, the index first, no checksum
    let (case, expected) = writers_case("ts_shard_start_nocrc");
    let (bad, faults) = transient(0.0, 1);
    // The first entry's offset, byte 5: 2^40 bytes further, far past the object's end.
    faults.corrupt.borrow_mut().push(("/c/0/0".into(), 5));
    let b = open_array(&bad, path, Config::default()).unwrap();
    let e = block_on(read_chunk(&b, &bad, &[0, 0])).unwrap_err();
    assert_eq!(e.code, ErrorCode::CorruptShard, "{e}");
    assert!(e.message.contains("c/0/0"), "{e}");
    for y in 1..4 {
        let got = block_on(read_chunk(&b, &bad, &[0, y])).unwrap();
        writers_chunk(&case, &b, &expected, &[0, y], &got).unwrap_or_else(|e| panic!("chunk (0, {y}): {e}"));
    }
}

/// A server that ignores Range, over one synthetic array: `SHARDS` shards of `SHARD` bytes
/// (uint8, raw inner chunks of `INNER` bytes, the index at the end), made on the fly; each
/// request waits a turn of the executor, so that concurrent reads overlap.
fn ignorer() -> ObjectServer {
    let s = ObjectServer::with_source(|url| {
        let key = url.strip_prefix("mem://big/a/")?;
        if key == "zarr.json" {
            return Some(big_zarr_json());
        }
        let shard = key.strip_prefix("c/")?.parse::<u64>().ok().filter(|&s| s < SHARDS)?;
        Some(big_shards()[shard as usize].clone())
    })
    .serving(Serve::IgnoreRange);
    s.yields.set(1);
    s
}

const SHARD: u64 = 8 << 20;
const SHARDS: u64 = 16;
const INNER: u64 = 128 << 10;

fn value(i: u64) -> u8 {
    (i % 251) as u8 ^ (i >> 17) as u8
}

/// The shards' bytes (index at the end), made once: per byte in a debug build they cost more
/// than the reads under test.
fn big_shards() -> &'static [Vec<u8>] {
    static SHARD_BYTES: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    SHARD_BYTES.get_or_init(|| {
        (0..SHARDS)
            .map(|s| {
                let mut b: Vec<u8> = (s * SHARD..(s + 1) * SHARD).map(value).collect();
                for k in 0..SHARD / INNER {
                    b.extend_from_slice(&(k * INNER).to_le_bytes());
                    b.extend_from_slice(&INNER.to_le_bytes());
                }
                b
            })
            .collect()
    })
}

fn big_zarr_json() -> Vec<u8> {
    format!(
        r#"{{"zarr_format":3,"node_type":"array","shape":[{}],"data_type":"uint8",
                "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":[{SHARD}]}}}},
                "chunk_key_encoding":{{"name":"default"}},"fill_value":0,
                "codecs":[{{"name":"sharding_indexed","configuration":{{"chunk_shape":[{INNER}],
                "codecs":[{{"name":"bytes"}}],"index_codecs":[{{"name":"bytes","configuration":{{"endian":"little"}}}}]}}}}]}}"#,
        SHARD * SHARDS
    )
    .into_bytes()
}

/// Issue 14: with objects far larger than `cacheBytes`, every chunk used to download its whole
/// shard again (138.5 GB moved for a 1 GiB array). Scaled down 8×: 128 MiB, 8 MiB shards;
/// whatever the cache (smaller than a shard, one shard, the default, the whole array).
/// One test per cache size, so that the test threads share them.
#[test]
fn a_server_that_ignores_range_sends_each_shard_once_with_a_cache_smaller_than_a_shard() {
    reads_each_shard_once(Config { cache_bytes: 1 << 20, ..Config::default() });
}

#[test]
fn a_server_that_ignores_range_sends_each_shard_once_with_a_cache_of_one_shard() {
    reads_each_shard_once(Config { cache_bytes: SHARD as usize, ..Config::default() });
}

#[test]
fn a_server_that_ignores_range_sends_each_shard_once_with_the_default_cache() {
    reads_each_shard_once(Config { cache_bytes: 64 << 20, ..Config::default() });
}

#[test]
fn a_server_that_ignores_range_sends_each_shard_once_with_a_cache_of_the_whole_array() {
    reads_each_shard_once(Config { cache_bytes: 256 << 20, ..Config::default() });
}

fn reads_each_shard_once(config: Config) {
    let total = SHARD * SHARDS;
    let index = SHARD / INNER * 16;
    let open_big = |c: &ObjectServer| match block_on(open(
        c,
        "mem://big/a",
        OpenOptions { config: config.clone(), ..Default::default() },
    )) {
        Ok(Opened::Array(a)) => *a,
        _ => panic!("open"),
    };
    let cache = config.cache_bytes;
    // 1. One region per shard (all of it but its last chunk: ranged reads), one after another.
    let c = ignorer();
    let a = open_big(&c);
    for s in 0..SHARDS {
        let r = block_on(read_region(&a, &c, &[Sel::Range(s * SHARD, (s + 1) * SHARD - INNER)])).unwrap();
        assert!(r.bytes.iter().enumerate().step_by(4093).all(|(i, &v)| v == value(s * SHARD + i as u64)));
    }
    assert!(a.range_ignored());
    assert_eq!(c.requests() as u64, 1 + SHARDS, "one download per shard (cache {cache})");
    assert!(c.sent() <= total + total / 10, "{} bytes moved for {total} (cache {cache})", c.sent());
    // 2. Every chunk at once, each its own read (a viewer's getChunk calls).
    let c = ignorer();
    let a = open_big(&c);
    let coords: Vec<[u64; 1]> = (0..total / INNER).map(|k| [k]).collect();
    let reads = coords.iter().map(|k| read_chunk(&a, &c, k));
    let chunks = block_on(futures_util::future::join_all(reads));
    for (k, got) in chunks.into_iter().enumerate() {
        let got = got.unwrap();
        assert_eq!(got.bytes[7], value(k as u64 * INNER + 7));
    }
    assert_eq!(c.requests() as u64, 1 + SHARDS, "one download per shard (cache {cache})");
    assert_eq!(c.sent() - c.sent() % (SHARD + index), SHARDS * (SHARD + index));
    // 3. Every chunk as its own read, one after another (a reader that awaits each): the last
    // whole object is kept whatever the cache, so each shard still crosses the wire once.
    let c = ignorer();
    let a = open_big(&c);
    for k in 0..total / INNER {
        let got = block_on(read_chunk(&a, &c, &[k])).unwrap();
        assert_eq!(got.bytes[9], value(k * INNER + 9));
    }
    assert_eq!(c.requests() as u64, 1 + SHARDS, "one download per shard, reads one at a time (cache {cache})");
}

/// A server that ignores Range answers a small ranged read with the whole object: above
/// `maxDecodedBytes` that is `TooLarge` naming the object, never a read without bound (which
/// used to be able to exhaust wasm32's memory).
#[test]
fn a_whole_object_answer_above_the_limit_is_too_large() {
    let c = ignorer();
    let config = Config { max_body: 4 << 20, merge_max: 1 << 20, ..Config::default() };
    let a = match block_on(open(&c, "mem://big/a", OpenOptions { config, ..Default::default() })) {
        Ok(Opened::Array(a)) => *a,
        _ => panic!("open"),
    };
    let e = block_on(read_chunk(&a, &c, &[3])).err().expect("an 8 MiB answer above a 4 MiB limit");
    assert_eq!(e.code, ErrorCode::TooLarge, "{e}");
    assert!(e.message.contains("mem://big/a/c/0") && e.message.contains("maxDecodedBytes"), "{e}");
}

/// A hostile server over one synthetic shard (64 raw inner chunks of `INNER` bytes, index at
/// the end): the index entries point anywhere up to 1 PiB with lengths up to 1 TiB, the object
/// claims 2 PiB, and every ranged request is answered with as many bytes as it asks for (and
/// `extra` more), its `Content-Range` naming them but not the object's size; no answer has a
/// `Content-Length`. Each request waits two turns of the executor, so that reads overlap (the
/// server records the most bytes asked at once); the count is of the bytes of those answers.
fn hostile(extra: u64) -> (ObjectServer, Rc<Cell<u64>>) {
    let bytes = Rc::new(Cell::new(0));
    let moved = bytes.clone();
    let s = ObjectServer::new().with_hook(move |s, req| {
        if !req.url.ends_with("zarr.json") && req.range.is_none() {
            // The whole shard, when every chunk of it is wanted: refused, so ranges follow.
            return Some(Ok(Response { status: 403, ..Default::default() }));
        }
        let mut r = s.answer(req);
        r.content_length = None;
        if let (Some(_), Some((a, b, _))) = (req.range.as_deref().and_then(span), answered_range(&r)) {
            r.content_range = Some(format!("bytes {a}-{b}/*"));
            r.body.resize(r.body.len() + extra as usize, 7);
            moved.set(moved.get() + r.body.len() as u64);
        }
        Some(Ok(r))
    });
    s.put("mem://hostile/a/zarr.json", hostile_zarr_json());
    // 2 PiB long, so that entries up to there look valid: sevens, then the index.
    let (index, total) = (hostile_index(), 1u64 << 51);
    let at = total - index.len() as u64;
    s.put_made("mem://hostile/a/c/0", total, move |a, b| {
        let mut body = vec![7u8; (b - a) as usize];
        if b > at {
            let from = a.max(at);
            body[(from - a) as usize..].copy_from_slice(&index[(from - at) as usize..(b - at) as usize]);
        }
        body
    });
    s.yields.set(2);
    (s, bytes)
}

const HOSTILE_CHUNKS: u64 = 64;

fn hostile_index() -> Vec<u8> {
    let mut b = Vec::new();
    for k in 0..HOSTILE_CHUNKS {
        // A few honest-looking entries, the rest far away and huge.
        let (offset, len) = match k % 4 {
            0 => (k * INNER, INNER),
            1 => ((1u64 << 50) - k * (1 << 30), 1u64 << 40),
            2 => (k << 44, 3 << 20),
            _ => (k * 977, 40 << 20),
        };
        b.extend_from_slice(&offset.to_le_bytes());
        b.extend_from_slice(&len.to_le_bytes());
    }
    b
}

fn hostile_zarr_json() -> Vec<u8> {
    format!(
        r#"{{"zarr_format":3,"node_type":"array","shape":[{}],"data_type":"uint8",
                "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":[{}]}}}},
                "chunk_key_encoding":{{"name":"default"}},"fill_value":0,
                "codecs":[{{"name":"sharding_indexed","configuration":{{"chunk_shape":[{INNER}],
                "codecs":[{{"name":"bytes"}}],"index_codecs":[{{"name":"bytes","configuration":{{"endian":"little"}}}}]}}}}]}}"#,
        HOSTILE_CHUNKS * INNER,
        HOSTILE_CHUNKS * INNER
    )
    .into_bytes()
}

/// Issue 24: an index pointing up to 1 PiB away with terabyte lengths, from a server that
/// sends whatever is asked (and never the object's size). No span above `maxDecodedBytes` is
/// asked for; the bytes asked for at once stay within it; every bad chunk is a typed error
/// naming the shard, and the honest-looking ones read.
#[test]
fn a_hostile_index_asks_for_no_more_than_the_limits_allow() {
    let max_body = 64u64 << 20;
    let (c, bytes) = hostile(0);
    let config = Config { max_body, ..Config::default() };
    let a = match block_on(open(&c, "mem://hostile/a", OpenOptions { config, max_decoded: max_body as usize, ..Default::default() })) {
        Ok(Opened::Array(a)) => *a,
        _ => panic!("open"),
    };
    let coords: Vec<[u64; 1]> = (0..HOSTILE_CHUNKS).map(|k| [k]).collect();
    let reads = coords.iter().map(|k| read_chunk(&a, &c, k));
    let got = block_on(futures_util::future::join_all(reads));
    for (k, r) in got.iter().enumerate() {
        match (k % 4, r) {
            (0, Ok(chunk)) => assert_eq!(chunk.bytes.len() as u64, INNER),
            (1, Err(e)) => assert_eq!(e.code, ErrorCode::TooLarge, "{e}"),
            (2 | 3, Err(e)) => assert_eq!(e.code, ErrorCode::CorruptChunk, "chunk {k}: {e}"),
            (_, r) => panic!("chunk {k}: {:?}", r.as_ref().map(|c| c.bytes.len())),
        }
        if let Err(e) = r {
            assert!(e.message.contains("mem://hostile/a/c/0"), "{e}");
        }
    }
    let largest_ask = c.log().iter().filter_map(Logged::span).map(|(a, b)| b - a + 1).max().unwrap_or(0);
    assert!(largest_ask <= max_body, "asked for {largest_ask} bytes at once");
    assert!(c.peak_asked() <= max_body, "{} bytes in flight", c.peak_asked());
    // The span of every chunk that is not absurd, and nothing else.
    let honest = (0..HOSTILE_CHUNKS).filter(|k| k % 4 == 0).count() as u64 * INNER;
    let plausible = (0..HOSTILE_CHUNKS).filter(|k| k % 4 >= 2).map(|k| if k % 4 == 2 { 3u64 << 20 } else { 40 << 20 }).sum::<u64>();
    assert!(bytes.get() <= honest + plausible, "{} bytes moved", bytes.get());
}

/// A partial answer longer than asked is cut: a typed error naming the shard, never data.
#[test]
fn a_partial_answer_longer_than_asked_is_an_error() {
    let (c, _) = hostile(1);
    let a = match block_on(open(&c, "mem://hostile/a", OpenOptions::default())) {
        Ok(Opened::Array(a)) => *a,
        _ => panic!("open"),
    };
    let e = block_on(read_chunk(&a, &c, &[0])).unwrap_err();
    assert_eq!(e.code, ErrorCode::CorruptShard, "{e}");
    assert!(e.message.contains("mem://hostile/a/c/0"), "{e}");
}

/// A well-formed server but for its `Content-Range` on chunk reads (the suffix read of the
/// index is honest), each way it can be wrong, with a body shifted by one byte.
fn bad_range(how: &'static str) -> ObjectServer {
    fixture_files(BASE, None).with_hook(move |s, req| {
        let (a, b) = req.range.as_deref().and_then(span)?;
        let mut r = s.answer(req);
        let Some((_, _, Some(size))) = answered_range(&r) else { return Some(Ok(r)) };
        if b + 1 < size {
            r.body = s.answer(&Request { range: Some(format!("bytes={}-{}", a + 1, b + 1)), ..req.clone() }).body;
        }
        r.content_range = Some(match how {
            "malformed" => format!("bytes {a}-{b}"),
            "garbage" => "octets zero to many".into(),
            "other" => format!("bytes {}-{}/{size}", a + 1, b + 1),
            "end" => format!("bytes {a}-{}/{size}", b + 1),
            "short-total" => format!("bytes {a}-{b}/{b}"),
            _ => unreachable!(),
        });
        Some(Ok(r))
    })
}

/// Issue 24: a malformed visible `Content-Range`, or one naming other bytes, never yields data.
#[test]
fn a_content_range_that_disagrees_with_the_request_never_yields_data() {
    let path = "data/zp/shard_gzip_end";
    for how in ["malformed", "garbage", "other", "end", "short-total"] {
        let c = bad_range(how);
        let a = match block_on(open(&c, &format!("{BASE}/{path}"), OpenOptions::default())) {
            Ok(Opened::Array(a)) => *a,
            Err(e) => panic!("{how}: open: {e}"),
            _ => panic!("open"),
        };
        let (case, expected) = writers_case("zp_shard_gzip_end");
        let mut errors = 0;
        for y in 0..4 {
            for x in 0..4 {
                let before = c.requests();
                match block_on(read_chunk(&a, &c, &[y, x])) {
                    // Only chunks read without a request (absent: the fill value).
                    Ok(got) => {
                        assert_eq!(c.requests(), before, "{how}: ({y}, {x}) read from a disagreeing answer");
                        writers_chunk(&case, &a, &expected, &[y, x], &got).unwrap_or_else(|e| panic!("{how}: {e}"));
                    }
                    Err(e) => {
                        assert!(matches!(e.code, ErrorCode::CorruptShard), "{how}: {e}");
                        assert!(e.message.contains(path), "{how}: {e}");
                        errors += 1;
                    }
                }
            }
        }
        assert!(errors >= 4, "{how}: {errors} errors");
    }
}
