//! A mutation fuzzer of the core, run for a fixed budget (stable Rust has no cargo-fuzz here):
//! the arrays of `tests/fuzz/targets.json` (fixture cases, committed) are served from memory
//! with one file damaged per run — metadata parsers, shard indexes and every chunk codec see
//! bit flips, boundary integers written over length fields, truncations, insertions and
//! splices — and each run opens the array and reads all of it. Every run must end in data or a
//! typed error; a panic fails the test (and in wasm would have been a trap).
//!
//! `SHARDFETCH_FUZZ_RUNS` sets the number of runs (default 10000, in two halves of their own
//! seeds; the seeds are fixed, so a failure reproduces), `SHARDFETCH_FUZZ_SEED` other sequences.
#![cfg(not(target_arch = "wasm32"))]
mod common;

use common::{manifest_names, parse_manifest, Case};
use futures_executor::block_on;
use shardfetch::core::open::{open, Opened};
use shardfetch::core::read::plan::Sel;
use shardfetch::core::read::{read_chunk, read_region};
use shardfetch::core::transport::memory::ObjectServer;
use shardfetch::core::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Files served from memory under `mem://f/`, with byte ranges.
fn mem(files: BTreeMap<String, Vec<u8>>) -> ObjectServer {
    ObjectServer::with_source(move |url| files.get(url.strip_prefix("mem://f/")?).cloned())
}

fn files(dir: &Path, rel: &str, out: &mut BTreeMap<String, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = format!("{rel}{}", p.file_name().unwrap().to_string_lossy());
        if p.is_dir() {
            files(&p, &format!("{name}/"), out);
        } else {
            out.insert(name, std::fs::read(&p).unwrap());
        }
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Integers that break length and offset arithmetic.
const EDGES: [u64; 9] = [0, 1, 0x7f, 0xff, 0x7fff_ffff, 0xffff_ffff, 1 << 32, u64::MAX >> 1, u64::MAX];

fn mutate(b: &mut Vec<u8>, rng: &mut Rng) {
    for _ in 0..1 + rng.below(3) {
        let len = b.len();
        match rng.below(8) {
            0 | 1 if len > 0 => {
                let i = rng.below(len);
                b[i] ^= 1 << rng.below(8);
            }
            2 if len > 0 => {
                let i = rng.below(len);
                b[i] = [0, 0xff, 0x7f, 0x80][rng.below(4)];
            }
            3 if len >= 8 => {
                let (i, w) = (rng.below(len - 7), [1usize, 2, 4, 8][rng.below(4)]);
                let v = EDGES[rng.below(EDGES.len())].to_le_bytes();
                b[i..i + w].copy_from_slice(&v[..w]);
            }
            4 if len > 0 => b.truncate(rng.below(len)),
            5 => {
                let at = rng.below(len + 1);
                let junk: Vec<u8> = (0..1 + rng.below(64)).map(|_| rng.next() as u8).collect();
                b.splice(at..at, junk);
            }
            6 if len > 16 => {
                let (from, at) = (rng.below(len - 16), rng.below(len));
                let piece = b[from..from + 1 + rng.below(16)].to_vec();
                b.splice(at..at, piece);
            }
            _ if len > 0 => {
                let a = rng.below(len);
                let n = rng.below((len - a).min(64)) + 1;
                b.drain(a..a + n);
            }
            _ => b.push(rng.next() as u8),
        }
    }
}

fn targets() -> Vec<Case> {
    let t: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root().join("fuzz/targets.json")).unwrap()).unwrap();
    let names: Vec<&str> = t["cases"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let fx = root().join("fixtures");
    let mut all = Vec::new();
    for m in manifest_names(&std::fs::read(fx.join("manifests.json")).unwrap()) {
        all.extend(parse_manifest(&std::fs::read(fx.join(m)).unwrap()).0);
    }
    let cases: Vec<Case> = all.into_iter().filter(|c| names.contains(&c.name.as_str())).collect();
    assert_eq!(cases.len(), names.len(), "every fuzz target is a fixture case");
    cases
}

// The runs in two halves, each its own test (and seed), so that the test threads share them.
#[test]
fn damaged_arrays_give_data_or_typed_errors() {
    fuzz(0);
}

#[test]
fn damaged_arrays_give_data_or_typed_errors_second_half() {
    fuzz(1);
}

fn fuzz(half: u64) {
    let runs: usize = std::env::var("SHARDFETCH_FUZZ_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(10000) / 2;
    let seed: u64 = std::env::var("SHARDFETCH_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_f022);
    // Apart by two: the generator takes `seed | 1`.
    let seed = seed.wrapping_add(2 * half);
    let cases = targets();
    let stores: Vec<BTreeMap<String, Vec<u8>>> = cases
        .iter()
        .map(|c| {
            let mut m = BTreeMap::new();
            files(&root().join("fixtures/data").join(&c.path), "", &mut m);
            m
        })
        .collect();
    let mut rng = Rng(seed | 1);
    let (mut ok, mut errors) = (0usize, BTreeMap::<&'static str, usize>::new());
    for run in 0..runs {
        // Both halves visit every target.
        let k = (run + half as usize) % cases.len();
        let case = &cases[k];
        let mut store = stores[k].clone();
        let keys: Vec<String> = store.keys().cloned().collect();
        // A metadata document one run in five; chunk and shard bytes otherwise.
        let meta: Vec<&String> =
            keys.iter().filter(|f| f.ends_with(".json") || f.contains(".z") || f.ends_with("info")).collect();
        let data: Vec<&String> = keys.iter().filter(|f| !meta.contains(f)).collect();
        let pool = if run % 5 == 0 || data.is_empty() { &meta } else { &data };
        let victim = pool[rng.below(pool.len())].clone();
        mutate(store.get_mut(&victim).unwrap(), &mut rng);
        let c = mem(store);
        let what = format!("run {run} ({} with {victim} damaged, seed {seed:#x})", case.name);
        let mut note = |r: Result<()>| match r {
            Ok(()) => ok += 1,
            Err(e) => *errors.entry(e.code.as_str()).or_default() += 1,
        };
        match block_on(open(&c, "mem://f", case.options())) {
            Ok(Opened::Array(a)) => {
                let all = vec![Sel::All; a.metadata().shape.len()];
                note(block_on(read_region(&a, &c, &all)).map(|r| {
                    let n: u64 = r.shape.iter().product();
                    assert!(r.bytes.len() as u64 >= n * a.dtype().size() as u64, "{what}: a short region");
                }));
                let first = vec![0; a.grid().ndim()];
                if a.grid().contains(&first) {
                    note(block_on(read_chunk(&a, &c, &first)).map(|_| ()));
                }
            }
            Ok(Opened::Group(_)) => ok += 1,
            Err(e) => *errors.entry(e.code.as_str()).or_default() += 1,
        }
    }
    eprintln!("fuzz: {runs} runs over {} arrays: {ok} reads gave data, typed errors {errors:?}", cases.len());
    assert!(errors.values().sum::<usize>() > runs / 10, "damage should mostly be detected");
}
